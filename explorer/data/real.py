"""Real multi-task data, offline: scikit-learn's bundled data sets and the School benchmark
shipped in the project's ``data/school`` (no downloads)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn import datasets

from .dataset import MultiTaskDataset

#: The School file, relative to ``data/`` (source checkout) or to this package (a wheel).
SCHOOL_FILE = "school/school.csv.gz"
SCHOOL_TASKS, SCHOOL_ROWS, SCHOOL_FEATURES = 139, 15_362, 27

_PAIRS = ((1, 7), (3, 8), (4, 9), (5, 6), (0, 8))


def load_digits_tasks(protocol="one-vs-rest", *, n_tasks=10, max_per_task=150,
                      random_state=None) -> MultiTaskDataset:
    """Digits (8x8) as tasks.

    ``"one-vs-rest"`` (MT-DT paper's MNIST protocol): task k = digit k vs the others,
    each task with its own sample (half positives). ``"pairs"`` (MTBoost paper): task k
    separates a pair of confusable digits, e.g. 1 vs 7, 3 vs 8, 4 vs 9.
    """
    if protocol not in ("one-vs-rest", "pairs"):
        raise ValueError(f"protocol must be 'one-vs-rest' or 'pairs'; got {protocol!r}.")
    limit = 10 if protocol == "one-vs-rest" else len(_PAIRS)
    if isinstance(n_tasks, bool) or not isinstance(n_tasks, (int, np.integer)) \
            or not 1 <= n_tasks <= limit:
        raise ValueError(f"n_tasks must be an integer in [1, {limit}]; got {n_tasks!r}.")
    if isinstance(max_per_task, bool) or not isinstance(max_per_task, (int, np.integer)) \
            or max_per_task < 10:
        raise ValueError(f"max_per_task must be an integer >= 10; got {max_per_task!r}.")
    rng = np.random.default_rng(random_state)
    d = datasets.load_digits()
    X_all, lab = d.data / 16.0, d.target
    Xs, ys, ts, names = [], [], [], []
    for t in range(n_tasks):
        if protocol == "one-vs-rest":
            pos = rng.permutation(np.flatnonzero(lab == t))[: max_per_task // 2]
            neg = rng.permutation(np.flatnonzero(lab != t))[: max_per_task - pos.size]
            names.append(f"T{t} {t} vs rest")
        else:
            a, b = _PAIRS[t]
            pos = rng.permutation(np.flatnonzero(lab == a))[: max_per_task // 2]
            neg = rng.permutation(np.flatnonzero(lab == b))[: max_per_task - pos.size]
            names.append(f"T{t} {a} vs {b}")
        idx = np.concatenate([pos, neg])
        Xs.append(X_all[idx])
        ys.append(np.r_[np.ones(pos.size, int), np.zeros(neg.size, int)])
        ts.append(np.full(idx.size, t))
    return MultiTaskDataset(np.vstack(Xs), np.concatenate(ys), np.concatenate(ts),
                            task_names=names, feature_names=[f"px{j}" for j in range(64)],
                            kind="classification")


def load_toy_pair(relation="related", *, base="breast_cancer", fraction=0.2,
                  random_state=None) -> MultiTaskDataset:
    """Two tasks drawn from one data set (MT-KNN paper toy protocol, Zhang 2013).

    Each task is a random ``fraction`` of the data. "negated" flips all labels of task 2;
    "unrelated" flips 50 % of the labels in each class of both tasks.
    """
    if relation not in ("related", "negated", "unrelated"):
        raise ValueError(
            f"relation must be 'related', 'negated' or 'unrelated'; got {relation!r}.")
    if base != "breast_cancer":
        raise ValueError(f"base must be 'breast_cancer'; got {base!r}.")
    if not isinstance(fraction, (int, float)) or not 0.02 <= fraction <= 0.5:
        raise ValueError(f"fraction must be in [0.02, 0.5]; got {fraction!r}.")
    rng = np.random.default_rng(random_state)
    d = datasets.load_breast_cancer()
    X = (d.data - d.data.mean(0)) / d.data.std(0)
    y = d.target.astype(int)
    k = max(10, int(round(fraction * len(y))))
    perm = rng.permutation(len(y))
    Xs, ys = [], []
    for t in range(2):
        idx = perm[t * k:(t + 1) * k]
        yt = y[idx].copy()
        if relation == "negated" and t == 1:
            yt = 1 - yt
        elif relation == "unrelated":
            for c in (0, 1):
                members = np.flatnonzero(y[idx] == c)
                flip = rng.choice(members, members.size // 2, replace=False)
                yt[flip] = 1 - yt[flip]
        Xs.append(X[idx])
        ys.append(yt)
    rel = {"related": 1, "negated": -1, "unrelated": 0}[relation]
    return MultiTaskDataset(
        np.vstack(Xs), np.concatenate(ys), np.repeat([0, 1], k),
        task_names=["T0 base", f"T1 {relation}"], feature_names=list(d.feature_names),
        truth={"task_relation": np.array([[1, rel], [rel, 1]])}, kind="classification")


def load_diabetes_tasks(split="sex", *, random_state=None) -> MultiTaskDataset:
    """Diabetes progression (regression) split into tasks by sex or sex x age band."""
    if split not in ("sex", "sex_age"):
        raise ValueError(f"split must be 'sex' or 'sex_age'; got {split!r}.")
    d = datasets.load_diabetes()
    X, y = d.data, d.target
    sex = (X[:, 1] > 0).astype(int)
    if split == "sex":
        task, names = sex, ["T0 sex a", "T1 sex b"]
    else:
        old = (X[:, 0] > np.median(X[:, 0])).astype(int)
        task = 2 * sex + old
        names = ["T0 a young", "T1 a old", "T2 b young", "T3 b old"]
    keep = [j for j in range(X.shape[1]) if j != 1]
    return MultiTaskDataset(X[:, keep], y, task, task_names=names,
                            feature_names=[d.feature_names[j] for j in keep],
                            kind="regression")


def shipped_file(relative: str) -> Path:
    """A data file the project ships: ``data/<relative>`` of the source checkout (the one
    place it is edited), else the package's copy written by
    :func:`explorer.data.catalog.sync_package_scenarios` (what a wheel carries)."""
    root = Path(__file__).resolve().parents[2]
    checkout = root / "data" / relative
    if (root / "pyproject.toml").is_file() and checkout.is_file():
        return checkout
    return Path(__file__).resolve().parent / relative


def load_school() -> MultiTaskDataset:
    """The School benchmark: 15,362 students of 139 London secondary schools, one
    regression task per school (predict the exam score, 1-70).

    The 27 attributes ``x0``..``x26`` keep their names and order of the ``school.mat``
    distribution (``data/school/README.md``: binary year, gender, examination-band and
    ethnic-group indicators; ``x3``, ``x4`` school-level percentages). The 28th column, a
    constant 1, is dropped as the rMTFL paper does ("the bias attribute is not used",
    Sec. 6.1): the models fit per-task intercepts instead.

    Returns
    -------
    MultiTaskDataset
        regression; X (15362, 27), y (15362,), task (15362,) in 0..138, task names
        ``"school 0"``..``"school 138"``.
    """
    with gzip.open(shipped_file(SCHOOL_FILE), "rb") as stream:
        frame = pd.read_csv(stream)
    features = [f"x{j}" for j in range(SCHOOL_FEATURES)]
    if frame.shape != (SCHOOL_ROWS, SCHOOL_FEATURES + 3) or frame["x27"].nunique() != 1:
        raise ValueError(f"{shipped_file(SCHOOL_FILE)} is not the School data: expected "
                         f"{SCHOOL_ROWS} rows of task, x0..x27 (x27 constant), y; got "
                         f"shape {frame.shape}.")
    return MultiTaskDataset(frame[features].to_numpy(np.float64),
                            frame["y"].to_numpy(np.float64), frame["task"].to_numpy(np.intp),
                            task_names=[f"school {t}" for t in range(SCHOOL_TASKS)],
                            feature_names=features, kind="regression")
