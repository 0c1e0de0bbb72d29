"""``ComparisonResult``: the tidy results of :func:`explorer.compare.compare` and their
tables in the papers' layout (methods as rows, tasks and their average as columns, mean ±
standard deviation over the trials, the best per column marked).

Marking follows the papers' practice: in each column the method with the best mean is
marked, and so is every method that a two-sided paired t-test over the trials
(``scipy.stats.ttest_rel``, alpha 0.05) does not find significantly different from it.

Numbers and text only: the figures of a result and its standalone HTML report are drawn by
:mod:`explorer.viz.comparison` (``comparison_plot(result)``, ``report_html(result)``), a layer
above this one.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import ttest_rel

from ..data.dataset import frame_to_csv
from ..parameters import describe

__all__ = ["ComparisonResult", "paired_p_value", "AVERAGE", "FRAME_COLUMNS"]

#: The ``task`` value of the rows that average over the tasks.
AVERAGE = "average"
FRAME_COLUMNS = ["method", "trial", "task", "metric", "value", "fit_time_s", "params"]


def paired_p_value(a, b) -> float:
    """Two-sided p-value of the paired t-test of ``a`` against ``b`` (``ttest_rel``).

    Pairs with a NaN are left out. Fewer than two pairs give NaN. Differences that are all
    equal have no spread for the test: p is 1 when they are all zero (identical results)
    and 0 otherwise (one method better in every trial by the same amount).

    >>> paired_p_value([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    1.0
    >>> paired_p_value([0.15, 0.25], [0.1, 0.2])   # the same gain twice, up to rounding
    0.0
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    difference = a - b
    if difference.size < 2:
        return float("nan")
    # equal up to rounding (error rates of equal counts differ by an ulp): scipy would
    # warn of catastrophic cancellation and return noise
    scale = max(1.0, float(np.max(np.abs(difference))))
    if np.ptp(difference) <= 1e-12 * scale:
        return 1.0 if abs(float(np.mean(difference))) <= 1e-12 * scale else 0.0
    return float(ttest_rel(a, b).pvalue)


class ComparisonResult:
    """Results of a comparison: the tidy frame, tables, plots, learned task matrices.

    Parameters
    ----------
    frame : pandas.DataFrame
        Columns ``method, trial, task, metric, value, fit_time_s, params``; ``task`` holds
        task names and ``"average"``.
    methods : list of str
        Row order of the tables.
    task_names : list of str
        Column order of the tables (``"average"`` is appended).
    greater_is_better : dict of metric name -> bool
        The metrics recorded, the first is the default.
    relationships_by_trial : dict of (method, trial) -> dict of str -> ndarray, optional
        Each fitted estimator's ``task_relationships()``.
    estimators : dict of str -> estimator, optional
        The (unfitted) estimators compared.
    truth : dict, optional
        The data set's ground truth (``dataset.truth``), for :meth:`agreement`.
    settings : dict, optional
        The other arguments of ``compare`` (for :meth:`to_code`).
    failures : dict of method -> str, optional
        Methods left out because a fit raised (``compare(..., errors="report")``): the
        first failing trial and the error, as text.
    """

    def __init__(self, frame: pd.DataFrame, *, methods: Sequence[str],
                 task_names: Sequence[str], greater_is_better: dict[str, bool],
                 relationships_by_trial: dict | None = None, estimators: dict | None = None,
                 settings: dict | None = None, truth: dict | None = None,
                 failures: dict | None = None):
        missing = sorted(set(FRAME_COLUMNS) - set(frame.columns))
        if missing:
            raise ValueError(f"frame must have the columns {FRAME_COLUMNS}; {missing} are "
                             f"missing.")
        self.frame = frame
        self.methods = list(methods)
        self.task_names = list(task_names)
        self.greater_is_better = dict(greater_is_better)
        self.relationships_by_trial = dict(relationships_by_trial or {})
        self.estimators = dict(estimators or {})
        self.settings = dict(settings or {})
        self.truth = dict(truth or {})
        self.failures = dict(failures or {})

    @classmethod
    def from_jobs(cls, results, *, methods, task_names, metrics, estimators=None,
                  settings=None, truth=None, failures=None) -> ComparisonResult:
        """Assemble the jobs' outcomes (any order) into a result, sorted by trial then
        method order, tasks in data order then the average."""
        order = {name: i for i, name in enumerate(methods)}
        results = sorted(results, key=lambda r: (r.trial, order[r.method]))
        rows = []
        for r in results:
            for metric in metrics:
                per_task, average = r.scores[metric.name]
                for t, value in sorted(per_task.items()):
                    rows.append((r.method, r.trial, task_names[t], metric.name, value,
                                 r.fit_time_s, r.params))
                rows.append((r.method, r.trial, AVERAGE, metric.name, average,
                             r.fit_time_s, r.params))
        frame = pd.DataFrame(rows, columns=FRAME_COLUMNS)
        frame = frame.astype({"trial": np.int64, "value": np.float64,
                              "fit_time_s": np.float64})
        return cls(frame, methods=methods, task_names=task_names,
                   greater_is_better={m.name: m.greater_is_better for m in metrics},
                   relationships_by_trial={(r.method, r.trial): r.relationships
                                           for r in results},
                   estimators=estimators, settings=settings, truth=truth,
                   failures=failures)

    # ------------------------------------------------------------------ facts
    @property
    def metrics(self) -> list[str]:
        """Names of the metrics recorded (the first is the default of every table)."""
        return list(self.greater_is_better)

    @property
    def columns(self) -> list[str]:
        """Table columns: the task names, then ``"average"``."""
        return [*self.task_names, AVERAGE]

    @property
    def n_trials(self) -> int:
        return int(self.frame["trial"].nunique())

    def __repr__(self) -> str:
        return (f"ComparisonResult(methods={self.methods}, n_tasks={len(self.task_names)}, "
                f"n_trials={self.n_trials}, metrics={self.metrics}"
                + (f", failures={sorted(self.failures)})" if self.failures else ")"))

    def _metric(self, metric) -> str:
        if metric is None:
            return self.metrics[0]
        if metric not in self.greater_is_better:
            raise ValueError(f"metric must be one of the recorded metrics {self.metrics}; "
                             f"got {describe(metric)}.")
        return metric

    def values(self, metric: str | None = None, task: str = AVERAGE) -> pd.DataFrame:
        """Per-trial values of one column: rows methods, columns trials."""
        metric = self._metric(metric)
        if task not in self.columns:
            raise ValueError(f"task must be one of {self.columns}; got {describe(task)}.")
        part = self.frame[(self.frame["metric"] == metric) & (self.frame["task"] == task)]
        return part.pivot(index="method", columns="trial", values="value").reindex(
            self.methods)

    # ------------------------------------------------------------------ the table
    def summary(self, metric: str | None = None, *, alpha: float = 0.05,
                columns: list[str] | None = None) -> pd.DataFrame:
        """One row per (task column, method): mean, std (ddof=1), n, the p-value of the
        paired t-test against the column's best mean, and whether the method is marked.
        ``columns``: only these table columns (default: every task, then the average).

        Columns: ``task, method, mean, std, n, p_value, best``.
        """
        metric = self._metric(metric)
        columns = self.columns if columns is None else list(columns)
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) \
                or not 0 < alpha < 1:
            raise ValueError(f"alpha must be a number in (0, 1); got {describe(alpha)}.")
        sign = 1.0 if self.greater_is_better[metric] else -1.0
        rows = []
        for task in columns:
            values = self.values(metric, task)
            means = values.mean(axis=1, skipna=True).to_numpy()
            stds = values.std(axis=1, ddof=1, skipna=True).to_numpy()
            counts = values.notna().sum(axis=1).to_numpy()
            scores = sign * means
            has_score = ~np.isnan(scores)
            top = np.max(scores[has_score]) if has_score.any() else np.nan
            reference = int(np.flatnonzero(scores == top)[0]) if has_score.any() else None
            for i, method in enumerate(self.methods):
                p_value = np.nan
                if reference is not None and i != reference:
                    p_value = paired_p_value(values.iloc[i], values.iloc[reference])
                best = bool(has_score[i] and (scores[i] == top or (
                    not np.isnan(p_value) and p_value >= alpha)))
                rows.append((task, method, means[i], stds[i], int(counts[i]), p_value,
                             best))
        return pd.DataFrame(rows, columns=["task", "method", "mean", "std", "n", "p_value",
                                           "best"])

    def best(self, metric: str | None = None, *, alpha: float = 0.05,
             columns: list[str] | None = None) -> pd.DataFrame:
        """Boolean table (methods x columns) of the marked cells (``columns``: as
        :meth:`summary`)."""
        columns = self.columns if columns is None else list(columns)
        summary = self.summary(metric, alpha=alpha, columns=columns)
        return summary.pivot(index="method", columns="task", values="best").reindex(
            index=self.methods, columns=columns).astype(bool)

    def _cells(self, metric, digits: int, alpha: float):
        summary = self.summary(metric, alpha=alpha)
        if isinstance(digits, bool) or not isinstance(digits, (int, np.integer)) \
                or not 0 <= digits <= 12:
            raise ValueError(f"digits must be an integer in [0, 12]; got {describe(digits)}.")

        def text(row) -> str:
            if np.isnan(row["mean"]):
                return "n/a"
            if row["n"] < 2:
                return f"{row['mean']:.{digits}f}"
            return f"{row['mean']:.{digits}f} ± {row['std']:.{digits}f}"

        summary["text"] = summary.apply(text, axis=1)
        texts = summary.pivot(index="method", columns="task", values="text").reindex(
            index=self.methods, columns=self.columns)
        best = summary.pivot(index="method", columns="task", values="best").reindex(
            index=self.methods, columns=self.columns).astype(bool)
        return texts, best

    def caption(self, metric: str | None = None, *, alpha: float = 0.05) -> str:
        """What a table shows, in one sentence."""
        metric = self._metric(metric)
        direction = "higher" if self.greater_is_better[metric] else "lower"
        return (f"{metric} ({direction} is better): mean ± std over {self.n_trials} trials. "
                f"Marked: the best mean per column and every method not significantly "
                f"different from it (paired t-test, alpha = {alpha:g}).")

    def table(self, metric: str | None = None, *, digits: int = 3, alpha: float = 0.05,
              mark: str = " *") -> pd.DataFrame:
        """The papers' table: methods x (tasks, average) of ``"mean ± std"`` strings, the
        marked cells (see :meth:`best`) ending with ``mark``."""
        texts, best = self._cells(metric, digits, alpha)
        table = texts.where(~best, texts + mark)
        table.index.name, table.columns.name = "method", None
        return table

    def to_markdown(self, metric: str | None = None, *, digits: int = 3,
                    alpha: float = 0.05) -> str:
        """The table as Markdown, marked cells in bold, the caption below."""
        texts, best = self._cells(metric, digits, alpha)

        def cell(value: str) -> str:
            return str(value).replace("|", "\\|")

        lines = ["| method | " + " | ".join(cell(c) for c in self.columns) + " |",
                 "|---|" + "---:|" * len(self.columns)]
        for method in self.methods:
            cells = [f"**{texts.at[method, c]}**" if best.at[method, c]
                     else texts.at[method, c] for c in self.columns]
            lines.append(f"| {cell(method)} | " + " | ".join(cells) + " |")
        return "\n".join(lines) + f"\n\n_{self.caption(metric, alpha=alpha)}_\n"

    def to_latex(self, metric: str | None = None, *, digits: int = 3,
                 alpha: float = 0.05) -> str:
        """The table as a LaTeX ``tabular`` (booktabs rules), marked cells in bold."""
        texts, best = self._cells(metric, digits, alpha)
        lines = [r"\begin{tabular}{l" + "c" * len(self.columns) + "}", r"\toprule",
                 "method & " + " & ".join(latex_escape(c) for c in self.columns)
                 + r" \\", r"\midrule"]
        for method in self.methods:
            cells = []
            for c in self.columns:
                value = latex_escape(texts.at[method, c]).replace("±", r"$\pm$")
                cells.append(rf"\textbf{{{value}}}" if best.at[method, c] else value)
            lines.append(latex_escape(method) + " & " + " & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(lines) + "\n"

    def to_html(self, metric: str | None = None, *, digits: int = 3,
                alpha: float = 0.05) -> str:
        """The table as an HTML ``<table>`` (names escaped), marked cells in ``<strong>``.

        The standalone report (the tables as the Compare page marks them, the figures, Bokeh
        inline) is :func:`explorer.viz.comparison.report_html`.
        """
        texts, best = self._cells(metric, digits, alpha)
        esc = html.escape
        head = "".join(f"<th>{esc(c)}</th>" for c in self.columns)
        body = []
        for method in self.methods:
            cells = "".join(
                f'<td class="best"><strong>{esc(texts.at[method, c])}</strong></td>'
                if best.at[method, c] else f"<td>{esc(texts.at[method, c])}</td>"
                for c in self.columns)
            body.append(f"<tr><th>{esc(method)}</th>{cells}</tr>")
        return (f'<table class="mtl-compare"><caption>{esc(self.caption(metric, alpha=alpha))}'
                f"</caption><thead><tr><th>method</th>{head}</tr></thead><tbody>"
                + "".join(body) + "</tbody></table>")

    def to_csv(self, path=None) -> str | None:
        """The tidy frame as CSV (a string when ``path`` is None)."""
        return frame_to_csv(self.frame, path)

    def to_code(self, dataset: str = "dataset", *, imports=()) -> str:
        """Python source of the ``compare(...)`` call that reproduces this result.

        Parameters
        ----------
        dataset : str
            An expression that builds the data set (e.g. ``"make_dataset('outlier_tasks',
            {...}, random_state=0)"``); the name ``dataset`` by default.
        imports : iterable of str
            Import lines that expression needs.
        """
        from .code import comparison_code

        return comparison_code(self.estimators, self.settings, dataset=dataset,
                               imports=imports)

    # ------------------------------------------------------------------ beyond the table
    def relationships(self) -> dict[str, dict[str, np.ndarray]]:
        """Each method's ``task_relationships()`` averaged over the trials.

        Returns
        -------
        dict method -> dict key -> ndarray (the mean over trials). A key is kept when every
        trial of the method has it with one shape; methods without any are absent. How close
        each comes to the data's truth: :meth:`agreement`.
        """
        out: dict[str, dict[str, np.ndarray]] = {}
        for method in self.methods:
            per_trial = [matrices for (name, _), matrices
                         in sorted(self.relationships_by_trial.items(),
                                   key=lambda item: item[0][1]) if name == method]
            if not per_trial:
                continue
            averaged = {}
            for key in per_trial[0]:
                stack = [m.get(key) for m in per_trial]
                if all(s is not None and np.shape(s) == np.shape(stack[0]) for s in stack):
                    averaged[key] = np.mean(np.stack(stack), axis=0)
            if averaged:
                out[method] = averaged
        return out

    def agreement(self) -> pd.DataFrame:
        """How close each method's learned task matrices came to the data's truth.

        For every method and ``task_relationships()`` key that has a truth to be judged
        against (:func:`explorer.compare.agreement.truth_for`), the figures of
        :func:`~explorer.compare.agreement.relationship_agreement` on each trial's matrix,
        averaged over the trials (a figure that cannot be computed stays ``nan``, with the
        reason).

        Returns
        -------
        pandas.DataFrame
            Columns ``method, key, truth, sign_agreement, rank_correlation,
            relative_error, n_trials, reason``; no rows when the data have no truth.
        """
        from .agreement import AGREEMENT_KEYS, relationship_agreement, truth_for

        rows = []
        for method in self.methods:
            trials = [matrices for (name, _), matrices in self.relationships_by_trial.items()
                      if name == method]
            keys = sorted({key for matrices in trials for key in matrices})
            for key in keys:
                matrices = [m[key] for m in trials if key in m and np.ndim(m[key]) == 2]
                judged = truth_for(key, np.shape(matrices[0]), self.truth) if matrices else None
                if judged is None:
                    continue
                name, entries = judged
                figures = [relationship_agreement(m, self.truth[name], entries=entries)
                           for m in matrices if np.shape(m) == np.shape(self.truth[name])
                           and np.all(np.isfinite(m))]
                if not figures:
                    continue
                row = {"method": method, "key": key, "truth": name}
                for figure in AGREEMENT_KEYS:
                    values = np.array([f[figure] for f in figures], dtype=float)
                    row[figure] = (float(np.nanmean(values)) if np.isfinite(values).any()
                                   else float("nan"))
                row["n_trials"] = len(figures)
                row["reason"] = "; ".join(sorted({f["reason"] for f in figures if f["reason"]}))
                rows.append(row)
        columns = ["method", "key", "truth", *AGREEMENT_KEYS, "n_trials", "reason"]
        return pd.DataFrame(rows, columns=columns)


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
                  "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                  "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters.

    >>> latex_escape("T0_a & b")
    'T0\\_a \\& b'
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))
