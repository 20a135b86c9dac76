"""Runs the notebooks in reading order against an output folder, as `.ci/run` does.

    python notebooks/execute.py [--out DIR] [NOTEBOOK ...]

--out names the folder of outputs to read (holding <experiment>/; the repository's out/ unless
given), which every notebook reads through RETRYSIM_OUT. NOTEBOOKs (a file name or the start of
one, such as 03) pick which to run; every one without them.

Fails on the first cell that raises, an assertion included, so a notebook that drifts from the
outputs fails. First refuses any notebook committed with stored outputs: notebooks are kept
without them (Jupyter: Edit > Clear Outputs of All Cells before saving).
"""

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent
BOOKS = sorted(HERE.glob("[0-9][0-9]-*.ipynb"))


def stored_outputs(path):
    cells = nbformat.read(path, as_version=4).cells
    return any(c.get("outputs") or c.get("execution_count") for c in cells if c.cell_type == "code")


def pick(names):
    """The notebooks `names` pick (all without any), in reading order; exits on a name that
    picks none."""
    if not names:
        return BOOKS
    picked = []
    for name in names:
        found = [b for b in BOOKS if b.name.startswith(Path(name).name)]
        if not found:
            sys.exit(f"{name}: no such notebook in {HERE}")
        picked += [b for b in found if b not in picked]
    return sorted(picked)


def execute(book, out):
    """Runs `book` against the outputs in `out`; returns the error a cell raised, or None."""
    os.environ["RETRYSIM_OUT"] = str(Path(out).resolve())  # the kernel inherits it
    nb = nbformat.read(book, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(HERE)}})
    try:
        client.execute()
    except Exception as error:  # a cell raised, an assertion included
        return error
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=HERE.parent / "out", type=Path,
                        help="the folder of outputs to read (default: the repository's out/)")
    parser.add_argument("notebooks", nargs="*", help="which to run (default: every one)")
    args = parser.parse_args()
    if not args.out.is_dir():
        print(f"{args.out}: no such folder", file=sys.stderr)
        return 1
    books = pick(args.notebooks)
    if not books:
        print("no notebooks found", file=sys.stderr)
        return 1
    stored = [b.name for b in books if stored_outputs(b)]
    if stored:
        print(f"stored outputs in {', '.join(stored)}: clear them before committing", file=sys.stderr)
        return 1
    for book in books:
        error = execute(book, args.out)
        if error is not None:
            print(f"{book.name}: {error}", file=sys.stderr)
            return 1
        print(f"{book.name}: ran, every assertion held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
