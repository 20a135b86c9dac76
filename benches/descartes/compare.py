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
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from pairs import RETRYSIM, against_retrysim, summary  # noqa: E402

WORKERS, ARRIVALS_PER_S, MEAN_SERVICE_S = 4, 4000.0, 800e-6


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
    peer = [os.path.join(HERE, "target", "release", "mm4-descartes"), str(calls)]
    if not os.path.exists(peer[0]):
        sys.exit("no mm4-descartes: run "
                 "`cargo build --release --manifest-path benches/descartes/Cargo.toml` first")
    retrysim = [RETRYSIM, "run", os.path.join(HERE, "mm4.toml"), "--threads", "1", "--quiet",
                "--set", f"workload.tasks={calls}"]

    def theory_beside(out):
        (folder,) = os.listdir(out)
        row = next(csv.DictReader(open(os.path.join(out, folder, "summary.csv"))))
        theirs = subprocess.run(peer, capture_output=True, text=True).stdout.strip()
        print(f"mean time in the system: Erlang C {erlang_c_sojourn_us():.1f} µs, "
              f"retrysim {float(row['mean_completion_s']) * 1e6:.1f} µs, DesCartes: {theirs}")

    ratios = against_retrysim(pairs, "DesCartes", peer, retrysim, theory_beside)
    print(f"DesCartes / retrysim CPU seconds, {calls} calls at an M/M/4 server: {summary(ratios)}")


if __name__ == "__main__":
    main()
