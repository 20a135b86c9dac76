"""Real clients against `retrysim endpoint`, held to the simulation of their presets.

    python clients/check.py [--retrysim PATH]

For each experiment below: serves the config's tool on a free loopback port, runs each of its
clients (a script and the name it sends) one after another, stops the endpoint with Ctrl-C (SIGINT), and
simulates the same config. For each client it recomputes the attempts and duplicates per
operation from the endpoint's requests.csv — one row per request — and compares them with the
simulated configuration of the same name (summary.csv): the difference over its standard error,
the endpoint's from the spread of its operations, the simulation's from its 95 % interval across
replications (Student's t, replications − 1 degrees of freedom). Eighteen comparisons, each held
to |z| <= 2.99, the two-sided 5 % bound Bonferroni-corrected over the eighteen; a figure that is
zero in both (a keyed client's duplicates, a model's) must be zero. Exits 1 if any differs.
"""

import argparse
import csv
import math
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# (config, the endpoint's flags, operations, clients: each its command after the URL). The model
# runs at twice the config's pace: the counts do not depend on it, the time to run them does.
EXPERIMENTS = [
    ("endpoint-demo", ["--operation-from", "json:order_id"], 300, {
        "urllib3": ["charge.py"], "tenacity": ["charge.py"], "tenacity-keyed": ["charge.py"],
        "my-loop": ["loop.py"], "my-loop-keyed": ["loop.py", "--key"]}),
    ("endpoint-llm", ["--operation-from", "header:x-call-id", "--time-scale", "2"], 100, {
        "openai": ["chat.py"], "openai-stream": ["chat.py"],
        "anthropic": ["chat.py"], "anthropic-stream": ["chat.py"]}),
]
COMPARISONS = 2 * sum(len(e[3]) for e in EXPERIMENTS)
BOUND = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * COMPARISONS))
# t(0.975) for 19 degrees of freedom: the demo's 20 replications.
T_19 = 2.093


def serve_and_call(retrysim, experiment, out):
    name, flags, operations, clients = experiment
    endpoint = subprocess.Popen(
        [retrysim, "endpoint", str(ROOT / f"configs/{name}.toml"), "--port", "0",
         *flags, "--out", str(out)],
        stdout=subprocess.PIPE, text=True)
    url = endpoint.stdout.readline().strip()
    try:
        for client, (script, *flags) in clients.items():
            subprocess.run([sys.executable, str(ROOT / "clients" / script), url, client,
                            str(operations), *flags], check=True, timeout=120)
    finally:
        endpoint.send_signal(signal.SIGINT)
        endpoint.wait(timeout=30)
    if endpoint.returncode != 0:
        sys.exit(f"the endpoint exited with {endpoint.returncode}")
    return out / f"{name}.endpoint" / "requests.csv"


def measured(requests_csv, clients):
    """Per client: the mean and standard error of attempts and of duplicates per order."""
    per_order = defaultdict(lambda: [0, 0])
    for row in csv.DictReader(open(requests_csv)):
        counts = per_order[(row["client"], row["operation"])]
        counts[0] += 1
        counts[1] += row["committed"] == "true"
    out = {}
    for client in clients:
        orders = [c for (who, _), c in per_order.items() if who == client]
        figures = {}
        for name, values in [("attempts", [a for a, _ in orders]),
                             ("duplicates", [max(c - 1, 0) for _, c in orders])]:
            n = len(values)
            mean = sum(values) / n
            var = sum((v - mean) ** 2 for v in values) / (n - 1)
            figures[name] = (mean, math.sqrt(var / n))
        out[client] = figures
    return out


def simulated(retrysim, name, clients, out):
    subprocess.run([retrysim, "run", str(ROOT / f"configs/{name}.toml"), "--out",
                    str(out), "--quiet"], check=True)
    out_csv = out / name / "summary.csv"
    rows = {r["policy"]: r for r in csv.DictReader(open(out_csv))}
    return {client: {name: (float(rows[client][f"{name}_per_intent"]),
                            float(rows[client][f"{name}_ci95"] or 0) / T_19)
                     for name in ["attempts", "duplicates"]}
            for client in clients}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--retrysim", default=str(ROOT / "target/release/retrysim"))
    args = parser.parse_args()
    real, sim = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for experiment in EXPERIMENTS:
            name, clients = experiment[0], list(experiment[3])
            requests_csv = serve_and_call(args.retrysim, experiment, scratch / name)
            real.update(measured(requests_csv, clients))
            sim.update(simulated(args.retrysim, name, clients, scratch / f"{name}-sim"))
    failed = 0
    print(f"{'client':16} {'figure':11} {'endpoint':>16} {'simulated':>16} {'z':>6}")
    for client in real:
        for name in ["attempts", "duplicates"]:
            (r, r_se), (s, s_se) = real[client][name], sim[client][name]
            se = math.hypot(r_se, s_se)
            if se == 0:
                ok, z = r == s, float("nan") if r != s else 0.0
            else:
                z = (r - s) / se
                ok = abs(z) <= BOUND
            failed += not ok
            print(f"{client:16} {name:11} {r:8.4f} ± {r_se:5.4f} {s:8.4f} ± {s_se:5.4f} "
                  f"{z:6.2f} {'agrees' if ok else 'DIFFERS'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
