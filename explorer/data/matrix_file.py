"""A task x task matrix computed elsewhere (another tool, a paper's supplement), read from a
CSV or a NumPy ``.npy`` file, so that it can be judged against the data's truth.

The file is untrusted: its size is capped, ``.npy`` is read without pickles, and every
refusal names what was expected and what came.

>>> read_task_matrix(b"1,-0.5\\n-0.5,1\\n", "mine.csv", ["a", "b"]).tolist()
[[1.0, -0.5], [-0.5, 1.0]]
>>> read_task_matrix(b",b,a\\nb,1,0.2\\na,0.2,1\\n", "mine.csv", ["a", "b"]).tolist()
[[1.0, 0.2], [0.2, 1.0]]
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["MAX_MATRIX_BYTES", "read_task_matrix"]

#: Largest matrix file accepted (a 300 x 300 matrix as CSV is ~2 MB).
MAX_MATRIX_BYTES = 2_000_000


def _numeric(values) -> bool:
    return bool(pd.to_numeric(pd.Series(list(values)), errors="coerce").notna().all())


def _in_task_order(frame: pd.DataFrame, names: list[str], axis: str) -> pd.DataFrame:
    """``frame`` with its named rows (or columns) put in the data's task order (names
    0, 1, ... as pandas writes a plain matrix are positions)."""
    labels = [str(v).strip() for v in (frame.index if axis == "rows" else frame.columns)]
    if labels == [str(i) for i in range(len(labels))] and labels != names:
        return frame
    if sorted(labels) != sorted(names):
        raise ValueError(f"matrix file: its {axis} are named {labels[:6]}"
                         f"{'...' if len(labels) > 6 else ''}; expected the task names "
                         f"{names[:6]}{'...' if len(names) > 6 else ''} (in any order), or "
                         "no names.")
    if axis == "rows":
        frame.index = labels
        return frame.loc[names]
    frame.columns = labels
    return frame[names]


def _read_csv(raw: bytes, names: list[str]) -> np.ndarray:
    try:
        frame = pd.read_csv(io.BytesIO(raw), header=None, dtype=str, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise ValueError(f"matrix file: not a readable CSV ({error}).") from None
    # a header row: names after its first cell, or an empty first cell (",a,b" as pandas
    # writes a frame with an index)
    header = not _numeric(frame.iloc[0, 1:].fillna("0")) or pd.isna(frame.iloc[0, 0])
    if header:
        frame = frame.iloc[1:].set_axis(frame.iloc[0].fillna("").tolist(), axis=1)
    named_rows = not _numeric(frame.iloc[:, 0].fillna("x")) or (header and frame.columns[0] == "")
    if named_rows:
        frame = frame.set_index(frame.columns[0])
        frame.index.name = None
        frame = _in_task_order(frame, names, "rows")
    if header:
        frame = _in_task_order(frame, names, "columns")
    values = frame.apply(pd.to_numeric, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values)
    if bad.any() and values.shape == (len(names), len(names)):
        i, j = np.argwhere(bad)[0]
        cell = frame.iat[i, j]
        row = f"row {str(frame.index[i]).strip()!r}" if named_rows else f"row {i + 1}"
        column = (f"column {str(frame.columns[j]).strip()!r}" if header
                  else f"column {j + 1}")
        holds = "is empty" if pd.isna(cell) else f"holds {str(cell).strip()!r}"
        raise ValueError(f"matrix file: every entry must be a finite number; "
                         f"{int(bad.sum())} are not: {row}, {column} {holds}.")
    return values


def read_task_matrix(raw: bytes, filename: str, task_names: Sequence[str]) -> np.ndarray:
    """The (m, m) matrix in ``raw`` (a ``.csv`` or ``.npy`` file's bytes).

    A CSV may carry the task names as its first row and/or column (in any order: the
    matrix is put in the data's task order); without names, rows and columns are taken in
    the data's task order.

    Raises
    ------
    ValueError
        Too large, unreadable, not (m, m) for the data's m tasks, or not finite numbers;
        the message names what was expected and what came.
    """
    names = [str(n) for n in task_names]
    m = len(names)
    if len(raw) > MAX_MATRIX_BYTES:
        raise ValueError(f"matrix file: at most {MAX_MATRIX_BYTES:,} bytes; got "
                         f"{len(raw):,}.")
    suffix = str(filename).lower().rsplit(".", 1)[-1]
    if suffix == "npy":
        try:
            matrix = np.load(io.BytesIO(raw), allow_pickle=False)
        except (ValueError, OSError, EOFError) as error:
            raise ValueError(f"matrix file: not a readable .npy array ({error}).") from None
        if not np.issubdtype(matrix.dtype, np.number):
            raise ValueError(f"matrix file: numbers expected; got an array of {matrix.dtype}.")
        matrix = np.asarray(matrix, dtype=float)
    elif suffix == "csv":
        matrix = _read_csv(raw, names)
    else:
        raise ValueError(f"matrix file: a .csv or .npy file expected; got {filename!r}.")
    if matrix.shape != (m, m):
        raise ValueError(f"matrix file: a {m} x {m} matrix (tasks x tasks of the current "
                         f"data) expected; got shape {' x '.join(map(str, matrix.shape))}.")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("matrix file: every entry must be a finite number; "
                         f"{int(np.sum(~np.isfinite(matrix)))} are not.")
    return matrix
