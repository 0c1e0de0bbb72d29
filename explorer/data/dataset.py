"""`MultiTaskDataset`: stacked multi-task arrays plus what a generator knows (the truth).

Layout (DESIGN.md, "The multi-task data contract"): one row per example,
``X`` (n_samples, n_features), ``y`` (n_samples,), ``task`` (n_samples,) ints ``0..m-1``.
Tasks may have different sizes and, for classification, different label sets.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .validation import check_kind, check_multitask, check_names, check_scalar

#: Largest CSV accepted by :func:`read_csv` (bytes). Uploads in the app use the same limit.
MAX_CSV_BYTES = 20 * 1024 * 1024

TRUTH_KEYS = ("task_relation", "outlier_tasks", "shared_features", "clusters", "coef")


def _check_truth(truth: dict | None, n_tasks: int, n_features: int) -> dict:
    if truth is None:
        return {}
    if not isinstance(truth, dict):
        raise ValueError(f"truth must be a dict; got {type(truth).__name__}.")
    shapes = {
        "task_relation": (n_tasks, n_tasks),
        "outlier_tasks": (n_tasks,),
        "shared_features": (n_features,),
        "clusters": (n_tasks,),
        "coef": (n_features, n_tasks),
    }
    out = {}
    for key, value in truth.items():
        arr = np.asarray(value)
        if key in shapes and arr.shape != shapes[key]:
            raise ValueError(
                f"truth[{key!r}] must have shape {shapes[key]}; got shape {arr.shape}."
            )
        out[key] = arr
    return out


@dataclass(frozen=True, eq=False)
class MultiTaskDataset:
    """Stacked examples of m tasks, with optional task-level features and ground truth.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    task : array-like of int, shape (n_samples,)
        Task id of each row, ``0..m-1``; every task has at least one example.
    task_features : array-like of shape (n_tasks, n_task_features), optional
        Task-level features (TL-TF).
    task_names, feature_names : list of str, optional
    truth : dict, optional
        What a generator knows: ``task_relation`` (m, m) signed, ``outlier_tasks`` (m,)
        bool, ``shared_features`` (d,) bool, ``clusters`` (m,) int, ``coef`` (d, m).
    kind : {"classification", "regression"}
    """

    X: np.ndarray
    y: np.ndarray
    task: np.ndarray
    task_features: np.ndarray | None = None
    task_names: list[str] | None = None
    feature_names: list[str] | None = None
    truth: dict = field(default_factory=dict)
    kind: str = "classification"

    def __init__(self, X, y, task, *, task_features=None, task_names=None, feature_names=None,
                 truth=None, kind="classification"):
        check_kind(kind)
        X, y, task = check_multitask(X, y, task, kind=kind, who="MultiTaskDataset")
        n_tasks = int(task.max()) + 1
        if task_names is not None:
            n_tasks = max(n_tasks, len(task_names))
            # Re-check with the declared count so a named task without rows is reported.
            check_multitask(X, None, task, n_tasks=n_tasks, who="MultiTaskDataset")
        if task_features is not None:
            tf = np.asarray(task_features, dtype=np.float64)
            if tf.ndim != 2 or tf.shape[0] != n_tasks:
                raise ValueError(
                    f"task_features must have shape (n_tasks={n_tasks}, n_task_features); "
                    f"got shape {tf.shape}."
                )
            if not np.all(np.isfinite(tf)):
                raise ValueError("task_features must be finite; got NaN or infinity.")
            task_features = tf
        for name, value in (("X", X), ("y", y), ("task", task)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "task_features", task_features)
        object.__setattr__(self, "task_names", check_names(task_names, n_tasks, "task_names",
                                                           "task "))
        object.__setattr__(self, "feature_names", check_names(
            feature_names, X.shape[1], "feature_names", "x"))
        object.__setattr__(self, "truth", _check_truth(truth, n_tasks, X.shape[1]))
        object.__setattr__(self, "kind", kind)

    # ------------------------------------------------------------------ shape facts
    @property
    def n_tasks(self) -> int:
        return len(self.task_names)

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def task_sizes(self) -> np.ndarray:
        """Examples per task, shape (n_tasks,)."""
        return np.bincount(self.task, minlength=self.n_tasks)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(X, y, task)``, ready for ``estimator.fit(*dataset.arrays())``."""
        return self.X, self.y, self.task

    def task_data(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """``(X_t, y_t)`` of task ``t``."""
        mask = self.task == t
        return self.X[mask], self.y[mask]

    def __repr__(self) -> str:
        return (f"MultiTaskDataset({self.kind}, n_tasks={self.n_tasks}, "
                f"n_samples={self.n_samples}, n_features={self.n_features}, "
                f"truth={sorted(self.truth)})")

    def _replace_rows(self, rows: np.ndarray, task_map: np.ndarray | None = None,
                      task_subset: np.ndarray | None = None) -> MultiTaskDataset:
        task = self.task[rows] if task_map is None else task_map[self.task[rows]]
        truth = dict(self.truth)
        names = self.task_names
        tf = self.task_features
        if task_subset is not None:
            names = [self.task_names[t] for t in task_subset]
            tf = None if tf is None else tf[task_subset]
            for key in ("outlier_tasks", "clusters"):
                if key in truth:
                    truth[key] = truth[key][task_subset]
            if "task_relation" in truth:
                truth["task_relation"] = truth["task_relation"][np.ix_(task_subset, task_subset)]
            if "coef" in truth:
                truth["coef"] = truth["coef"][:, task_subset]
        return MultiTaskDataset(self.X[rows], self.y[rows], task, task_features=tf,
                                task_names=names, feature_names=self.feature_names,
                                truth=truth, kind=self.kind)

    # ------------------------------------------------------------------ operations
    def split(self, train_fraction: float = 0.7, random_state=None
              ) -> tuple[MultiTaskDataset, MultiTaskDataset]:
        """Split every task into train and test parts.

        Classification splits are stratified per task, and each class of a task keeps at
        least one example in train (and, when it has two or more, one in test). Every task
        keeps at least one example on each side, so a task needs two examples.

        Returns
        -------
        train, test : MultiTaskDataset
        """
        check_scalar(train_fraction, "train_fraction", low=0, high=1,
                     low_inclusive=False, high_inclusive=False)
        rng = np.random.default_rng(random_state)
        train_rows: list[np.ndarray] = []
        test_rows: list[np.ndarray] = []
        for t in range(self.n_tasks):
            rows = np.flatnonzero(self.task == t)
            if rows.size < 2:
                raise ValueError(
                    f"split needs at least 2 examples in every task; task {t} "
                    f"({self.task_names[t]!r}) has {rows.size}."
                )
            groups = [rows]
            if self.kind == "classification":
                labels = self.y[rows]
                groups = [rows[labels == c] for c in np.unique(labels)]
            task_train, task_test = [], []
            for group in groups:
                group = rng.permutation(group)
                n_train = int(round(train_fraction * group.size))
                n_train = min(max(n_train, 1), max(group.size - 1, 1))
                task_train.append(group[:n_train])
                task_test.append(group[n_train:])
            tr = np.concatenate(task_train)
            te = np.concatenate(task_test)
            if te.size == 0:  # every class a singleton: move one example to test
                te, tr = tr[-1:], tr[:-1]
            train_rows.append(tr)
            test_rows.append(te)
        train = np.sort(np.concatenate(train_rows))
        test = np.sort(np.concatenate(test_rows))
        return self._replace_rows(train), self._replace_rows(test)

    def subset(self, tasks: Sequence[int]) -> MultiTaskDataset:
        """The dataset restricted to ``tasks``, renumbered ``0..len(tasks)-1`` in that order."""
        tasks_arr = np.asarray(tasks)
        if tasks_arr.ndim != 1 or tasks_arr.size == 0:
            raise ValueError(f"tasks must be a non-empty list of task ids; got {tasks!r}.")
        tasks_arr = check_task_ids_in_range(tasks_arr, self.n_tasks)
        if np.unique(tasks_arr).size != tasks_arr.size:
            raise ValueError(f"tasks must not repeat a task id; got {tasks_arr.tolist()}.")
        task_map = np.full(self.n_tasks, -1, dtype=np.intp)
        task_map[tasks_arr] = np.arange(tasks_arr.size)
        rows = np.flatnonzero(task_map[self.task] >= 0)
        # keep the requested order of tasks, rows of each task in their original order
        order = np.argsort(task_map[self.task[rows]], kind="stable")
        return self._replace_rows(rows[order], task_map, tasks_arr)

    # ------------------------------------------------------------------ tables
    def to_frame(self) -> pd.DataFrame:
        """One row per example: the feature columns, then ``task`` (its name) and ``y``."""
        df = pd.DataFrame(self.X, columns=self.feature_names)
        df["task"] = np.asarray(self.task_names, dtype=object)[self.task]
        df["y"] = self.y
        return df

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, task: str = "task", target: str = "y",
                   features: Sequence[str] | None = None,
                   kind: str | None = None) -> MultiTaskDataset:
        """Build a dataset from a table with a task column and a target column.

        Task values may be ids or names; names are numbered in order of first appearance
        (integers keep their numeric order). ``kind`` defaults to "regression" when the
        target is float with non-integer values and to "classification" otherwise.
        """
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"df must be a pandas DataFrame; got {type(df).__name__}.")
        if len(df) == 0:
            raise ValueError("the table has no rows (only a header?); got 0 rows with columns "
                             f"{list(map(str, df.columns))[:20]}.")
        for arg, col in (("task", task), ("target", target)):
            if col not in df.columns:
                raise ValueError(
                    f"{arg}={col!r} is not a column of the table; columns are "
                    f"{list(map(str, df.columns))[:20]}."
                )
        if features is None:
            features = [c for c in df.columns if c not in (task, target)]
        else:
            missing = [c for c in features if c not in df.columns]
            if missing:
                raise ValueError(f"features {missing} are not columns of the table.")
        if not features:
            raise ValueError("the table needs at least one feature column besides task and target.")
        non_numeric = [c for c in features if not pd.api.types.is_numeric_dtype(df[c])]
        if non_numeric:
            raise ValueError(
                f"feature columns must be numeric; {non_numeric[:5]} are not (first value "
                f"{df[non_numeric[0]].iloc[0]!r})."
            )
        raw_task = df[task]
        if raw_task.isna().any():
            raise ValueError(f"task column {task!r} has missing values.")
        if pd.api.types.is_integer_dtype(raw_task):
            names_sorted = np.unique(raw_task.to_numpy())
            task_ids = np.searchsorted(names_sorted, raw_task.to_numpy())
            task_names = [str(v) for v in names_sorted]
        else:
            codes, uniques = pd.factorize(raw_task.astype(str))
            task_ids, task_names = codes, [str(u) for u in uniques]
        y = df[target].to_numpy()
        if df[target].isna().any():
            raise ValueError(f"target column {target!r} has missing values.")
        if kind is None:
            is_float = pd.api.types.is_float_dtype(df[target])
            kind = "regression" if is_float and np.any(y != np.round(y)) else "classification"
        return cls(df[list(features)].to_numpy(dtype=np.float64), y, task_ids,
                   task_names=task_names, feature_names=[str(f) for f in features], kind=kind)

    def to_csv(self, path_or_buffer=None) -> str | None:
        """Write the :meth:`to_frame` table as CSV (the upload format of the app)."""
        return self.to_frame().to_csv(path_or_buffer, index=False)


def check_task_ids_in_range(tasks: np.ndarray, n_tasks: int) -> np.ndarray:
    if tasks.dtype.kind not in "iu" or tasks.min() < 0 or tasks.max() >= n_tasks:
        raise ValueError(f"tasks must be integer ids in 0..{n_tasks - 1}; got {tasks.tolist()}.")
    return tasks.astype(np.intp)


def read_csv(path_or_buffer: Any, *, task: str = "task", target: str = "y",
             features: Sequence[str] | None = None, kind: str | None = None,
             max_bytes: int = MAX_CSV_BYTES) -> MultiTaskDataset:
    """Read a multi-task CSV (columns: features, a task column and a target column).

    ``path_or_buffer`` is a path, a text/bytes buffer or the bytes themselves (an upload).
    Files larger than ``max_bytes`` are refused before parsing; malformed files raise a
    ``ValueError`` that says what is wrong.
    """
    if isinstance(path_or_buffer, (bytes, bytearray)):
        data = bytes(path_or_buffer)
    elif isinstance(path_or_buffer, (str, os.PathLike)):
        size = os.path.getsize(path_or_buffer)
        if size > max_bytes:
            raise ValueError(f"the CSV file is over the size limit max_bytes={max_bytes}; "
                             f"got {size} bytes.")
        with open(path_or_buffer, "rb") as fh:
            data = fh.read()
    elif hasattr(path_or_buffer, "read"):
        data = path_or_buffer.read(max_bytes + 1)
        if isinstance(data, str):
            data = data.encode()
    else:
        raise ValueError(
            f"path_or_buffer must be a path, bytes or a file object; got "
            f"{type(path_or_buffer).__name__}."
        )
    if len(data) > max_bytes:
        # a file object is read only up to max_bytes + 1: its full size is unknown
        got = f"at least {len(data)}" if hasattr(path_or_buffer, "read") else f"{len(data)}"
        raise ValueError(f"the CSV data is over the size limit max_bytes={max_bytes}; "
                         f"got {got} bytes.")
    if not data.strip():
        raise ValueError("the CSV data is empty.")
    try:
        df = pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"the CSV data could not be parsed: {exc}".strip()) from None
    return MultiTaskDataset.from_frame(df, task=task, target=target, features=features, kind=kind)
