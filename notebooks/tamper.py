"""Checks that the notebooks' assertions read the measured figures, as `.ci/run` does.

    python notebooks/tamper.py [--out DIR] [NOTEBOOK ...]

Copies the outputs (the repository's out/ unless --out names another folder) to a scratch
folder. For each notebook, runs it against the copy, which must pass; then raises by 10 % one
measured column the notebook asserts on, in every row of one file (TAMPERS), runs it again,
which must fail on an assertion, and puts the file back. Prints one line per notebook; exits
nonzero if any notebook fails untouched, passes tampered, or fails tampered on anything but an
assertion.
"""

import argparse
import csv
import shutil
import sys
import tempfile
from pathlib import Path

from execute import HERE, execute, pick

# Per notebook: the file under the outputs, and the measured column raised by 10 %.
TAMPERS = {
    "01": ("duplicate-curve/summary.csv", "duplicates_per_intent"),
    "02": ("timeout-percentile/summary.csv", "attempts_per_intent"),
    "03": ("reliability-layer/summary.csv", "calls_while_down"),
    "04": ("one-deadline-one-budget/attempts.csv", "end_tick"),
    "05": ("reconciliation/attempts.csv", "end_tick"),
    "06": ("retry-storm/timeseries.csv", "busy_workers"),
    "07": ("jitter-contention/summary.csv", "work_per_client"),
    "08": ("layered-retries/edges.csv", "calls_per_intent"),
    "09": ("broken-streams/summary.csv", "cost_per_task"),
    "10": ("compare-demo-after/runs.csv", "attempts_per_intent"),
    "11": ("exactly-one-order.explore/explore.csv", "violation_probability"),
    "12": ("bursty-faults/summary.csv", "attempts_per_intent"),
    "13": ("agent-crash/crashes.csv", "takeover_duplicates"),
}


def raised(cell):
    """A cell raised by 10 %, written as the file writes it: a count stays a whole number, a
    number keeps six decimals, an empty cell stays empty."""
    if cell == "":
        return cell
    return f"{float(cell) * 1.1:.6f}" if "." in cell else str(round(int(cell) * 1.1))


def tamper(path, column):
    with open(path, newline="") as file:
        header, *rows = list(csv.reader(file))
    at = header.index(column)
    for row in rows:
        row[at] = raised(row[at])
    with open(path, "w", newline="") as file:
        csv.writer(file, lineterminator="\n").writerows([header, *rows])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=HERE.parent / "out", type=Path,
                        help="the folder of outputs to copy (default: the repository's out/)")
    parser.add_argument("notebooks", nargs="*", help="which to check (default: every one)")
    args = parser.parse_args()
    wrong = 0
    with tempfile.TemporaryDirectory(prefix="retrysim-tamper-") as scratch:
        copy = Path(scratch) / "out"
        shutil.copytree(args.out, copy)
        for book in pick(args.notebooks):
            if book.name[:2] not in TAMPERS:
                print(f"{book.name}: no tamper for it in tamper.py")
                wrong += 1
                continue
            file, column = TAMPERS[book.name[:2]]
            error = failure(execute(book, copy))
            if error is not None:
                print(f"{book.name}: fails untouched: {str(error).strip().splitlines()[-1]}")
                wrong += 1
                continue
            original = (copy / file).read_bytes()
            tamper(copy / file, column)
            error = failure(execute(book, copy))
            (copy / file).write_bytes(original)
            what = f"{column} of {file} raised by 10 %"
            if error is None:
                print(f"{book.name}: passes untouched, and still passes with {what}")
                wrong += 1
            elif getattr(error, "ename", None) != "AssertionError":
                print(f"{book.name}: passes untouched; with {what} fails, but on {getattr(error, 'ename', error)}, not an assertion")
                wrong += 1
            else:
                print(f"{book.name}: passes untouched, fails on an assertion with {what}")
    return 1 if wrong else 0


def failure(ran):
    """The error an execution raised, or None if it ran through."""
    return ran if isinstance(ran, Exception) else None


if __name__ == "__main__":
    sys.exit(main())
