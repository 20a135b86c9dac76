"""Loads every committed CSV under out/ through retrysim_io.load and out/schema.json, and checks
each column came out with the one dtype its name has in every file (run by `.ci/run`)."""

import subprocess
import sys
from pathlib import Path

import retrysim_io

ROOT = Path(__file__).resolve().parent.parent


def main():
    files = subprocess.run(["git", "ls-files", "out/*/*.csv"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    # A tuner's candidates.csv has a column per searched key and figure (out/README.md), so
    # the schema cannot list them; it is read as text where a notebook uses it. And
    # explore.csv (out/README.md) is the explorer's, beside a run's folder, not a run's file.
    files = [f for f in files if Path(f).name not in ("candidates.csv", "explore.csv")]
    seen, problems = {}, []
    for path in files:
        folder, file = (ROOT / path).parent, Path(path).name
        frame = retrysim_io.load(folder, file)
        for column, dtype in frame.dtypes.items():
            first = seen.setdefault(column, (str(dtype), path))
            if first[0] != str(dtype):
                problems.append(f"{column}: {dtype} in {path}, {first[0]} in {first[1]}")
    # Unlimited is a value: lost-reply's policies have no cap (max_attempts empty in the CSV),
    # and timeout-percentile sweeps workers over ["unlimited", 1].
    caps = retrysim_io.load(ROOT / "out" / "lost-reply").max_attempts
    if not (caps == retrysim_io.UNLIMITED).all():
        problems.append(f"out/lost-reply max_attempts reads {list(caps)}, not unlimited")
    workers = retrysim_io.load(ROOT / "out" / "timeout-percentile")["tool.supplier.workers"]
    if sorted(set(workers)) != [1.0, retrysim_io.UNLIMITED]:
        problems.append(f"out/timeout-percentile workers read {sorted(set(workers))}")
    for p in problems:
        print(p, file=sys.stderr)
    print(f"{len(files)} files, {len(seen)} column names, {len(problems)} with two dtypes")
    return 1 if problems or not files else 0


if __name__ == "__main__":
    sys.exit(main())
