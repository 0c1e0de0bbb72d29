"""``python -m explorer reproduce rmtfl-path``: rMTFL's outlier tasks and shared features
along a lambda grid, and whether cross-validation picks the value the truth would.

Gong, Ye & Zhang (KDD 2012) show one fit (Figure 3, Sec. 6.3.1): the zero rows of P and
zero columns of Q at one pair of penalties. Here :func:`explorer.compare.sweep` fits rMTFL
along a grid of ``lambda_columns`` (the paper's lambda2, the weight of ``||Q^T||_{1,2}``)
on the paper's Sec. 6.1 synthetic data (m = 30 tasks, d = 200 features, 40 shared, 10
outlier tasks, n_i = 200; 30% training, Figure 2's larger ratio), ``lambda_rows`` at the
library's default (0.2 of its lambda_max on each training part), and prints at every value
the test nMSE, the relative error of W against the true coefficients, the precision and
recall of the outlier tasks and of the shared features found, with the 3-fold
cross-validated choice and the value the truth prefers marked; the Note says, from the
run, whether the two coincide and how far apart they are.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data.catalog import make_dataset
from ..models import RobustMTFL
from .harness import cv_folds, job_seeds
from .reporting import ReproductionResult, report, table_text, tidy
from .sweep import MEAN, sweep

__all__ = ["PATH_DATA", "PATH_FAST_DATA", "fold_ratio", "path_note", "run_rmtfl_path"]

#: The paper's Sec. 6.1 data (n_i = 200); --fast: a smaller data set of the same kind.
PATH_DATA = {"n_tasks": 30, "n_outliers": 10, "n_features": 200, "n_shared_features": 40,
             "n_samples_per_task": 200, "noise": 1.0}
PATH_FAST_DATA = {"n_tasks": 15, "n_outliers": 5, "n_features": 60, "n_shared_features": 12,
                  "n_samples_per_task": 60, "noise": 1.0}
TRAIN_FRACTION = 0.3
CV_FOLDS = 3
#: The grid: lambda_columns from its lambda_max (Q = 0) down to this fraction of it, in
#: (full, fast) values, log-spaced.
LOWEST, N_VALUES = 0.1, (12, 8)
PARAM = "lambda_columns"


def _curve(result, quantity: str) -> np.ndarray:
    return result.curve(quantity)["mean"].to_numpy(dtype=float)


def _every_trial(result, quantity: str, target: float) -> np.ndarray:
    """Per value: whether ``quantity`` equals ``target`` in every trial."""
    part = result.frame[(result.frame["quantity"] == quantity)
                        & (result.frame["task"] == MEAN)]
    index = {v: i for i, v in enumerate(result.values)}
    hit = np.ones(len(result.values), dtype=bool)
    for value, group in part.groupby("param_value", sort=False):
        hit[index[value]] = bool(np.all(group["value"].to_numpy() == target))
    return hit


def _fractions(values, top: float) -> str:
    return ", ".join(f"{v / top:.3g}" for v in values)


def fold_ratio(estimator, data, result, random_state: int) -> float:
    """Mean over trial 0's inner-CV folds of lambda2_max on the fold's training rows over
    lambda2_max on the whole training part (the splits and folds :func:`sweep` used)."""
    split_seed, seed = job_seeds(random_state, 0, type(estimator).__name__)
    train, _ = data.split(result.settings["train_fraction"], random_state=split_seed)
    folds = cv_folds(train, result.settings["cv"], np.random.default_rng(seed))
    whole = estimator.lambda_max(*train.arrays())[PARAM]
    return float(np.mean([
        estimator.lambda_max(train.X[folds != k], train.y[folds != k],
                             train.task[folds != k])[PARAM] / whole
        for k in range(result.settings["cv"])]))


def path_note(result, top: float, data, ratio: float) -> str:
    """The Note's sentences on the run: where CV's choice and the truth's best lie, how far
    apart (grid steps, value), what each finds of the outlier tasks and shared features,
    where the test error is lowest, where the outlier set is found exactly and where every
    task is called an outlier; ``ratio``: :func:`fold_ratio`."""
    values = result.values
    cv, best = result.cv_choice(), result.truth_best()
    i_cv, i_best = values.index(cv), values.index(best)
    error = _curve(result, "agreement:W:relative_error")
    counts = [result.cv_choices().count(v) for v in values]
    steps = abs(i_cv - i_best)
    if steps == 0:
        where = (f"CV's choice and the truth's best coincide: lambda2 = {cv:.4g} "
                 f"({cv / top:.3g} lambda2_max)")
    else:
        side = "larger" if cv > best else "smaller"
        where = (f"CV's choice and the truth's best are {steps} grid step"
                 f"{'s' if steps > 1 else ''} apart: CV picks lambda2 = {cv:.4g} "
                 f"({cv / top:.3g} lambda2_max), {max(cv, best) / min(cv, best):.2f} times "
                 f"{side} than the truth's best {best:.4g} ({best / top:.3g} lambda2_max)")

    def found(i: int) -> str:
        return (f"outlier tasks P/R {_curve(result, 'outliers:precision')[i]:.2f}/"
                f"{_curve(result, 'outliers:recall')[i]:.2f}, shared features P/R "
                f"{_curve(result, 'features:precision')[i]:.2f}/"
                f"{_curve(result, 'features:recall')[i]:.2f} "
                f"({_curve(result, 'features:kept')[i]:.1f} kept), test nMSE "
                f"{_curve(result, 'test_error')[i]:.3f}")

    share = float(np.mean(data.truth["outlier_tasks"]))
    exact = _every_trial(result, "outliers:precision", 1.0) & \
        _every_trial(result, "outliers:recall", 1.0)
    everything = _every_trial(result, "outliers:recall", 1.0) & \
        _every_trial(result, "outliers:precision", share)
    exact_text = (f"The outlier set is found exactly in every trial at lambda2/lambda2_max = "
                  f"{_fractions([v for v, e in zip(values, exact, strict=True) if e], top)}"
                  if exact.any() else
                  "At no value of the grid is the outlier set found exactly in every trial")
    all_text = (f"; from {max(v for v, e in zip(values, everything, strict=True) if e) / top:.3g}"
                f" lambda2_max down, every task is called an outlier in every trial "
                f"(precision {share:.2f}, the share of true outliers)"
                if everything.any() else "")
    return (f"{where}. CV's choices over the {result.n_trials} trials, in lambda2_max: "
            + ", ".join(f"{v / top:.3g} ({c} trial{'s' if c > 1 else ''})"
                        for v, c in zip(values, counts, strict=True) if c)
            + f". The truth's best is the lowest relative error of W against "
            f"the true coefficients ({error[i_best]:.3f}; {error[i_cv]:.3f} at CV's choice). "
            f"At CV's choice: {found(i_cv)}; at the truth's best: {found(i_best)}. "
            f"The lowest test nMSE is at {result.best() / top:.3g} lambda2_max. "
            f"{exact_text}{all_text}. On an inner-CV fold (its training rows, "
            f"{1 - 1 / result.settings['cv']:.0%} of a training part) lambda2_max is "
            f"{ratio:.2f} times the training part's (trial 0, mean over the folds), against "
            f"{values[0] / values[1]:.2f} between grid steps: a value of lambda2 is that "
            f"much smaller a share of a fold's lambda2_max than of the training part's.")


def run_rmtfl_path(trials: int, fast: bool, random_state: int) -> ReproductionResult:
    params = PATH_FAST_DATA if fast else PATH_DATA
    data = make_dataset("outlier_tasks", params, random_state=random_state)
    estimator = RobustMTFL(solver="fista", tol=1e-5)
    top = estimator.lambda_max(data.X, data.y, data.task)[PARAM]
    grid = list(np.geomspace(1.0, LOWEST, N_VALUES[fast]) * top)
    result = sweep(estimator, data, PARAM, grid, n_trials=trials,
                   train_fraction=TRAIN_FRACTION, cv=CV_FOLDS, random_state=random_state)
    cv, best = result.cv_choice(), result.truth_best()
    ratio = fold_ratio(estimator, data, result, random_state)
    frame = result.frame[(result.frame["task"] == MEAN)
                         & (result.frame["quantity"] != "fit_time")]
    rows = []
    for value, trial, quantity, figure in frame[["param_value", "trial", "quantity",
                                                 "value"]].itertuples(index=False):
        setting = "cv" if quantity == "cv_choice" else f"{PARAM} {value / top:.4g} x max"
        if np.isfinite(figure):
            rows.append((setting, "rMTFL", trial, "all", quantity, figure))
    rows += [(f"{PARAM} {v / top:.4g} x max", "rMTFL", t, "all", PARAM, v)
             for v in grid for t in range(trials)]

    def pr(kind: str) -> list[str]:
        return [f"{p:.2f}/{r:.2f}" for p, r in zip(_curve(result, f"{kind}:precision"),
                                                    _curve(result, f"{kind}:recall"),
                                                    strict=True)]

    error = result.curve("test_error")
    table = pd.DataFrame({
        "lambda2": [f"{v:.4g}" for v in grid],
        "test nMSE": [f"{m:.3f}" + (f" ± {s:.3f}" if trials > 1 else "")
                      for m, s in zip(error["mean"], error["std"], strict=True)],
        "baseline": [f"{m:.3f}" for m in result.curve("baseline_error")["mean"]],
        "W rel. err": [f"{m:.3f}" for m in _curve(result, "agreement:W:relative_error")],
        "outliers P/R": pr("outliers"), "features P/R": pr("features"),
        "kept": [f"{m:.1f}" for m in _curve(result, "features:kept")],
        "marked": [" + ".join(name for name, v in (("CV", cv), ("truth", best)) if v == g)
                   for g in grid]},
        index=pd.Index([f"{v / top:.3g}" for v in grid], name="lambda2/lambda2_max"))
    size = ("m=15, d=60, n_i=60, 12 shared features, 5 outlier tasks" if fast else
            "the paper's m=30, d=200, n_i=200, 40 shared features, 10 outlier tasks")
    note = f"""Data from our generator of Sec. 6.1 ({size}), one data set, {trials} random
    splits at {TRAIN_FRACTION:.0%} training. The paper shows one fit (Figure 3, n_i = 20, its
    lambda1 and lambda2) and no path: we sweep lambda2 ({PARAM}) over {len(grid)}
    log-spaced values from its lambda_max ({top:.4g}, Q = 0) down to {LOWEST:g} of it,
    lambda1 (lambda_rows) at the library's default, 0.2 of its lambda_max on each training
    part; MFISTA stopped at a relative objective change of 1e-5 as in the paper,
    warm-started along the path. 'P/R': precision/recall of the outlier tasks (nonzero
    columns of Q) and of the shared features (nonzero rows of P) against the truth; 'kept':
    features kept; 'W rel. err': ||W/||W|| - W*/||W*|||| against the true coefficients W*;
    'baseline': per-task ridge on the same splits; means over the trials. 'CV': the value
    3-fold cross-validation (nMSE) on the training part chose most often; 'truth': the
    value with the lowest W rel. err. {path_note(result, top, data, ratio)}"""
    text = report("rMTFL along lambda2: outlier tasks and shared features found, "
                  "cross-validation against the truth (Gong, Ye & Zhang 2012, Figure 3 "
                  "setting)",
                  [table_text(table), "paper: one fit (Figure 3, Sec. 6.3.1): 164 zero rows "
                   "in P and 21 zero columns in Q (truth 160 and 20); no lambda path."], note)
    return ReproductionResult(tidy("rmtfl-path", rows), text)
