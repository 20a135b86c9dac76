"""retrysim against DesCartes on an M/M/4 server, in whole-process CPU seconds per call.

Runs `mm4-descartes` (this folder's crate: the server as one DesCartes component, two events a
call) and `retrysim run mm4.toml --threads 1` in turn, A B A B, and prints for each pair
DesCartes' CPU seconds over retrysim's — above 1, retrysim is the faster — then the median of
the pairs with their least and most. Both sides' mean time in the system is printed beside the
Erlang C figure they must both meet.

    cargo build --release --manifest-path benches/descartes/Cargo.toml
    python3 benches/descartes/compare.py [PAIRS] [CALLS]

Needs a release build of retrysim (`cargo build --release`); run from the repository's root.
"""

import csv
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKERS, ARRIVALS_PER_S, MEAN_SERVICE_S = 4, 4000.0, 800e-6


def cpu_of(command):
    """Runs `command` and returns its CPU seconds, from the kernel's accounting of the child."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.stderr.close()
    if status != 0:
        sys.exit(f"{' '.join(command)} failed ({status}): {stderr.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime


def erlang_c_sojourn_us():
    """The M/M/c mean time in the system, W = C(c, a) / (cμ − λ) + 1/μ, in microseconds."""
    mu = 1.0 / MEAN_SERVICE_S
    a = ARRIVALS_PER_S / mu
    rho = a / WORKERS
    tail = a**WORKERS / (math.factorial(WORKERS) * (1.0 - rho))
    waits = tail / (sum(a**k / math.factorial(k) for k in range(WORKERS)) + tail)
    return (waits / (WORKERS * mu - ARRIVALS_PER_S) + 1.0 / mu) * 1e6


def main():
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    calls = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    retrysim = os.path.join(ROOT, "target", "release", "retrysim")
    peer = os.path.join(HERE, "target", "release", "mm4-descartes")
    for binary, build in [(retrysim, "cargo build --release"),
                          (peer, "cargo build --release --manifest-path benches/descartes/Cargo.toml")]:
        if not os.path.exists(binary):
            sys.exit(f"no {binary}: run `{build}` first")
    scratch = tempfile.mkdtemp(prefix="retrysim-descartes-")
    ours = [retrysim, "run", os.path.join(HERE, "mm4.toml"), "--threads", "1", "--quiet",
            "--set", f"workload.tasks={calls}", "--out"]
    theirs = [peer, str(calls)]
    ratios = []
    try:
        for pair in range(pairs):
            out = os.path.join(scratch, str(pair))
            a = cpu_of(theirs)
            b = cpu_of(ours + [out])
            if pair == 0:
                summary = next(os.path.join(d, "summary.csv") for d in
                               (os.path.join(out, name) for name in os.listdir(out)))
                row = next(csv.DictReader(open(summary)))
                print(f"mean time in the system: Erlang C {erlang_c_sojourn_us():.1f} µs, "
                      f"retrysim {float(row['mean_completion_s']) * 1e6:.1f} µs, "
                      f"DesCartes {subprocess.run(theirs, capture_output=True, text=True).stdout.strip()}")
            shutil.rmtree(out, ignore_errors=True)
            ratios.append(a / b)
            print(f"pair {pair + 1}: DesCartes {a:.3f} s, retrysim {b:.3f} s, {a / b:.2f}×")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(
        f"DesCartes / retrysim CPU seconds, {calls} calls at an M/M/4 server: "
        f"median {statistics.median(ratios):.2f}× (min {min(ratios):.2f}×, max {max(ratios):.2f}×, "
        f"{pairs} interleaved pairs)"
    )


if __name__ == "__main__":
    main()
