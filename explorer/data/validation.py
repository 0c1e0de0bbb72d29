"""The one validation helper of the data contract.

Every public entry point (datasets, estimators, generators, the app) funnels user input
through :func:`check_multitask` so that bad input fails early with a ``ValueError`` that
names the argument, what was expected and what came, never with a NumPy traceback from
deep inside a solver.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np

KINDS = ("classification", "regression")


def _describe(value: Any) -> str:
    """A short, safe description of a received value for error messages."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {_describe(kind)}.")
    return kind


def check_scalar(
    value: Any,
    name: str,
    *,
    kind: type = Real,
    low: float | None = None,
    high: float | None = None,
    low_inclusive: bool = True,
    high_inclusive: bool = True,
) -> Any:
    """Validate a scalar parameter: type and range, with the sklearn-style message.

    >>> check_scalar(0.5, "noise", low=0)
    0.5
    """
    is_bool = isinstance(value, (bool, np.bool_))
    if is_bool or not isinstance(value, kind) or (
        isinstance(value, Real) and not np.isfinite(value)
    ):
        what = "an integer" if kind is Integral else "a finite number"
        raise ValueError(f"{name} must be {what}; got {_describe(value)}.")
    too_low = low is not None and (value < low if low_inclusive else value <= low)
    too_high = high is not None and (value > high if high_inclusive else value >= high)
    if too_low or too_high:
        lo = "(-inf" if low is None else ("[" if low_inclusive else "(") + f"{low}"
        hi = "inf)" if high is None else f"{high}" + ("]" if high_inclusive else ")")
        raise ValueError(f"{name} must be in the range {lo}, {hi}; got {value!r}.")
    return value


def check_task_ids(task: Any, n_samples: int | None = None, *, n_tasks: int | None = None,
                   name: str = "task") -> np.ndarray:
    """Validate task ids: a 1-D array of non-negative integers (< n_tasks if given)."""
    arr = np.asarray(task)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array of task ids of shape (n_samples,); "
            f"got shape {arr.shape}."
        )
    if n_samples is not None and arr.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {arr.shape[0]} entries but X has {n_samples} rows; "
            "expected one task id per example."
        )
    if arr.size == 0:
        return arr.astype(np.intp)
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must hold integer task ids 0..m-1; got values of dtype {arr.dtype} "
            f"(e.g. {arr.flat[0].item()!r})."
        )
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            bad = arr[~np.isfinite(arr) | (arr != np.round(arr))][0]
            raise ValueError(f"{name} must hold integer task ids 0..m-1; got {bad.item()!r}.")
    ids = arr.astype(np.intp)
    if ids.min() < 0:
        raise ValueError(f"{name} ids must be non-negative integers; got {int(ids.min())}.")
    if n_tasks is not None and ids.max() >= n_tasks:
        raise ValueError(
            f"{name} ids must be in 0..{n_tasks - 1} (the model was fitted on {n_tasks} "
            f"tasks); got {int(ids.max())}."
        )
    return ids


def _check_design(X: Any, prefix: str, n_features: int | None) -> np.ndarray:
    """``X`` as a finite float64 array of shape (n_samples, n_features), or a ValueError."""
    if X is None:
        raise ValueError(f"{prefix}X must be an array of shape (n_samples, n_features); got None.")
    try:
        X_arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{prefix}X must be numeric, of shape (n_samples, n_features); "
            f"it could not be read as numbers ({exc})."
        ) from None
    if X_arr.ndim != 2:
        raise ValueError(
            f"{prefix}X must be a 2-D array of shape (n_samples, n_features); "
            f"got shape {X_arr.shape}."
        )
    if X_arr.shape[0] == 0:
        raise ValueError(f"{prefix}X must have at least one row; got shape {X_arr.shape}.")
    if X_arr.shape[1] == 0:
        raise ValueError(f"{prefix}X must have at least one feature; got shape {X_arr.shape}.")
    # One sum is a fast finite test (NaN and inf propagate); the exact place only on failure.
    if not np.isfinite(X_arr.sum()) and not np.all(np.isfinite(X_arr)):
        row, col = np.argwhere(~np.isfinite(X_arr))[0]
        raise ValueError(
            f"{prefix}X must be finite; got {X_arr[row, col]} at row {row}, column {col}."
        )
    if n_features is not None and X_arr.shape[1] != n_features:
        raise ValueError(
            f"{prefix}X has {X_arr.shape[1]} features, but the model expects {n_features} "
            "features as input."
        )
    return X_arr


def check_shared_design(X: Any, Y: Any, *, who: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Validate regression tasks that share one design: ``X`` (n, d) and ``Y`` (n, m).

    Column ``t`` of ``Y`` holds task ``t``'s responses to the rows of ``X`` (the
    scikit-learn ``MultiTaskLasso`` layout).

    >>> X, Y = check_shared_design([[1.0, 2.0], [3.0, 4.0]], [[1.0, 0.0], [2.0, 1.0]])
    >>> X.shape, Y.shape
    ((2, 2), (2, 2))
    >>> check_shared_design([[1.0], [2.0]], [1.0, 2.0])
    Traceback (most recent call last):
    ...
    ValueError: Y must be a 2-D array of shape (n_samples=2, n_tasks); got shape (2,).
    """
    prefix = f"{who}: " if who else ""
    X_arr = _check_design(X, prefix, None)
    n = X_arr.shape[0]
    try:
        Y_arr = np.asarray(Y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{prefix}Y must hold numbers, of shape (n_samples={n}, n_tasks); "
                         f"it could not be read as numbers ({exc}).") from None
    if Y_arr.ndim != 2 or Y_arr.shape[0] != n or Y_arr.shape[1] == 0:
        raise ValueError(f"{prefix}Y must be a 2-D array of shape (n_samples={n}, n_tasks); "
                         f"got shape {Y_arr.shape}.")
    if not np.all(np.isfinite(Y_arr)):
        row, col = np.argwhere(~np.isfinite(Y_arr))[0]
        raise ValueError(f"{prefix}Y must be finite; got {Y_arr[row, col]} at row {row}, "
                         f"task {col}.")
    return X_arr, Y_arr


def check_multitask(
    X: Any,
    y: Any = None,
    task: Any = None,
    *,
    kind: str | None = None,
    n_tasks: int | None = None,
    n_features: int | None = None,
    min_classes: int | None = None,
    require_all_tasks: bool = True,
    who: str = "",
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Validate stacked multi-task arrays and return them as NumPy arrays.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Examples of all tasks, stacked. Must be finite.
    y : array-like of shape (n_samples,) or None
        Targets. Regression targets must be finite numbers; classification labels may be
        any hashable values (numbers or strings).
    task : array-like of shape (n_samples,)
        Integer task id of each row, ``0..m-1``.
    kind : {"classification", "regression"} or None
        What ``y`` must support. ``None`` skips the target checks (prediction time).
    n_tasks : int or None
        At fit time: the task count (defaults to ``max(task) + 1``). At predict time: the
        fitted count; ids must be below it.
    n_features : int or None
        Expected number of columns (the fitted count at predict time).
    min_classes : int or None
        For classification: the least number of distinct labels each task must have.
    require_all_tasks : bool
        When True (fit time), every task ``0..m-1`` must have at least one example.
    who : str
        Name of the caller for messages (e.g. ``"RobustMTFL"``).

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
    y : ndarray of shape (n_samples,) or None
    task : ndarray of intp, shape (n_samples,)
    """
    prefix = f"{who}: " if who else ""
    X_arr = _check_design(X, prefix, n_features)
    n_samples = X_arr.shape[0]
    if task is None:
        raise ValueError(
            f"{prefix}task must be given: a 1-D array of integer task ids of shape "
            "(n_samples,)."
        )
    task_arr = check_task_ids(task, n_samples, n_tasks=None if require_all_tasks else n_tasks)
    m = n_tasks if n_tasks is not None else int(task_arr.max()) + 1
    if require_all_tasks:
        if task_arr.max() >= m:
            raise ValueError(
                f"{prefix}task ids must be in 0..{m - 1}; got {int(task_arr.max())}."
            )
        counts = np.bincount(task_arr, minlength=m)
        if np.any(counts == 0):
            empty = np.flatnonzero(counts == 0)
            raise ValueError(
                f"{prefix}every task 0..{m - 1} needs at least one example; "
                f"task {int(empty[0])} has none (tasks without examples: {empty.tolist()})."
            )

    y_arr = None
    if y is not None:
        y_arr = np.asarray(y)
        if y_arr.ndim != 1:
            raise ValueError(
                f"{prefix}y must be a 1-D array of shape (n_samples,); got shape {y_arr.shape}."
            )
        if y_arr.shape[0] != n_samples:
            raise ValueError(
                f"{prefix}y has {y_arr.shape[0]} entries but X has {n_samples} rows; "
                "expected one target per example."
            )
        if kind is not None:
            check_kind(kind)
        if kind == "regression":
            try:
                y_arr = y_arr.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{prefix}y must hold numbers for regression; got dtype {y_arr.dtype}."
                ) from None
            if not np.all(np.isfinite(y_arr)):
                i = int(np.flatnonzero(~np.isfinite(y_arr))[0])
                raise ValueError(f"{prefix}y must be finite; got {y_arr[i]} at row {i}.")
        elif kind == "classification":
            if y_arr.dtype.kind == "f" and not np.all(np.isfinite(y_arr)):
                i = int(np.flatnonzero(~np.isfinite(y_arr))[0])
                raise ValueError(
                    f"{prefix}y must hold class labels; got {y_arr[i]} at row {i}."
                )
            if min_classes is not None:
                for t in np.unique(task_arr):
                    labels = np.unique(y_arr[task_arr == t])
                    if labels.size < min_classes:
                        raise ValueError(
                            f"{prefix}task {int(t)} has {labels.size} class(es) "
                            f"({labels.tolist()}); classification needs at least "
                            f"{min_classes} classes in every task."
                        )
    return X_arr, y_arr, task_arr


def check_names(names: Sequence[str] | None, count: int, name: str,
                default_prefix: str) -> list[str]:
    """Validate (or create) a list of ``count`` display names."""
    if names is None:
        return [f"{default_prefix}{i}" for i in range(count)]
    names = [str(n) for n in names]
    if len(names) != count:
        raise ValueError(f"{name} must have {count} entries; got {len(names)}.")
    if len(set(names)) != count:  # a name must say which task/feature it is (CSV columns too)
        repeated = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{name} must be distinct; got {repeated[:5]} more than once.")
    return names


def check_task_features(task_features: Any, n_tasks: int, *,
                        name: str = "task_features") -> np.ndarray | None:
    """Validate task-level features: finite numbers of shape (n_tasks, n_task_features).

    >>> check_task_features([[1.0], [2.0]], 2).shape
    (2, 1)
    >>> check_task_features([[1.0]], 2)
    Traceback (most recent call last):
    ...
    ValueError: task_features must have shape (n_tasks=2, n_task_features); got shape (1, 1).
    """
    if task_features is None:
        return None
    try:
        tf = np.array(task_features, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric, of shape (n_tasks={n_tasks}, "
                         f"n_task_features); it could not be read as numbers ({exc}).") from None
    if tf.ndim != 2 or tf.shape[0] != n_tasks or tf.shape[1] == 0:
        raise ValueError(f"{name} must have shape (n_tasks={n_tasks}, n_task_features); "
                         f"got shape {tf.shape}.")
    if not np.all(np.isfinite(tf)):
        row, col = np.argwhere(~np.isfinite(tf))[0]
        raise ValueError(f"{name} must be finite; got {tf[row, col]} at task {row}, "
                         f"column {col}.")
    return tf


# ---------------------------------------------------------------------- truth
#: Every key a dataset's ``truth`` may hold: the axes of its array ("task", "feature" or
#: "sample", one per dimension), its value type and what it means. Axes say how the key
#: follows the rows and tasks: "sample" axes are cut with the rows by ``split``/``subset``,
#: "task" axes are re-indexed by ``subset``, "feature" axes stay.
TRUTH_SPEC: dict[str, tuple[tuple[str, ...], str, str]] = {
    "task_relation": (("task", "task"), "relation",
                      "signed relation of two tasks: +1 related, -1 negated, 0 unrelated; "
                      "the diagonal is +1"),
    "task_similarity": (("task", "task"), "cosine",
                        "true cosine of the task coefficient vectors, in [-1, 1]"),
    "outlier_tasks": (("task",), "bool", "True for a task that does not share the features"),
    "shared_features": (("feature",), "bool", "True for a feature the regular tasks share"),
    "clusters": (("task",), "int", "cluster id (>= 0) of each task"),
    "coef": (("feature", "task"), "float", "true coefficients, one column per task"),
    "P": (("feature", "task"), "float", "rMTFL shared part of coef (coef = P + Q)"),
    "Q": (("feature", "task"), "float", "rMTFL outlier part of coef (coef = P + Q)"),
    "local_region": (("sample",), "bool",
                     "True for an example in the region where the tasks' labels are related"),
}

_AXIS_NAMES = {"task": "n_tasks", "feature": "n_features", "sample": "n_samples"}


def check_truth(truth: Any, *, n_tasks: int, n_features: int, n_samples: int) -> dict:
    """Validate a ``truth`` dict against :data:`TRUTH_SPEC`; return read-only copies.

    Every key must be known; arrays must have the documented shape and values: relations
    in {-1, 0, 1} with +1 on the diagonal, similarities finite in [-1, 1], masks boolean
    (or 0/1), cluster ids non-negative integers, coefficients finite.

    >>> t = check_truth({"outlier_tasks": [0, 1]}, n_tasks=2, n_features=3, n_samples=4)
    >>> t["outlier_tasks"]
    array([False,  True])
    >>> check_truth({"task_relation": [[1, 0], [0, 0]]}, n_tasks=2, n_features=3,
    ...             n_samples=4)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: truth['task_relation'] must have +1 on its diagonal ...; got [1, 0].
    """
    if truth is None:
        return {}
    if not isinstance(truth, dict):
        raise ValueError(f"truth must be a dict; got {type(truth).__name__}.")
    sizes = {"task": n_tasks, "feature": n_features, "sample": n_samples}
    out = {}
    for key, value in truth.items():
        if key not in TRUTH_SPEC:
            raise ValueError(f"truth has an unknown key {key!r}; known keys are "
                             f"{sorted(TRUTH_SPEC)}.")
        axes, what, _ = TRUTH_SPEC[key]
        name = f"truth[{key!r}]"
        shape = tuple(sizes[a] for a in axes)
        expected = "(" + ", ".join(f"{_AXIS_NAMES[a]}={sizes[a]}" for a in axes) + \
            ("," if len(axes) == 1 else "") + ")"
        arr = np.array(value)
        if arr.shape != shape:
            raise ValueError(f"{name} must have shape {expected}, i.e. {shape}; "
                             f"got shape {arr.shape}.")
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric; got dtype {arr.dtype}.")
        if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} must be finite; got {arr[~np.isfinite(arr)][0]}.")
        if what == "relation":
            if not np.all(np.isin(arr, (-1, 0, 1))):
                bad = arr[~np.isin(arr, (-1, 0, 1))][0]
                raise ValueError(f"{name} must hold only -1, 0 and +1; got {bad}.")
            if not np.all(np.diagonal(arr) == 1):
                raise ValueError(f"{name} must have +1 on its diagonal (a task is related to "
                                 f"itself); got {np.diagonal(arr).tolist()}.")
            if not np.array_equal(arr, arr.T):
                raise ValueError(f"{name} must be symmetric.")
            arr = arr.astype(np.int8)
        elif what == "cosine":
            arr = arr.astype(np.float64)
            if np.any(np.abs(arr) > 1 + 1e-9):
                raise ValueError(f"{name} must be in [-1, 1]; got {arr[np.abs(arr) > 1][0]}.")
            arr = np.clip(arr, -1.0, 1.0)
        elif what == "bool":
            if arr.dtype.kind != "b":
                if not np.all(np.isin(arr, (0, 1))):
                    raise ValueError(f"{name} must be a boolean mask (or 0/1); got "
                                     f"{arr[~np.isin(arr, (0, 1))][0]}.")
                arr = arr.astype(bool)
        elif what == "int":
            if arr.dtype.kind == "b" or np.any(arr != np.round(arr)) or np.any(arr < 0):
                raise ValueError(f"{name} must hold non-negative integer ids; got "
                                 f"{arr.tolist()[:10]}.")
            arr = arr.astype(np.intp)
        else:
            arr = arr.astype(np.float64)
        arr.setflags(write=False)
        out[key] = arr
    return out


def subset_truth(truth: dict, *, rows: np.ndarray | None = None,
                 tasks: np.ndarray | None = None) -> dict:
    """``truth`` following a selection: sample axes cut to ``rows``, task axes to ``tasks``.

    Feature axes stay. ``None`` leaves that kind of axis as it is.
    """
    out = {}
    for key, value in truth.items():
        axes = TRUTH_SPEC[key][0]
        for axis_index, axis in enumerate(axes):
            pick = {"sample": rows, "task": tasks}.get(axis)
            if pick is not None:
                value = np.take(value, pick, axis=axis_index)
        out[key] = value
    return out
