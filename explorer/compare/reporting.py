"""What every paper reproduction returns and prints: the tidy frame of our numbers, the
table in the paper's layout with the paper's numbers beside ours, and the closing Note.

Shared by :mod:`explorer.compare.reproduce` (the registry and most experiments) and
:mod:`explorer.compare.reproduce_school` (the rMTFL paper's Table 2 on School).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from explorer.data.dataset import frame_to_csv

__all__ = ["FRAME_COLUMNS", "Reproduction", "ReproductionResult", "beside", "cells",
           "from_comparison", "mean_std", "report", "table_text", "tidy", "trial_seed"]

FRAME_COLUMNS = ["reproduction", "setting", "method", "trial", "task", "metric", "value"]


@dataclass(frozen=True)
class ReproductionResult:
    """``frame``: tidy results (:data:`FRAME_COLUMNS`); ``text``: the printed report."""

    frame: pd.DataFrame
    text: str

    def to_csv(self, path=None) -> str | None:
        return frame_to_csv(self.frame, path)


@dataclass(frozen=True)
class Reproduction:
    """One experiment of a paper.

    ``run(trials, fast, random_state)`` returns a :class:`ReproductionResult`; ``trials`` is
    the paper's number of repetitions (used when none is given in full mode).
    """

    name: str
    title: str
    paper: str
    description: str
    run: Callable[[int, bool, int], ReproductionResult]
    trials: int = 10


def trial_seed(random_state: int, trial: int) -> int:
    """The data seed of one trial (independent streams per trial)."""
    return int(np.random.SeedSequence([random_state, trial]).generate_state(1)[0])


def tidy(name: str, rows) -> pd.DataFrame:
    """Rows ``(setting, method, trial, task, metric, value)`` -> the tidy frame."""
    frame = pd.DataFrame(list(rows), columns=FRAME_COLUMNS[1:])
    frame.insert(0, "reproduction", name)
    return frame.astype({"trial": np.int64, "value": np.float64})


def from_comparison(name: str, setting: str, result) -> pd.DataFrame:
    frame = result.frame[["method", "trial", "task", "metric", "value"]].copy()
    frame.insert(0, "setting", setting)
    frame.insert(0, "reproduction", name)
    return frame


def mean_std(values, scale: float = 1.0, digits: int = 3) -> str:
    values = scale * np.asarray(values, dtype=np.float64)
    if values.size < 2:
        return f"{values.mean():.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std(ddof=1):.{digits}f}"


def cells(result, metric: str, *, scale: float = 1.0, digits: int = 3,
          columns: list[str] | None = None) -> pd.DataFrame:
    """methods x columns (default: the tasks, then the average) of ``mean ± std`` (times
    ``scale``) from a comparison; cells marked by :meth:`ComparisonResult.best` (best, or
    not significantly worse) end with ``*``."""
    columns = result.columns if columns is None else list(columns)
    best = result.best(metric, columns=columns)
    table = pd.DataFrame(index=result.methods, columns=columns, dtype=object)
    for column in columns:
        values = result.values(metric, task=column)
        for method in result.methods:
            mark = " *" if best.at[method, column] else ""
            table.at[method, column] = mean_std(values.loc[method].dropna(), scale,
                                                digits) + mark
    return table


def beside(ours: pd.DataFrame, paper: dict[str, list]) -> pd.DataFrame:
    """``ours`` with column ``c (paper)`` right after each column ``c`` the paper reports."""
    out = pd.DataFrame(index=ours.index)
    for column in ours.columns:
        out[column] = ours[column]
        if column in paper:
            out[f"{column} (paper)"] = paper[column]
    return out


def report(title: str, sections: list[str], note: str) -> str:
    wrapped = textwrap.fill("Note: " + " ".join(note.split()), width=96)
    return "\n\n".join([f"{title}\n{'=' * len(title)}", *sections, wrapped]) + "\n"


def table_text(frame: pd.DataFrame) -> str:
    return frame.fillna("-").to_string()
