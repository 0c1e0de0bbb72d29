"""Synthetic multi-task generators that also return the ground truth (``dataset.truth``).

Every generator is deterministic for ``random_state`` and names its tasks shortly
("T0 base", "T1 related", ...).
"""

from __future__ import annotations

import numpy as np

from .dataset import MultiTaskDataset

_RELATIONS = ("related", "negated", "unrelated", "relabelled")


def _rng(random_state):
    return np.random.default_rng(random_state)


def _pos_int(name, value, low=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def _nonneg(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) \
            or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}.")
    return float(value)


def _kind(kind):
    if kind not in ("classification", "regression"):
        raise ValueError(
            f"kind must be 'classification' or 'regression'; got {kind!r}.")
    return kind


def make_task_family(relations=("related", "negated", "unrelated"), *, n_features=2,
                     n_samples_per_task=100, perturbation=0.3, noise=0.1,
                     kind="classification", random_state=None) -> MultiTaskDataset:
    """Task 0 is a base concept; every further task is related, negated or unrelated to it.

    Follows the toy settings of the MT-KNN paper (Zhang 2013): a related task uses
    ``w0 + perturbation * u``, a negated one ``-w0`` (flipped labels), an unrelated one an
    independent ``w``; "relabelled" (classification) gives random labels.

    Parameters
    ----------
    relations : sequence of {"related", "negated", "unrelated", "relabelled"}
        Relation to task 0 of tasks 1..m-1.
    n_features : int, default 2
    n_samples_per_task : int
        Examples per task.
    perturbation, noise : float
    kind : {"classification", "regression"}
    random_state : int, Generator or None

    Returns
    -------
    MultiTaskDataset
        ``truth["task_relation"]`` (m, m) in {+1, -1, 0}, ``truth["coef"]`` (d, m).
    """
    if isinstance(relations, str):
        relations = tuple(r.strip() for r in relations.split(",") if r.strip())
    relations = tuple(relations)
    for r in relations:
        if r not in _RELATIONS:
            raise ValueError(f"relations must contain only {_RELATIONS}; got {r!r}.")
    kind = _kind(kind)
    if kind == "regression" and "relabelled" in relations:
        raise ValueError("relations: 'relabelled' needs kind='classification'.")
    d = _pos_int("n_features", n_features)
    n = _pos_int("n_samples_per_task", n_samples_per_task, 4)
    perturbation = _nonneg("perturbation", perturbation)
    noise = _nonneg("noise", noise)
    rng = _rng(random_state)
    m = len(relations) + 1
    w0 = rng.normal(size=d)
    w0 /= np.linalg.norm(w0)
    coef = np.zeros((d, m))
    coef[:, 0] = w0
    sign = np.zeros(m)  # +1 / -1 relative to base, 0 unrelated
    sign[0] = 1
    for t, r in enumerate(relations, start=1):
        if r == "related":
            w = w0 + perturbation * rng.normal(size=d) / np.sqrt(d)
            sign[t] = 1
        elif r == "negated":
            w = -w0
            sign[t] = -1
        else:
            w = rng.normal(size=d)
            w /= np.linalg.norm(w)
        coef[:, t] = w
    rel = np.outer(sign, sign)
    Xs, ys, ts = [], [], []
    for t in range(m):
        X = rng.normal(size=(n, d))
        f = X @ coef[:, t] + noise * rng.normal(size=n)
        if kind == "classification":
            y = (f > 0).astype(int)
            y[:2] = [0, 1]  # both classes present
            X[:2] = np.outer([-1.0, 1.0], coef[:, t]) / max(np.linalg.norm(coef[:, t]), 1e-12)
            if t > 0 and relations[t - 1] == "relabelled":
                y = rng.permutation(y)
                coef[:, t] = 0.0
        else:
            y = f
        Xs.append(X)
        ys.append(y)
        ts.append(np.full(n, t))
    names = ["T0 base"] + [f"T{t} {r}" for t, r in enumerate(relations, start=1)]
    return MultiTaskDataset(
        np.vstack(Xs), np.concatenate(ys), np.concatenate(ts), task_names=names,
        feature_names=[f"x{j}" for j in range(d)],
        truth={"task_relation": rel, "coef": coef}, kind=kind)


def make_outlier_tasks(*, n_tasks=30, n_features=200, n_samples_per_task=20,
                       n_shared_features=40, n_outliers=10, noise=1.0,
                       random_state=None) -> MultiTaskDataset:
    """Robust MTFL setting of Gong, Ye & Zhang (2012), Section 6.1 (regression).

    The defaults are the paper's (m=30, d=200, n=20, 40 shared features, 10 outliers); the
    app's catalog starts from a smaller instance that reads well on screen.

    X entries N(0, 25), each feature scaled to unit norm over the task's samples; P, Q
    entries N(0, 64); rows of P outside the shared features are zero; columns of Q of
    non-outlier tasks are zero; ``y_i = X_i (p_i + q_i) + N(0, noise^2)``.

    Returns
    -------
    MultiTaskDataset
        truth: ``outlier_tasks`` (m,) bool, ``shared_features`` (d,) bool, ``coef``,
        ``P``, ``Q`` (d, m).
    """
    m = _pos_int("n_tasks", n_tasks)
    k = _pos_int("n_outliers", n_outliers, 0)
    if k > m:
        raise ValueError(f"n_outliers must be <= n_tasks={m}; got {k}.")
    d = _pos_int("n_features", n_features)
    s = _pos_int("n_shared_features", n_shared_features, 0)
    if s > d:
        raise ValueError(f"n_shared_features must be <= n_features={d}; got {s}.")
    n = _pos_int("n_samples_per_task", n_samples_per_task, 2)
    noise = _nonneg("noise", noise)
    rng = _rng(random_state)
    shared = np.zeros(d, bool)
    shared[rng.choice(d, s, replace=False)] = True
    outl = np.zeros(m, bool)
    outl[rng.choice(m, k, replace=False)] = True
    P = rng.normal(0, 8, size=(d, m)) * shared[:, None]
    Q = rng.normal(0, 8, size=(d, m)) * outl[None, :]
    Xs, ys, ts = [], [], []
    for t in range(m):
        X = rng.normal(0, 5, size=(n, d))
        X /= np.linalg.norm(X, axis=0, keepdims=True)
        Xs.append(X)
        ys.append(X @ (P[:, t] + Q[:, t]) + noise * rng.normal(size=n))
        ts.append(np.full(n, t))
    names = [f"T{t} {'outlier' if outl[t] else 'shared'}" for t in range(m)]
    return MultiTaskDataset(
        np.vstack(Xs), np.concatenate(ys), np.concatenate(ts), task_names=names,
        feature_names=[f"x{j}" for j in range(d)],
        truth={"outlier_tasks": outl, "shared_features": shared, "coef": P + Q,
               "P": P, "Q": Q}, kind="regression")


def make_local_relatedness(*, n_samples_per_task=200, label_noise=0.0,
                           random_state=None) -> MultiTaskDataset:
    """Two 2-D Gaussian-mixture tasks with different label sets (MT-DT, Faddoul 2012).

    Four blobs at the corners of a square. Task 0 has 4 classes (one per blob); task 1 has
    2 classes: on the left blobs its label is the upper/lower blob (a function of task 0's
    label: correlated), on the right blobs it splits each blob at ``x0 = 2`` (independent of
    task 0's label there). Each label is replaced by a
    uniformly chosen other label with probability ``label_noise`` (0.1 gives the paper's
    90 % mass on the true label).
    """
    n = _pos_int("n_samples_per_task", n_samples_per_task, 8)
    label_noise = _nonneg("label_noise", label_noise)
    if label_noise > 1:
        raise ValueError(f"label_noise must be in [0, 1]; got {label_noise}.")
    rng = _rng(random_state)
    centres = np.array([[-2.0, -2.0], [-2.0, 2.0], [2.0, -2.0], [2.0, 2.0]])
    Xs, ys, ts = [], [], []
    local = []
    for t, n_cls in enumerate((4, 2)):
        blob = np.arange(n) % 4
        X = centres[blob] + rng.normal(scale=0.8, size=(n, 2))
        if t == 0:
            y = blob.copy()
        else:
            left = X[:, 0] < 0
            y = np.where(left, (X[:, 1] > 0).astype(int), (X[:, 0] > 2).astype(int))
            local = left
        flip = rng.random(n) < label_noise
        y = np.where(flip, (y + rng.integers(1, n_cls, n)) % n_cls, y)
        Xs.append(X)
        ys.append(y)
        ts.append(np.full(n, t))
    rel = np.array([[1, 0], [0, 1]])
    return MultiTaskDataset(
        np.vstack(Xs), np.concatenate(ys), np.concatenate(ts),
        task_names=["T0 4 classes", "T1 2 classes"], feature_names=["x0", "x1"],
        truth={"task_relation": rel, "local_region": np.asarray(local)},
        kind="classification")


def make_clustered_tasks(*, n_tasks=12, n_clusters=3, n_features=5, n_task_features=3,
                         n_samples_per_task=60, spread=0.3, informative=True, centred=True,
                         random_state=None) -> MultiTaskDataset:
    """Logistic tasks from H cluster centres plus noise, with task features (TL-TF, 2009).

    Centres have equal norm; centre 1 is roughly opposite centre 0. Task features are drawn
    around a cluster-specific mean (``informative``) or around the mean of an independent
    random cluster label (same marginal).
    """
    m = _pos_int("n_tasks", n_tasks)
    h = _pos_int("n_clusters", n_clusters)
    if h > m:
        raise ValueError(f"n_clusters must be <= n_tasks={m}; got {h}.")
    d = _pos_int("n_features", n_features)
    q = _pos_int("n_task_features", n_task_features)
    n = _pos_int("n_samples_per_task", n_samples_per_task, 4)
    spread = _nonneg("spread", spread)
    rng = _rng(random_state)
    C = rng.normal(size=(d, h))
    if h > 1:
        C[:, 1] = -C[:, 0] + 0.2 * rng.normal(size=d)
    C /= np.linalg.norm(C, axis=0, keepdims=True) / 3.0
    clusters = np.arange(m) % h
    rng.shuffle(clusters)
    W = C[:, clusters] + spread * rng.normal(size=(d, m))
    means = rng.normal(scale=3.0, size=(h, q))
    gate_lab = clusters if informative else rng.permutation(clusters)
    TF = means[gate_lab] + rng.normal(size=(m, q))
    Xs, ys, ts = [], [], []
    shift = np.zeros(d) if centred else rng.normal(scale=1.0, size=d)
    for t in range(m):
        X = rng.normal(size=(n, d)) + shift
        p = 1 / (1 + np.exp(-(X - shift) @ W[:, t]))
        y = (rng.random(n) < p).astype(int)
        y[:2] = [0, 1]
        Xs.append(X)
        ys.append(y)
        ts.append(np.full(n, t))
    return MultiTaskDataset(
        np.vstack(Xs), np.concatenate(ys), np.concatenate(ts), task_features=TF,
        task_names=[f"T{t} c{clusters[t]}" for t in range(m)],
        feature_names=[f"x{j}" for j in range(d)],
        truth={"clusters": clusters, "coef": W}, kind="classification")
