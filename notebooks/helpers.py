"""What every notebook shares: where the outputs are, reading them, running retrysim, and holding
a measured mean against a closed form.

The notebooks read the committed CSV files under `out/` by default. Set RETRYSIM_OUT to read a
folder of your own instead (the same layout: RETRYSIM_OUT/<experiment>/summary.csv), and
RETRYSIM to use a retrysim binary other than target/release/retrysim.
"""

import functools
import math
import os
import subprocess
import tempfile
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd

import retrysim_io
from retrysim_io import UNLIMITED  # noqa: F401 (the notebooks compare caps with it)

ROOT = Path(__file__).resolve().parent.parent
RETRYSIM = Path(os.environ.get("RETRYSIM", ROOT / "target" / "release" / "retrysim"))

# Two-sided 99.9 % normal quantile: a measured mean further than this many standard errors
# from its closed form is a disagreement, not chance (1 row in 1000 would cross it by luck).
Z_999 = 3.2905

# The output files write floats with six decimals: a figure may be off by half a unit of the
# sixth from the value it stands for, and a standard error read from a half-width as much again.
ROUNDING = 1e-6

def out_dir(experiment, out=None):
    """The output folder of `experiment` under `out`; without one, under RETRYSIM_OUT if set,
    else the committed out/."""
    return Path(out or os.environ.get("RETRYSIM_OUT", ROOT / "out")) / experiment


def read(folder, file="summary.csv"):
    """One CSV file of an output folder as a DataFrame, each column typed as out/schema.json
    says (retrysim_io.load: an unlimited cap is math.inf, not NaN)."""
    return retrysim_io.load(folder, file)


def settings(folder):
    """The config a run resolved, every default filled in: its manifest's [resolved] table."""
    with open(Path(folder) / "manifest.toml", "rb") as manifest:
        return tomllib.load(manifest)["resolved"]


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


@functools.lru_cache
def t_975(df):
    """The 97.5 % point of Student's t on `df` degrees of freedom (a whole number from 1): the
    factor a 95 % half-width is the standard error times. Bisection on the exact distribution
    function, which for whole `df` is a finite sum: with θ = atan(t/√df) and c = cos²θ,
    P(|T| ≤ t) = sin θ · Σ_{j<df/2} c^j·(1·3⋯(2j−1))/(2·4⋯2j) for even df, and
    (2/π)(θ + sin θ cos θ · Σ_{j<(df−1)/2} c^j·(2·4⋯2j)/(3·5⋯(2j+1))) for odd df."""
    def inside(t):
        theta = math.atan(t / math.sqrt(df))
        c, j = math.cos(theta) ** 2, np.arange(1, (df + 1) // 2)
        if df % 2 == 0:
            return math.sin(theta) * (1 + np.cumprod(c * (2 * j - 1) / (2 * j)).sum())
        series = 1 + np.cumprod(c * (2 * j) / (2 * j + 1))[:-1].sum() if df > 1 else 0
        return 2 / math.pi * (theta + math.sin(theta) * math.cos(theta) * series)
    low, high = 0.0, 20.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if inside(mid) < 0.95 else (low, mid)
    return (low + high) / 2


def standard_error(rows, ci95):
    """The standard error of each row's measured mean, from its 95 % half-width `ci95` (see
    out/README.md): a Student-t interval across the replications' means on replications − 1
    degrees of freedom, or across the intents of a single replication on intents − 1."""
    df = np.where(rows.replications > 1, rows.replications - 1, rows.intents - 1)
    return rows[ci95] / [t_975(int(d)) for d in df]


def assert_within(measured, closed, se, what):
    """Asserts that every `measured` lies within Z_999 standard errors `se` of its `closed` form
    (and the files' rounding); arrays or single figures."""
    measured, closed, se = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (measured, closed, se)))
    far = np.abs(measured - closed) > Z_999 * se + ROUNDING
    assert not far.any(), (f"{what}: measured {measured[far]} against the closed form "
                           f"{closed[far]}, more than {Z_999} standard errors {se[far]} away")


def agreement(rows, measure, ci95, closed):
    """Holds each summary row's measured `measure` (a mean over intents of a whole-number
    figure: attempts, duplicates, a 0-or-1 success) against its `closed` form, within Z_999
    standard errors read from `ci95`, and returns the comparison as a table.

    A whole-number figure whose mean is μ varies by at least f(1 − f), f the fractional part of
    μ, so if the closed form is right the mean over n intents has a standard error of at least
    √(f(1 − f)/n): a sample with less spread than that (every one of 4000 intents succeeded,
    where the closed form is 0.9999) is held to that least one."""
    closed = pd.Series(np.asarray(closed, dtype=float), index=rows.index)
    f = closed % 1
    se = np.maximum(standard_error(rows, ci95), np.sqrt(f * (1 - f) / rows.intents))
    assert_within(rows[measure], closed, se, f"{measure} of {', '.join(rows.policy.unique())}")
    z = (rows[measure] - closed) / se.where(se > 0)
    return pd.DataFrame({"measured": rows[measure], "closed form": closed,
                         "standard error": se, "z": z.fillna(0.0)})
