"""What every notebook shares: where the outputs are, reading them, and running retrysim.

The notebooks read the committed CSV files under `out/` by default. Set RETRYSIM_OUT to read a
folder of your own instead (the same layout: RETRYSIM_OUT/<experiment>/summary.csv), and
RETRYSIM to use a retrysim binary other than target/release/retrysim.
"""

import os
import subprocess
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
RETRYSIM = Path(os.environ.get("RETRYSIM", ROOT / "target" / "release" / "retrysim"))

# Two-sided 99.9 % normal quantile: a measured mean further than this many standard errors
# from its closed form is a disagreement, not chance (1 row in 1000 would cross it by luck).
Z_999 = 3.2905

# Columns read as text: a layer path such as "1/2" or "10" is a label, not a number.
TEXT = {"layer": str, "key": str, "policy": str, "experiment": str}


def out_dir(experiment, out=None):
    """The output folder of `experiment` under `out`; without one, under RETRYSIM_OUT if set,
    else the committed out/."""
    return Path(out or os.environ.get("RETRYSIM_OUT", ROOT / "out")) / experiment


def read(folder, file="summary.csv"):
    """One CSV file of an output folder as a DataFrame."""
    return pd.read_csv(Path(folder) / file, dtype=TEXT)


def run(config, *flags):
    """Runs retrysim on `config` (relative to the repository) with `flags` (such as
    "--set", "tool.charge.reply_loss=0.3") into a scratch folder; returns the output folder."""
    if not RETRYSIM.exists():
        raise FileNotFoundError(f"{RETRYSIM}: build it first with `cargo build --release`")
    scratch = Path(tempfile.mkdtemp(prefix="retrysim-notebook-"))
    subprocess.run(
        [str(RETRYSIM), "run", str(ROOT / config), "--out", str(scratch), "--quiet", *flags],
        check=True,
    )
    (folder,) = [p for p in scratch.iterdir() if p.is_dir() and not p.name.startswith(".")]
    return folder


def assert_agrees(summary, measures=("attempts", "duplicates")):
    """Every row with a closed form lies within Z_999 standard errors of it."""
    for m in measures:
        z = summary[f"{m}_z"].dropna()
        worst = z.abs().max()
        assert worst <= Z_999, f"{m}: a row lies {worst:.2f} standard errors from theory"
