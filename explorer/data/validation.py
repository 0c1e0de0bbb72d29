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
    n_samples = X_arr.shape[0]
    if n_samples == 0:
        raise ValueError(f"{prefix}X must have at least one row; got shape {X_arr.shape}.")
    if X_arr.shape[1] == 0:
        raise ValueError(f"{prefix}X must have at least one feature; got shape {X_arr.shape}.")
    if not np.all(np.isfinite(X_arr)):
        row, col = np.argwhere(~np.isfinite(X_arr))[0]
        raise ValueError(
            f"{prefix}X must be finite; got {X_arr[row, col]} at row {row}, column {col}."
        )
    if n_features is not None and X_arr.shape[1] != n_features:
        raise ValueError(
            f"{prefix}X has {X_arr.shape[1]} features, but the model expects {n_features} "
            "features as input."
        )
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
    return names
