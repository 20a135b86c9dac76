"""retrysim against SimPy on the same lost-reply workload, in whole-process CPU seconds.

Runs `lost_reply.py` (SimPy) and `retrysim run lost-reply.toml --threads 1` in turn, A B A B,
start-up, output and charts included, and prints for each pair SimPy's CPU seconds over
retrysim's, then the median of the pairs with their minimum and maximum: on a shared machine a
ratio taken within a pair holds still where either time alone drifts.

    python3 benches/simpy/compare.py [PAIRS] [INTENTS]

Needs SimPy (`pip install -r benches/simpy/requirements.txt`, in a virtual environment) and a
release build (`cargo build --release`); run from the repository's root.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from pairs import RETRYSIM, against_retrysim, summary  # noqa: E402


def main():
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    intents = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    simpy = [sys.executable, os.path.join(HERE, "lost_reply.py"), str(intents)]
    retrysim = [RETRYSIM, "run", os.path.join(HERE, "lost-reply.toml"), "--threads", "1",
                "--quiet", "--set", f"workload.tasks={intents}"]
    ratios = against_retrysim(pairs, "SimPy", simpy, retrysim)
    print(f"SimPy / retrysim CPU seconds, {intents} intents twice (no key, per-intent key): "
          f"{summary(ratios)}")


if __name__ == "__main__":
    main()
