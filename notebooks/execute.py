"""Runs every notebook in reading order against the current out/, as `.ci/run` does.

Fails on the first cell that raises, an assertion included, so a notebook that drifts from the
outputs fails. First refuses any notebook committed with stored outputs: notebooks are kept
without them (Jupyter: Edit > Clear Outputs of All Cells before saving).
"""

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

HERE = Path(__file__).resolve().parent


def stored_outputs(path):
    cells = nbformat.read(path, as_version=4).cells
    return any(c.get("outputs") or c.get("execution_count") for c in cells if c.cell_type == "code")


def main():
    books = sorted(HERE.glob("[0-9][0-9]-*.ipynb"))
    if not books:
        print("no notebooks found", file=sys.stderr)
        return 1
    stored = [b.name for b in books if stored_outputs(b)]
    if stored:
        print(f"stored outputs in {', '.join(stored)}: clear them before committing", file=sys.stderr)
        return 1
    for book in books:
        nb = nbformat.read(book, as_version=4)
        client = NotebookClient(nb, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": str(HERE)}})
        try:
            client.execute()
        except Exception as error:  # a cell raised: say which notebook, then fail
            print(f"{book.name}: {error}", file=sys.stderr)
            return 1
        print(f"{book.name}: ran, every assertion held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
