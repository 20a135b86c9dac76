"""Reads retrysim's output into pandas with each column's type: the one file a notebook, a script
or a dashboard needs to load any CSV `retrysim run` writes.

    import retrysim_io
    summary = retrysim_io.load("out/duplicate-curve")              # summary.csv
    tools = retrysim_io.load("out/reliability-layer", "tools.csv")

Copy it beside your own code, or put `notebooks/` on `sys.path`; it needs pandas and Python 3.11
or newer (for tomllib), nothing else.

Types come from `out/schema.json` (a Table Schema per file, which `retrysim` writes and the
tests hold to the code), one dtype per column name in every file:

- `integer`: `int64`, or the nullable `Int64` where a cell may be empty (<NA>);
- `number`: `float64`, an empty cell NaN (a figure that does not apply, such as theory where
  none holds);
- `boolean`: the nullable `boolean`; `string`: the `string` dtype.

**Unlimited is a value, not a gap.** A cap that is unlimited reads as `math.inf`
(`UNLIMITED`), so it sorts after every finite cap, compares (`max_attempts > 3`), and plots at
the end of an axis instead of vanishing: `max_attempts`, empty in the CSV when a policy has no
cap, and a swept key whose values mix numbers with "unlimited"
(`policy.retry-only.max_attempts = [2, 4, "unlimited"]`, `tool.supplier.workers`) are
`float64` columns with `inf` for unlimited.

A sweep's parameter columns (named by their key paths) take their type from the folder's
`manifest.toml`, which lists every value of every axis.
"""

import json
import math
import tomllib
from pathlib import Path

import pandas as pd

UNLIMITED = math.inf

SCHEMA = Path(__file__).resolve().parent.parent / "out" / "schema.json"

# Counts whose empty cell means "no limit" (out/README.md says so of each).
EMPTY_IS_UNLIMITED = {"max_attempts"}


def load(folder, file="summary.csv", schema=SCHEMA):
    """One CSV file of an output folder (`out/<experiment>/`) as a DataFrame with the dtypes
    `schema` gives its columns; a KeyError names a file the schema does not describe."""
    folder = Path(folder)
    tables = json.loads(Path(schema).read_text(encoding="utf-8"))["tables"]
    if file not in tables:
        raise KeyError(f"{file}: out/schema.json describes {', '.join(sorted(tables))}")
    manifest = tomllib.loads((folder / "manifest.toml").read_text(encoding="utf-8"))
    axes = manifest.get("resolved", {}).get("sweep", {}).get("axis", [])
    # An axis written as a range has the type of its start, stop and step.
    parameters = [
        {"name": a["path"], "type": parameter_type(a.get("values") or [a["start"], a["stop"], a["step"]])}
        for a in axes
    ]
    frame = pd.read_csv(folder / file, dtype=str, keep_default_na=False)
    for field in parameters + list(tables[file]["schema"]["fields"]):
        if field["name"] in frame.columns:
            frame[field["name"]] = typed(frame[field["name"]], field)
    return frame


def parameter_type(values):
    """A swept key's type from its values: integers, numbers (unlimited among them), or text."""
    numbers = [v for v in values if v != "unlimited"]
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
        return "string"
    if len(numbers) < len(values):
        return "unlimited"
    return "integer" if all(isinstance(v, int) for v in numbers) else "number"


def typed(cells, field):
    """One column's text cells as the type `field` (a Table Schema field) names."""
    name, kind = field["name"], field["type"]
    required = field.get("constraints", {}).get("required", False)
    if name in EMPTY_IS_UNLIMITED or kind == "unlimited":
        words = cells.replace({"": "inf", "unlimited": "inf"})
        return pd.to_numeric(words).astype("float64")
    if kind == "string":
        return cells.astype("string")
    if kind == "boolean":
        return cells.map({"true": True, "false": False}).astype("boolean")
    # An integer that may be empty is the nullable Int64: an empty cell is <NA>, and the
    # column stays integer.
    dtype = "float64" if kind == "number" else ("int64" if required else "Int64")
    return pd.to_numeric(cells.replace("", None)).astype(dtype)
