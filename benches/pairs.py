"""What every peer comparison under `benches/` shares: a command's whole-process CPU seconds,
and a peer run against retrysim in interleaved pairs (A B A B), each pair's ratio printed and
then the median with the least and the most. On a shared machine a ratio taken within a pair
holds still where either time alone drifts.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RETRYSIM = os.path.join(ROOT, "target", "release", "retrysim")


def cpu_seconds(command):
    """Runs `command` and returns its CPU seconds, from the kernel's accounting of the child."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.stderr.close()
    if status != 0:
        sys.exit(f"{' '.join(command)} failed ({status}): {stderr.decode(errors='replace')}")
    return usage.ru_utime + usage.ru_stime


def against_retrysim(pairs, peer_name, peer, retrysim, first_pair=None):
    """Runs `peer` (a command) and `retrysim` (a command to which an output folder is added)
    in turn `pairs` times; returns the peer's CPU seconds over retrysim's, pair by pair.
    `first_pair`, if given, is handed the first pair's output folder before it goes."""
    if not os.path.exists(RETRYSIM):
        sys.exit("no release build of retrysim: run `cargo build --release` first")
    scratch = tempfile.mkdtemp(prefix="retrysim-peer-")
    ratios = []
    try:
        for pair in range(pairs):
            out = os.path.join(scratch, str(pair))
            a = cpu_seconds(peer)
            b = cpu_seconds(retrysim + ["--out", out])
            if pair == 0 and first_pair is not None:
                first_pair(out)
            shutil.rmtree(out, ignore_errors=True)
            ratios.append(a / b)
            print(f"pair {pair + 1}: {peer_name} {a:.3f} s, retrysim {b:.3f} s, {a / b:.2f}×")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return ratios


def summary(ratios):
    """The median of the pairs' ratios, with the least and the most."""
    return (
        f"median {statistics.median(ratios):.2f}× (min {min(ratios):.2f}×, "
        f"max {max(ratios):.2f}×, {len(ratios)} interleaved pairs)"
    )
