"""Reading a task matrix computed elsewhere: CSV (with or without task names) and .npy,
every refusal naming what was expected and what came."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from explorer.data.matrix_file import MAX_MATRIX_BYTES, read_task_matrix

NAMES = ["T0 base", "T1 related", "T2 negated"]
MATRIX = np.array([[1.0, 0.8, -0.7], [0.8, 1.0, -0.6], [-0.7, -0.6, 1.0]])


def npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_a_plain_csv_and_an_npy_file_read_in_the_data_order():
    plain = "\n".join(",".join(str(float(v)) for v in row) for row in MATRIX).encode()
    np.testing.assert_array_equal(read_task_matrix(plain, "m.csv", NAMES), MATRIX)
    np.testing.assert_array_equal(read_task_matrix(npy(MATRIX), "m.NPY", NAMES), MATRIX)
    written = pd.DataFrame(MATRIX).to_csv().encode()   # pandas' ",0,1,2" header and index
    np.testing.assert_array_equal(read_task_matrix(written, "m.csv", NAMES), MATRIX)


def test_named_rows_and_columns_are_put_in_the_data_order():
    order = [2, 0, 1]
    shuffled = pd.DataFrame(MATRIX[np.ix_(order, order)], index=[NAMES[i] for i in order],
                            columns=[NAMES[i] for i in order])
    read = read_task_matrix(shuffled.to_csv().encode(), "m.csv", NAMES)
    np.testing.assert_array_equal(read, MATRIX)
    header_only = shuffled.to_csv(index=False).encode()   # columns named, rows in that order
    read = read_task_matrix(header_only, "m.csv", [NAMES[i] for i in order])
    np.testing.assert_array_equal(read, MATRIX[np.ix_(order, order)])
    with pytest.raises(ValueError, match=r"its columns are named .*expected the task names"):
        read_task_matrix(shuffled.rename(columns={NAMES[0]: "other"}).to_csv(index=False)
                         .encode(), "m.csv", NAMES)


@pytest.mark.parametrize("raw, name, message", [
    (npy(np.eye(2)), "m.npy", r"a 3 x 3 matrix \(tasks x tasks of the current data\) "
                              r"expected; got shape 2 x 2"),
    (b"1,2,3\n4,5,6\n", "m.csv", "got shape 2 x 3"),
    (b"1,2,3\n4,hello,6\n7,8,9\n", "m.csv",
     "every entry must be a finite number; 1 are not: row 2, column 2 holds 'hello'"),
    (b",T0 base,T1 related,T2 negated\nT0 base,1,2,3\nT2 negated,7,,inf\nT1 related,4,5,6\n",
     "m.csv", "2 are not: row 'T2 negated', column 'T1 related' is empty"),
    (npy(np.array([[1, np.nan, 0]] * 3)), "m.npy", "every entry must be a finite number"),
    (npy(np.array([["a"] * 3] * 3)), "m.npy", "numbers expected"),
    (npy(np.array([[{}] * 3] * 3, dtype=object)), "m.npy", "not a readable .npy"),
    (b"1,2,3", "m.txt", r"a .csv or .npy file expected; got 'm.txt'"),
    (b"0" * (MAX_MATRIX_BYTES + 1), "m.csv", f"at most {MAX_MATRIX_BYTES:,} bytes"),
])
def test_a_bad_file_is_refused_saying_what_was_expected(raw, name, message):
    with pytest.raises(ValueError, match=message):
        read_task_matrix(raw, name, NAMES)
