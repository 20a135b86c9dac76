// retrysim serve: each change to a control asks the server for a fresh run and draws what
// comes back. Only the latest answer is drawn; an older one still on its way is dropped.
"use strict";

const form = document.getElementById("controls");
const result = document.getElementById("result");
const statusLine = document.getElementById("status");
const errorBox = document.getElementById("error");
const charts = document.getElementById("charts");
const table = document.getElementById("table");
const inputs = Array.from(form.querySelectorAll("[data-path]"));

let asked = 0;
let timer = null;
let inFlight = null;

// A value the config writes needs no flag; numbers are compared as numbers (0 is 0.0).
function same(a, b) {
  const x = Number(a);
  const y = Number(b);
  return a.trim() === b.trim() || (a.trim() !== "" && !Number.isNaN(x) && !Number.isNaN(y) && x === y);
}

function changes() {
  return inputs
    .filter((input) => !same(input.value, input.dataset.written))
    .map((input) => input.dataset.path + "=" + input.value.trim());
}

function showValue(input) {
  const shown = input.nextElementSibling;
  if (shown && shown.tagName === "OUTPUT") {
    shown.textContent = input.value;
  }
}

async function run() {
  const mine = ++asked;
  if (inFlight) {
    inFlight.abort();
  }
  inFlight = new AbortController();
  const sets = changes();
  statusLine.textContent = "Running…";
  result.classList.add("running");
  let answer;
  try {
    const response = await fetch(form.dataset.run, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ sets }),
      signal: inFlight.signal,
    });
    answer = await response.json();
  } catch (e) {
    if (mine === asked) {
      statusLine.textContent = "The server did not answer: is retrysim serve still running?";
      result.classList.remove("running");
    }
    return;
  }
  if (mine !== asked) {
    return;
  }
  result.classList.remove("running");
  if (answer.error) {
    showError(answer.error);
    result.classList.add("stale");
    statusLine.textContent = "Not run: the server refused a value (below). The charts are the last run's.";
    return;
  }
  errorBox.hidden = true;
  result.classList.remove("stale");
  charts.replaceChildren(
    ...answer.charts.map((chart) => {
      const figure = document.createElement("figure");
      figure.className = "chart";
      figure.dataset.chart = chart.name;
      figure.innerHTML = chart.svg;
      // Drawn at a fixed size; a view box lets it shrink to the column instead of overflowing.
      const svg = figure.querySelector("svg");
      if (svg) {
        if (!svg.hasAttribute("viewBox")) {
          svg.setAttribute("viewBox", `0 0 ${svg.getAttribute("width")} ${svg.getAttribute("height")}`);
        }
        svg.removeAttribute("width");
        svg.removeAttribute("height");
      }
      return figure;
    }),
  );
  table.textContent = answer.table;
  const flags = sets.length ? sets.map((s) => "--set " + s).join(" ") : "the config as written";
  statusLine.textContent = `Ran ${answer.name} in ${answer.seconds.toFixed(2)} s: ${flags}`;
  result.dataset.runs = String(Number(result.dataset.runs) + 1);
}

function soon() {
  clearTimeout(timer);
  timer = setTimeout(run, 150);
}

form.addEventListener("input", (event) => {
  showValue(event.target);
  soon();
});
form.addEventListener("submit", (event) => event.preventDefault());
document.getElementById("restart").addEventListener("click", () => {
  for (const input of inputs) {
    input.value = input.dataset.start;
    showValue(input);
  }
  soon();
});

run();

// An error in plain words first — what is wrong, the guess, what is allowed — and the located
// detail (file, line, column, the line with its marks) folded below it.
function showError(text) {
  const lines = text.split("\n");
  const first = lines[0].replace(/^error: /, "");
  // "<where>:<line>:<column>: <key>: <message>": the message follows the key.
  const parts = first.split(": ");
  const located = /:\d+:\d+$/.test(parts[0]) && parts.length > 2;
  const message = located ? parts.slice(2).join(": ") : first;
  const hints = lines
    .map((line) => line.trim())
    .filter((line) => line.startsWith("= "))
    .map((line) => line.slice(2).replace(/^allowed: /, "allowed: "));
  const plain = document.createElement("p");
  plain.className = "plain";
  plain.textContent = [message].concat(hints).join(" — ");
  const details = document.createElement("details");
  const summary = document.createElement("summary");
  summary.textContent = located ? `Where: ${parts[0]}, at ${parts[1]}` : "The whole message";
  const full = document.createElement("pre");
  full.textContent = text;
  details.append(summary, full);
  errorBox.replaceChildren(plain, details);
  errorBox.hidden = false;
}
