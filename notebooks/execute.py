"""Runs the notebooks in reading order against an output folder, as `.ci/run` does.

    python notebooks/execute.py [--out DIR] [--render DIR] [NOTEBOOK ...]

--out names the folder of outputs to read (holding <experiment>/; the repository's out/ unless
given), which every notebook reads through RETRYSIM_OUT. NOTEBOOKs (a file name or the start of
one, such as 03) pick which to run; every one without them. --render writes each executed
notebook as Markdown with its figures (<name>.md and <name>_files/) into DIR: the book's
notebook pages, made from this execution, so the committed notebooks stay without outputs.

Fails on the first cell that raises, an assertion included, so a notebook that drifts from the
outputs fails. First refuses any notebook committed with stored outputs: notebooks are kept
without them (Jupyter: Edit > Clear Outputs of All Cells before saving).
"""

import argparse
import os
import sys
from pathlib import Path

try:
    import nbformat
    from nbclient import NotebookClient
except ModuleNotFoundError as missing:
    sys.exit(
        f"{missing.name} is not installed: the notebooks run in a virtual environment of their "
        "own,\n  python3 -m venv target/notebook-venv\n"
        "  target/notebook-venv/bin/pip install -r notebooks/requirements.txt\n"
        "  target/notebook-venv/bin/python notebooks/execute.py"
    )

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
    """Runs `book` against the outputs in `out`; returns the executed notebook, or the error a
    cell raised."""
    os.environ["RETRYSIM_OUT"] = str(Path(out).resolve())  # the kernel inherits it
    nb = nbformat.read(book, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(HERE)}})
    try:
        client.execute()
    except Exception as error:  # a cell raised, an assertion included
        return error
    return nb


def render(nb, book, folder):
    """Writes the executed notebook `nb` as Markdown, its figures as files beside it."""
    from nbconvert import MarkdownExporter

    folder.mkdir(parents=True, exist_ok=True)
    files = f"{book.stem}_files"
    body, resources = MarkdownExporter().from_notebook_node(
        nb, resources={"output_files_dir": files, "unique_key": book.stem})
    source = (f"\n\n*Rendered from `notebooks/{book.name}`, executed against the committed `out/` "
              "when the book was built; open the notebook itself to change and rerun it.*\n")
    (folder / f"{book.stem}.md").write_text(body + source, encoding="utf-8")
    for name, data in resources.get("outputs", {}).items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=HERE.parent / "out", type=Path,
                        help="the folder of outputs to read (default: the repository's out/)")
    parser.add_argument("--render", type=Path,
                        help="also write each executed notebook as Markdown with its figures here")
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
        ran = execute(book, args.out)
        if isinstance(ran, Exception):
            print(f"{book.name}: {ran}", file=sys.stderr)
            return 1
        if args.render:
            render(ran, book, args.render)
        print(f"{book.name}: ran, every assertion held")
    return 0


if __name__ == "__main__":
    sys.exit(main())
