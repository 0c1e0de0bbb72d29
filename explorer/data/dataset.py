"""`MultiTaskDataset`: stacked multi-task arrays plus what a generator knows (the truth).

Layout (docs/DESIGN.md, "The multi-task data contract"): one row per example,
``X`` (n_samples, n_features), ``y`` (n_samples,), ``task`` (n_samples,) ints ``0..m-1``.
Tasks may have different sizes and, for classification, different label sets.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .validation import (
    TRUTH_SPEC,
    check_kind,
    check_multitask,
    check_names,
    check_scalar,
    check_task_features,
    check_truth,
    subset_truth,
)

#: pandas < 3 parses a float to within one ulp unless told to round-trip (3's default, where
#: the option is deprecated): a CSV written by :meth:`MultiTaskDataset.to_csv` reads back exact.
_EXACT_FLOATS = ({"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3
                 else {})

#: Largest CSV accepted by :func:`read_csv` (bytes). Uploads in the app use the same limit.
MAX_CSV_BYTES = 20 * 1024 * 1024

#: The truth keys a dataset accepts (see :data:`explorer.data.validation.TRUTH_SPEC`).
TRUTH_KEYS = tuple(TRUTH_SPEC)

#: Columns of a CSV/table whose name starts with this prefix are task features.
TASK_FEATURE_PREFIX = "tf_"

#: First line of a CSV written by :meth:`MultiTaskDataset.to_csv`: this prefix and a JSON
#: object (``{"kind": ..., "task_names": [...]}``).
CSV_HEADER_PREFIX = "# mtl-explorer "


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
        What a generator knows, every key validated (unknown keys are refused):
        ``task_relation`` (m, m) in {-1, 0, +1} with +1 on the diagonal,
        ``task_similarity`` (m, m) in [-1, 1] (true cosine of the task coefficients),
        ``outlier_tasks`` (m,) bool, ``shared_features`` (d,) bool, ``clusters`` (m,) int,
        ``coef`` (d, m), ``P`` and ``Q`` (d, m) (rMTFL's parts, ``coef = P + Q``),
        ``local_region`` (n_samples,) bool (one entry per row). Per-row keys follow the
        rows through ``split``/``subset``, per-task keys follow ``subset``'s tasks.
        See :data:`explorer.data.validation.TRUTH_SPEC`.
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
        task_features = check_task_features(task_features, n_tasks)
        if task_features is not None:
            task_features.setflags(write=False)
        for name, value in (("X", X), ("y", y), ("task", task)):
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "task_features", task_features)
        object.__setattr__(self, "task_names", check_names(task_names, n_tasks, "task_names",
                                                           "task "))
        object.__setattr__(self, "feature_names", check_names(
            feature_names, X.shape[1], "feature_names", "x"))
        object.__setattr__(self, "truth", check_truth(
            truth, n_tasks=n_tasks, n_features=X.shape[1], n_samples=X.shape[0]))
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
        truth = subset_truth(self.truth, rows=rows, tasks=task_subset)
        names = self.task_names
        tf = self.task_features
        if task_subset is not None:
            names = [self.task_names[t] for t in task_subset]
            tf = None if tf is None else tf[task_subset]
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

    def relabel(self, *, task_names: Sequence[str] | None = None,
                truth: dict | None = None) -> MultiTaskDataset:
        """The same examples under other task names and/or another truth (``{}``: none).

        The arrays are shared, not copied (they are read-only), so views can tell that only
        the names and the truth changed (the app's "hide the truth" switch).

        >>> data = MultiTaskDataset([[0.0], [1.0]], [0, 1], [0, 1], task_names=["a", "b"],
        ...                         truth={"task_relation": [[1, -1], [-1, 1]]})
        >>> hidden = data.relabel(task_names=["T0", "T1"], truth={})
        >>> hidden.task_names, hidden.truth, hidden.X is data.X
        (['T0', 'T1'], {}, True)
        """
        copy = object.__new__(type(self))
        for name in ("X", "y", "task", "task_features", "task_names", "feature_names",
                     "truth", "kind"):
            object.__setattr__(copy, name, getattr(self, name))
        if task_names is not None:
            object.__setattr__(copy, "task_names",
                               check_names(task_names, self.n_tasks, "task_names", "task "))
        if truth is not None:
            object.__setattr__(copy, "truth", check_truth(
                truth, n_tasks=self.n_tasks, n_features=self.n_features,
                n_samples=self.n_samples))
        return copy

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
        """One row per example: the feature columns, the task features, ``task``, ``y``.

        Task features are columns ``tf_0 .. tf_{q-1}``, one value per task repeated on
        each of its rows. The frame's ``attrs`` record ``kind`` and ``task_names`` (in
        task-id order), which :meth:`from_frame` uses when it is given the frame back.
        """
        reserved = [f for f in self.feature_names
                    if f in ("task", "y") or f.startswith(TASK_FEATURE_PREFIX)]
        if reserved:
            raise ValueError(
                f"feature_names must not use the table's own column names 'task', 'y' or "
                f"the task-feature prefix {TASK_FEATURE_PREFIX!r}; got {reserved[:5]}.")
        columns = {name: self.X[:, j] for j, name in enumerate(self.feature_names)}
        if self.task_features is not None:
            for j in range(self.task_features.shape[1]):
                columns[f"{TASK_FEATURE_PREFIX}{j}"] = self.task_features[self.task, j]
        columns["task"] = np.asarray(self.task_names, dtype=object)[self.task]
        columns["y"] = self.y
        df = pd.DataFrame(columns)
        df.attrs.update(kind=self.kind, task_names=list(self.task_names))
        return df

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, task: str = "task", target: str = "y",
                   features: Sequence[str] | None = None,
                   task_features: Sequence[str] | None = None,
                   task_names: Sequence[str] | None = None,
                   kind: str | None = None) -> MultiTaskDataset:
        """Build a dataset from a table with a task column and a target column.

        Parameters
        ----------
        df : pandas.DataFrame
        task, target : str
            Names of the task column (ids or names) and of the target column.
        features : list of str, optional
            Feature columns; default every column that is not the task, the target or a
            task feature.
        task_features : list of str, optional
            Task-feature columns (one value per task, repeated on its rows); default the
            columns whose name starts with ``"tf_"``. A value that changes within a task
            is refused, naming the task and the column.
        task_names : list of str, optional
            The tasks in id order (values of the task column, compared as text); every
            value must be one of them and every one must have rows. Default: the order
            recorded in ``df.attrs["task_names"]`` (as :meth:`to_frame` and
            :func:`read_csv` leave it), where recorded tasks without rows are dropped and
            unrecorded values follow by first appearance; without it, names are numbered in
            order of first appearance (integer task values keep their numeric order).
        kind : {"classification", "regression"}, optional
            Default ``df.attrs["kind"]`` if present; otherwise "regression" when the
            target is float with non-integer values and "classification" otherwise.
        """
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"df must be a pandas DataFrame; got {type(df).__name__}.")
        if len(df) == 0:
            raise ValueError("the table has no rows (only a header?); got 0 rows with columns "
                             f"{list(map(str, df.columns))[:20]}.")
        columns = list(map(str, df.columns))
        for arg, col in (("task", task), ("target", target)):
            if col not in df.columns:
                raise ValueError(
                    f"{arg}={col!r} is not a column of the table; columns are {columns[:20]}."
                )
        if task_features is None:
            task_features = [c for c in df.columns if str(c).startswith(TASK_FEATURE_PREFIX)
                             and c not in (task, target) and c not in (features or ())]
        else:
            missing = [c for c in task_features if c not in df.columns]
            if missing:
                raise ValueError(f"task_features {missing} are not columns of the table; "
                                 f"columns are {columns[:20]}.")
        if features is None:
            features = [c for c in df.columns
                        if c not in (task, target) and c not in task_features]
        else:
            missing = [c for c in features if c not in df.columns]
            if missing:
                raise ValueError(f"features {missing} are not columns of the table.")
        if not features:
            raise ValueError("the table needs at least one feature column besides task and target.")
        for arg, cols in (("feature", features), ("task feature", task_features)):
            non_numeric = [c for c in cols if not pd.api.types.is_numeric_dtype(df[c])]
            if non_numeric:
                raise ValueError(f"{arg} columns must be numeric; {non_numeric[:5]} are not: "
                                 f"{_first_non_number(df[non_numeric[0]])}.")
        raw_task = df[task]
        if raw_task.isna().any():
            raise ValueError(f"task column {task!r} has missing values.")
        if task_names is None and df.attrs.get("task_names") is not None:
            # A recorded order (to_frame's attrs, the CSV header) is a hint, not a rule: the
            # table may have been edited. Recorded tasks without rows are dropped, new task
            # values follow in order of first appearance.
            present = pd.unique(raw_task.astype(str))
            recorded = [str(n) for n in df.attrs["task_names"]]
            seen = set(recorded)
            task_names = [n for n in recorded if n in set(present)] + \
                [n for n in present if n not in seen]
        if task_names is not None:
            task_names = [str(n) for n in task_names]
            index = {name: i for i, name in enumerate(task_names)}
            if len(index) != len(task_names):
                raise ValueError(f"task_names must not repeat a name; got {task_names[:20]}.")
            text = raw_task.astype(str)
            unknown = sorted(set(text) - set(index))
            if unknown:
                raise ValueError(f"task column {task!r} has values {unknown[:5]} that are not "
                                 f"in task_names {task_names[:20]}.")
            task_ids = text.map(index).to_numpy(dtype=np.intp)
        elif pd.api.types.is_integer_dtype(raw_task):
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
            kind = df.attrs.get("kind")
        if kind is None:
            is_float = pd.api.types.is_float_dtype(df[target])
            kind = "regression" if is_float and np.any(y != np.round(y)) else "classification"
        tf = _task_feature_table(df, list(task_features), task_ids, task_names)
        return cls(df[list(features)].to_numpy(dtype=np.float64), y, task_ids,
                   task_features=tf, task_names=task_names,
                   feature_names=[str(f) for f in features], kind=kind)

    def to_csv(self, path_or_buffer=None) -> str | None:
        """Write the dataset as CSV (the upload format of the app); see :func:`read_csv`.

        The first line is ``# mtl-explorer`` and a JSON object with ``kind`` and
        ``task_names`` (in task-id order); then the :meth:`to_frame` table: feature
        columns, task-feature columns ``tf_*``, ``task`` (the task name) and ``y``.
        Returns the text when ``path_or_buffer`` is None.
        """
        header = CSV_HEADER_PREFIX + json.dumps(
            {"kind": self.kind, "task_names": list(self.task_names)}) + "\n"
        table = frame_to_csv(self.to_frame())
        if path_or_buffer is None:
            return header + table
        if hasattr(path_or_buffer, "write"):
            path_or_buffer.write(header + table)
        else:
            with open(path_or_buffer, "w", encoding="utf-8", newline="") as fh:
                fh.write(header + table)
        return None


def _task_feature_table(df: pd.DataFrame, columns: list, task_ids: np.ndarray,
                        task_names: list[str]) -> np.ndarray | None:
    """(n_tasks, q) task features from columns holding one value per task on each row."""
    if not columns:
        return None
    values = df[columns].to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(values)):
        row, col = np.argwhere(~np.isfinite(values))[0]
        raise ValueError(f"task feature column {columns[col]!r} must be finite; got "
                         f"{values[row, col]} at row {row}.")
    n_tasks = len(task_names)
    present = np.zeros(n_tasks, bool)
    present[task_ids] = True
    if not present.all():  # the dataset reports the empty task with its own message
        return None
    first_row = np.zeros(n_tasks, dtype=np.intp)
    # the first row of every task (reversed assignment keeps the earliest index)
    first_row[task_ids[::-1]] = np.arange(task_ids.size)[::-1]
    table = values[first_row]
    differs = values != table[task_ids]
    if differs.any():
        row, col = np.argwhere(differs)[0]
        t = int(task_ids[row])
        raise ValueError(
            f"task feature column {columns[col]!r} must have one value per task; task "
            f"{task_names[t]!r} has {table[t, col]} and {values[row, col]} (row {row}).")
    return table


def check_task_ids_in_range(tasks: np.ndarray, n_tasks: int) -> np.ndarray:
    if tasks.dtype.kind not in "iu" or tasks.min() < 0 or tasks.max() >= n_tasks:
        raise ValueError(f"tasks must be integer ids in 0..{n_tasks - 1}; got {tasks.tolist()}.")
    return tasks.astype(np.intp)


def _first_non_number(column: pd.Series) -> str:
    """Where a column that should hold numbers does not: its name, the first row whose
    value is not a number (counted from 1, the header not counted: row 1 is the first line
    under a CSV's header) and that value.

    >>> _first_non_number(pd.Series(["-0.05", "1e3", None, "hello", "x"], name="x1"))
    "column 'x1', row 4 under the header, holds 'hello'"
    """
    values = column.reset_index(drop=True)
    parsed = pd.to_numeric(values.map(lambda v: v if np.ndim(v) == 0 else None),
                           errors="coerce")
    bad = np.flatnonzero(parsed.isna().to_numpy() & values.notna().to_numpy())
    if bad.size:
        return (f"column {str(column.name)!r}, row {bad[0] + 1} under the header, holds "
                f"{values[bad[0]]!r}")
    first = values.dropna()
    return (f"column {str(column.name)!r} holds numbers stored as {column.dtype} (first "
            f"value {first.iloc[0] if len(first) else None!r})")


def _read_header(data: bytes) -> tuple[dict, bytes]:
    """Split off the ``# mtl-explorer {json}`` first line; other ``#`` first lines are skipped."""
    if not data.startswith(b"#"):
        return {}, data
    line, _, rest = data.partition(b"\n")
    prefix = CSV_HEADER_PREFIX.encode()
    if not line.startswith(prefix):
        return {}, rest
    try:
        meta = json.loads(line[len(prefix):].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"the CSV header line must be {CSV_HEADER_PREFIX!r} followed by a "
                         f"JSON object; it could not be read ({exc}).") from None
    if not isinstance(meta, dict):
        raise ValueError(f"the CSV header line must hold a JSON object; got "
                         f"{type(meta).__name__}.")
    unknown = sorted(set(meta) - {"kind", "task_names"})
    if unknown:
        raise ValueError(f"the CSV header line has unknown keys {unknown}; known keys are "
                         "['kind', 'task_names'].")
    if "kind" in meta:
        check_kind(meta["kind"])
    names = meta.get("task_names")
    if names is not None and (not isinstance(names, list)
                              or not all(isinstance(n, str) for n in names)):
        raise ValueError("the CSV header line's task_names must be a list of strings.")
    return meta, rest


def read_csv(path_or_buffer: Any, *, task: str = "task", target: str = "y",
             features: Sequence[str] | None = None, kind: str | None = None,
             max_bytes: int = MAX_CSV_BYTES) -> MultiTaskDataset:
    """Read a multi-task CSV (columns: features, a task column and a target column).

    ``path_or_buffer`` is a path, a text/bytes buffer, the bytes themselves (an upload) or
    the CSV text (a ``str`` with a line break, as :meth:`MultiTaskDataset.to_csv` returns).
    Files larger than ``max_bytes`` are refused before parsing; malformed files raise a
    ``ValueError`` that says what is wrong.

    Format (what :meth:`MultiTaskDataset.to_csv` writes)::

        # mtl-explorer {"kind": "regression", "task_names": ["T0 a", "T1 b"]}
        x0,x1,tf_0,task,y
        0.1,2.0,0.5,T0 a,1.25
        ...

    * The first line is optional. When present it records the data ``kind`` and the task
      names in task-id order (recorded tasks without rows are dropped, unrecorded task
      values follow by first appearance); an explicit ``kind`` argument wins over it. Without it the
      kind is inferred (float targets with non-integer values: regression) and tasks are
      numbered by first appearance (integer task values: numeric order). Any other first
      line starting with ``#`` is skipped.
    * Columns named ``tf_*`` are task features: one value per task, repeated on every row
      of the task (a value that changes within a task is refused).
    * Every other column besides ``task`` and ``y`` is a numeric feature.
    """
    if isinstance(path_or_buffer, (bytes, bytearray)):
        data = bytes(path_or_buffer)
    elif isinstance(path_or_buffer, str) and "\n" in path_or_buffer:
        data = path_or_buffer.encode()  # CSV text, e.g. what to_csv() returned
    elif isinstance(path_or_buffer, (str, os.PathLike)):
        if not os.path.isfile(path_or_buffer):
            raise ValueError(f"path_or_buffer: no CSV file at {str(path_or_buffer)[:200]!r}.")
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
    meta, data = _read_header(data)
    if not data.strip():
        raise ValueError("the CSV data is empty.")
    # with recorded task names the task column holds names: read it as text ("01" stays)
    dtype = {task: str} if meta.get("task_names") is not None else None
    try:
        df = pd.read_csv(io.BytesIO(data), dtype=dtype, **_EXACT_FLOATS)
    except (pd.errors.ParserError, UnicodeDecodeError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"the CSV data could not be parsed: {exc}".strip()) from None
    df.attrs.update({key: meta[key] for key in ("kind", "task_names") if key in meta})
    return MultiTaskDataset.from_frame(df, task=task, target=target, features=features,
                                       kind=kind)


def _repr_float(value) -> str:
    return repr(float(value))


def frame_to_csv(frame, path=None) -> str | None:
    """``frame.to_csv(path, index=False)`` with ``\\n`` line ends and every float written as
    Python writes it (``repr``). pandas' own float formatting warned "invalid value
    encountered in cast" writing a missing value with pandas 2.0 and NumPy 1.24 (the lowest
    versions the project declares), which the tests turn into an error.

    >>> import numpy as np, pandas as pd
    >>> frame_to_csv(pd.DataFrame({"a": [0.1, np.nan], "n": [1, 2]}))
    'a,n\\n0.1,1\\n,2\\n'
    """
    return frame.to_csv(path, index=False, lineterminator="\n", float_format=_repr_float)
