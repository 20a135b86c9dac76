//! The classroom page in a real browser: Debian's Chromium, headless, driven through its own
//! ChromeDriver (WebDriver over loopback; nothing is downloaded, and Chromium's background
//! connections are switched off). The page loads and runs the duplicate curve; the request-loss
//! slider is moved with the keyboard; the curve is redrawn, and its figures follow
//! E[duplicates] = b/(1 − a − b) for the new a; a refused value shows the located error.
//!
//! Without Chromium and ChromeDriver (Debian's paths, or `RETRYSIM_CHROMIUM` and
//! `RETRYSIM_CHROMEDRIVER`) the test says it is skipped and passes, so `cargo test` runs anywhere; `.ci/run` installs both and sets `RETRYSIM_BROWSER_TEST=require`, which makes
//! their absence a failure.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Served;
use super::http::{request, try_request};

/// Debian's paths, unless `RETRYSIM_CHROMIUM` or `RETRYSIM_CHROMEDRIVER` names another.
fn program(variable: &str, debian: &str) -> String {
    std::env::var(variable).unwrap_or_else(|_| debian.to_string())
}

fn chromium() -> String {
    program("RETRYSIM_CHROMIUM", "/usr/bin/chromium")
}

fn chromedriver() -> String {
    program("RETRYSIM_CHROMEDRIVER", "/usr/bin/chromedriver")
}

/// A WebDriver session on a ChromeDriver of our own, both ended when dropped.
struct Browser {
    _driver: Driver,
    base: String,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn start() -> Browser {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        // Held from here on, so a failure before the session stops the driver too.
        let driver = Driver(
            Command::new(chromedriver())
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver starts"),
        );
        let base = format!("http://127.0.0.1:{port}");
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "chromedriver never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().unwrap();
        let capabilities = json!({ "capabilities": { "alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium(),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--disable-quic",
                    "--window-size=1280,1000",
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        }}});
        let (status, text) = request(
            "POST",
            &format!("{base}/session"),
            Some(&capabilities.to_string()),
        );
        assert_eq!(status, 200, "no session: {text}");
        let answer: Value = serde_json::from_str(&text).unwrap();
        let session = answer["value"]["sessionId"].as_str().unwrap().to_string();
        Browser {
            _driver: driver,
            base,
            session,
            _profile: profile,
        }
    }

    /// A WebDriver command on the session; its `value`.
    fn command(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}/session/{}{path}", self.base, self.session);
        let body = (method == "POST").then(|| body.to_string());
        let (status, text) = request(method, &url, body.as_deref());
        assert_eq!(status, 200, "{method} {path}: {text}");
        serde_json::from_str::<Value>(&text).unwrap()["value"].clone()
    }

    fn go(&self, url: &str) {
        self.command("POST", "/url", json!({ "url": url }));
    }

    /// Runs `script` in the page (its `return` value).
    fn eval(&self, script: &str) -> Value {
        self.command(
            "POST",
            "/execute/sync",
            json!({ "script": script, "args": [] }),
        )
    }

    fn element(&self, css: &str) -> String {
        let found = self.command(
            "POST",
            "/element",
            json!({ "using": "css selector", "value": css }),
        );
        found
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap()
            .as_str()
            .unwrap()
            .to_string()
    }

    /// Types `keys` into the element, as a reader's keyboard would.
    fn keys(&self, element: &str, keys: &str) {
        self.command(
            "POST",
            &format!("/element/{element}/value"),
            json!({ "text": keys }),
        );
    }

    /// Waits for `script` to return true: the page's own state, never a fixed sleep.
    fn wait_for(&self, script: &str, what: &str) {
        let started = Instant::now();
        while self.eval(script) != json!(true) {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "timed out waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Nothing here may panic: the driver is stopped whatever the session's end says.
        let _ = try_request(
            "DELETE",
            &format!("{}/session/{}", self.base, self.session),
            None,
        );
    }
}

/// The ChromeDriver process, stopped when dropped: on every path, a failed assertion included.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the browser is here; if not, whether the run requires it.
fn available() -> bool {
    let (browser, driver) = (chromium(), chromedriver());
    let here = Path::new(&browser).exists() && Path::new(&driver).exists();
    if !here {
        assert!(
            std::env::var("RETRYSIM_BROWSER_TEST").as_deref() != Ok("require"),
            "RETRYSIM_BROWSER_TEST=require, but {browser} or {driver} is missing \
             (apt-get install chromium chromium-driver)"
        );
        eprintln!(
            "skipped: the browser test needs {browser} and {driver} \
             (apt-get install chromium chromium-driver)"
        );
    }
    here
}

/// The no-key rows of a printed duplicate-curve table, its first (the cost table follows the
/// verdict's note): (b, duplicates, half-width).
fn no_key_duplicates(table: &str) -> Vec<(f64, f64, f64)> {
    table
        .lines()
        .take_while(|line| !line.starts_with("verdict:"))
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            // reply_loss  no-key  attempts ± hw  theory  duplicates ± hw  theory …
            (words.get(1) == Some(&"no-key") && words.len() > 9).then(|| {
                let n = |i: usize| words[i].parse::<f64>().unwrap();
                (n(0), n(6), n(8))
            })
        })
        .collect()
}

/// Each measured point against b/(1 − a − b): inside a 99.9 % interval, which is the printed
/// 95 % half-width (Student t, 4 df: 2.776) scaled to t = 8.610, so six points all pass by chance
/// with probability 0.994 if the model is right; and the half-width is no wider than 5 % of 1.
fn follows_theory(points: &[(f64, f64, f64)], a: f64) {
    assert_eq!(points.len(), 6, "{points:?}");
    for &(b, measured, half) in points {
        let theory = b / (1.0 - a - b);
        let bound = half * 8.610 / 2.776;
        assert!(
            (measured - theory).abs() <= bound,
            "a = {a}, b = {b}: {measured} ± {half} vs {theory}"
        );
        assert!(
            half <= 0.05 * (1.0 + theory),
            "a = {a}, b = {b}: ± {half} is too wide to tell"
        );
    }
}

#[test]
fn the_page_loads_a_slider_moves_and_the_duplicate_curve_follows_the_theory() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    let browser = Browser::start();
    browser.go(&format!("{}x/duplicate-curve", served.url));
    let runs = |n: u32| format!("return document.getElementById('result').dataset.runs === '{n}'");
    browser.wait_for(&runs(1), "the first run");
    // At a projector's 1280 px the page, charts and printed table included, needs no
    // horizontal scroll: the table scrolls inside its own box.
    let widths = browser.eval(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]",
    );
    let (scroll, client) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
    assert!(
        client <= 1280 && scroll <= client,
        "{scroll} px wide in a {client} px window"
    );
    // And at 1920 × 1080.
    browser.command(
        "POST",
        "/window/rect",
        json!({ "width": 1920, "height": 1080 }),
    );
    let widths = browser.eval(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]",
    );
    let (scroll, client) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
    assert!(
        client > 1280 && scroll <= client,
        "{scroll} px wide in a {client} px window"
    );
    let table = |b: &Browser| b.eval("return document.getElementById('table').textContent");
    let curve =
        "return document.querySelector('figure[data-chart=\"duplicate-curve\"] svg').outerHTML";
    let before = no_key_duplicates(table(&browser).as_str().unwrap());
    follows_theory(&before, 0.1);
    let first_curve = browser.eval(curve);

    // The request-loss slider moved from 0.1 to 0.3 with the arrow key, 20 steps of 0.01.
    let slider = browser.element("input[data-path=\"tool.charge.request_loss\"]");
    browser.keys(&slider, &"\u{E014}".repeat(20));
    let shown = browser.eval("return document.querySelector('input[data-path=\"tool.charge.request_loss\"] + output').textContent");
    assert_eq!(shown, json!("0.3"));
    browser.wait_for(
        "return document.getElementById('status').textContent.includes('tool.charge.request_loss=0.3')",
        "the run with a = 0.3",
    );
    let after = no_key_duplicates(table(&browser).as_str().unwrap());
    follows_theory(&after, 0.3);
    // More request loss, more attempts per intent: every point with b > 0 rises.
    for (b, a) in before.iter().zip(&after).filter(|(b, _)| b.0 > 0.0) {
        assert!(a.1 > b.1, "{b:?} → {a:?}");
    }
    assert_ne!(
        browser.eval(curve),
        first_curve,
        "the duplicate curve was redrawn"
    );

    // A value the config cannot take: the command line's located error, on the page.
    let tasks = browser.element("input[data-path=\"workload.tasks\"]");
    browser.command("POST", &format!("/element/{tasks}/clear"), json!({}));
    browser.keys(&tasks, "0");
    browser.wait_for(
        "return !document.getElementById('error').hidden",
        "the error",
    );
    let error = browser.eval("return document.getElementById('error').textContent");
    let error = error.as_str().unwrap();
    assert!(
        error.contains("workload.tasks") && error.contains("allowed"),
        "{error}"
    );
    // Plain words first — what is wrong and what is allowed — the located detail folded below.
    let plain = browser.eval("return document.querySelector('#error p.plain').textContent");
    let plain = plain.as_str().unwrap();
    assert!(
        plain.starts_with("0 tasks run nothing") && plain.contains("allowed"),
        "{plain}"
    );
    let folded = browser.eval("return document.querySelector('#error details').open");
    assert_eq!(folded, json!(false));
    let detail = browser.eval("return document.querySelector('#error details pre').textContent");
    assert!(detail.as_str().unwrap().contains("^"), "{detail}");
}

/// Every slider on a page runs at its start, its middle and its end, the other controls at their
/// start: a slider's range offers only values the config takes (a value it refuses would show
/// the error box and no new run). Returns the values tried, as `path=value`.
fn every_slider_runs(browser: &Browser) -> Vec<String> {
    let sliders = browser.eval(
        "return [...document.querySelectorAll('input[type=range]')].map(e => e.dataset.path)",
    );
    let mut tried = Vec::new();
    for path in sliders.as_array().unwrap() {
        let path = path.as_str().unwrap();
        for place in ["start", "middle", "end"] {
            // Every control back at its start without a run, then this slider moved as a
            // reader moves it: one input event.
            let set = browser.eval(&format!(
                "const form = document.querySelector('form');
                 for (const e of form.querySelectorAll('[data-start]')) {{ e.value = e.dataset.start; }}
                 const e = form.querySelector('input[data-path=\"{path}\"]');
                 const [min, max, step] = [Number(e.min), Number(e.max), Number(e.step)];
                 const steps = Math.round((max - min) / step);
                 e.value = {{ start: e.dataset.start, middle: String(min + Math.round(steps / 2) * step),
                              end: String(max) }}['{place}'];
                 const runs = document.getElementById('result').dataset.runs;
                 e.dispatchEvent(new Event('input', {{ bubbles: true }}));
                 return [e.value, runs];"
            ));
            let (value, runs) = (set[0].as_str().unwrap(), set[1].as_str().unwrap());
            browser.wait_for(
                &format!(
                    "return document.getElementById('result').dataset.runs !== '{runs}'
                        || !document.getElementById('error').hidden"
                ),
                &format!("the run with {path}={value}"),
            );
            let error = browser.eval(
                "const box = document.getElementById('error');
                 return box.hidden ? '' : box.textContent",
            );
            assert_eq!(error, json!(""), "{path}={value} ({place}) was refused");
            tried.push(format!("{path}={value}"));
        }
    }
    tried
}

/// On the pages of the first two chapters' experiments, every slider — losses, attempts — runs
/// at its start, middle and end.
#[test]
fn every_slider_value_the_page_offers_runs() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    let browser = Browser::start();
    let mut tried = Vec::new();
    for experiment in ["duplicate-curve", "closed-forms"] {
        browser.go(&format!("{}x/{experiment}", served.url));
        browser.wait_for(
            "return document.getElementById('result').dataset.runs === '1'",
            "the first run",
        );
        tried.extend(every_slider_runs(&browser));
    }
    // duplicate-curve's a (b is swept); closed-forms' a, b and three policies' attempts.
    assert_eq!(tried.len(), 3 * 6, "{tried:?}");
    for end in [
        "tool.charge.request_loss=0.49",
        "tool.charge.request_loss=0.79",
        "tool.charge.reply_loss=0.89",
        "policy.reliable.max_attempts=10",
    ] {
        assert!(tried.iter().any(|t| t == end), "{end} not in {tried:?}");
    }
}
