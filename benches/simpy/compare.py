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
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def timed(command):
    """Runs `command` and returns its CPU seconds, from the kernel's accounting of the child."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.stderr.close()
    if status != 0:
        sys.exit(f"{' '.join(command)} failed ({status}): {stderr.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime


def main():
    pairs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    intents = int(sys.argv[2]) if len(sys.argv) > 2 else 200_000
    binary = os.path.join(ROOT, "target", "release", "retrysim")
    if not os.path.exists(binary):
        sys.exit("no release build: run `cargo build --release` first")
    config = os.path.join(HERE, "lost-reply.toml")
    scratch = tempfile.mkdtemp(prefix="retrysim-simpy-")
    simpy = [sys.executable, os.path.join(HERE, "lost_reply.py"), str(intents)]
    retrysim = [binary, "run", config, "--threads", "1", "--quiet", "--set",
                f"workload.tasks={intents}", "--out"]
    ratios = []
    try:
        for pair in range(pairs):
            out = os.path.join(scratch, str(pair))
            a = timed(simpy)
            b = timed(retrysim + [out])
            shutil.rmtree(out, ignore_errors=True)
            ratios.append(a / b)
            print(f"pair {pair + 1}: SimPy {a:.3f} s, retrysim {b:.3f} s, {a / b:.1f}×")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(
        f"SimPy / retrysim CPU seconds, {intents} intents twice (no key, per-intent key): "
        f"median {statistics.median(ratios):.1f}× (min {min(ratios):.1f}×, max {max(ratios):.1f}×, "
        f"{pairs} interleaved pairs)"
    )


if __name__ == "__main__":
    main()
