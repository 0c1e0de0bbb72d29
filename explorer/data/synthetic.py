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


def task_cosine(coef) -> np.ndarray:
    """True cosine similarity of the task coefficient vectors (the columns of ``coef``).

    A task whose coefficients are all zero (e.g. a relabelled task) has cosine 0 with every
    other task; every task has 1 with itself.

    Parameters
    ----------
    coef : array-like of shape (n_features, n_tasks)

    Returns
    -------
    ndarray of shape (n_tasks, n_tasks), values in [-1, 1], diagonal 1

    >>> task_cosine([[1.0, -2.0, 0.0], [0.0, 0.0, 3.0]])
    array([[ 1., -1.,  0.],
           [-1.,  1.,  0.],
           [ 0.,  0.,  1.]])
    """
    coef = np.asarray(coef, dtype=np.float64)
    norms = np.linalg.norm(coef, axis=0)
    unit = np.divide(coef, norms, out=np.zeros_like(coef), where=norms > 0)
    cosine = np.clip(unit.T @ unit, -1.0, 1.0)
    np.fill_diagonal(cosine, 1.0)
    return cosine


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
    ``w0 + perturbation * u``, a negated one ``-w0`` (flipped labels), an unrelated one a
    unit vector orthogonal to ``w0``; "relabelled" (classification) gives random labels
    (its true coefficients are zero).

    Unrelated tasks are made orthogonal by Gram-Schmidt: a random direction minus its
    components along ``w0`` and along the earlier unrelated tasks, so they are orthogonal
    to each other as well. When the dimension leaves no such direction (the k-th unrelated
    task with ``k >= n_features``, e.g. the second one in 2-D, where only ``+-`` one
    direction is orthogonal to ``w0``), the task takes the direction of a randomly chosen
    earlier unrelated task with a random sign: it is still unrelated to the base, and the
    truth says honestly that it is related (+1) or negated (-1) to that task.
    ``n_features=1`` leaves no direction orthogonal to the base, so "unrelated" needs
    ``n_features >= 2``.

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
        ``truth["task_relation"]`` (m, m) in {+1, -1, 0} with +1 on the diagonal (related
        and negated tasks are +1/-1 to the base and to each other as their signs say;
        unrelated and relabelled tasks are 0 to the others), ``truth["task_similarity"]``
        (m, m) the true cosine of the columns of ``truth["coef"]`` (d, m).
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
    if d == 1 and "unrelated" in relations:
        raise ValueError("relations: 'unrelated' needs n_features >= 2 (in 1-D no direction "
                         "is orthogonal to the base task); got n_features=1.")
    n = _pos_int("n_samples_per_task", n_samples_per_task, 4)
    perturbation = _nonneg("perturbation", perturbation)
    noise = _nonneg("noise", noise)
    rng = _rng(random_state)
    m = len(relations) + 1
    w0 = rng.normal(size=d)
    w0 /= np.linalg.norm(w0)
    coef = np.zeros((d, m))
    coef[:, 0] = w0
    # Each task lies along one "direction group" with a sign; tasks of one group are
    # +1/-1 to each other, tasks of different groups 0. Group 0 is the base concept.
    group = np.zeros(m, dtype=np.intp)
    sign = np.ones(m)
    basis = [w0]  # orthonormal: the base and the unrelated directions so far
    unrelated_tasks: list[int] = []
    for t, r in enumerate(relations, start=1):
        if r == "related":
            w = w0 + perturbation * rng.normal(size=d) / np.sqrt(d)
        elif r == "negated":
            w = -w0
            sign[t] = -1
        elif r == "unrelated":
            w = rng.normal(size=d)
            for b in basis:  # Gram-Schmidt (twice is enough for float round-off)
                w -= (w @ b) * b
            for b in basis:
                w -= (w @ b) * b
            if len(basis) < d and np.linalg.norm(w) > 1e-8:
                w /= np.linalg.norm(w)
                basis.append(w.copy())
                group[t] = t
            else:  # no orthogonal direction left: reuse an earlier unrelated one
                other = unrelated_tasks[rng.integers(len(unrelated_tasks))]
                sign[t] = sign[other] * rng.choice((-1.0, 1.0))
                group[t] = group[other]
                w = sign[t] * sign[other] * coef[:, other]
            unrelated_tasks.append(t)
        else:  # relabelled: random labels, no concept
            w = np.zeros(d)
            group[t] = t
        coef[:, t] = w
    same_group = group[:, None] == group[None, :]
    rel = np.where(same_group, np.outer(sign, sign), 0).astype(np.int8)
    Xs, ys, ts = [], [], []
    for t in range(m):
        X = rng.normal(size=(n, d))
        f = X @ coef[:, t] + noise * rng.normal(size=n)
        if kind == "classification":
            relabelled = t > 0 and relations[t - 1] == "relabelled"
            y = (f > 0).astype(int)
            y[:2] = [0, 1]  # both classes present
            if not relabelled:
                X[:2] = np.outer([-1.0, 1.0], coef[:, t]) / np.linalg.norm(coef[:, t])
            else:
                y = rng.permutation(y)
        else:
            y = f
        Xs.append(X)
        ys.append(y)
        ts.append(np.full(n, t))
    names = ["T0 base"] + [f"T{t} {r}" for t, r in enumerate(relations, start=1)]
    return MultiTaskDataset(
        np.vstack(Xs), np.concatenate(ys), np.concatenate(ts), task_names=names,
        feature_names=[f"x{j}" for j in range(d)],
        truth={"task_relation": rel, "task_similarity": task_cosine(coef), "coef": coef},
        kind=kind)


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
        ``P``, ``Q`` (d, m) with ``coef = P + Q``, ``task_similarity`` (m, m) the true
        cosine of the columns of ``coef``.
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
               "P": P, "Q": Q, "task_similarity": task_cosine(P + Q)}, kind="regression")


def make_local_relatedness(*, n_samples_per_task=200, label_noise=0.0,
                           random_state=None) -> MultiTaskDataset:
    """Two 2-D Gaussian-mixture tasks with different label sets (MT-DT, Faddoul 2012).

    Four blobs at the corners of a square. Task 0 has 4 classes (one per blob); task 1 has
    2 classes: on the left blobs its label is the upper/lower blob (a function of task 0's
    label: correlated), on the right blobs it splits each blob at ``x0 = 2`` (independent of
    task 0's label there). Each label is replaced by a
    uniformly chosen other label with probability ``label_noise`` (0.1 gives the paper's
    90 % mass on the true label).

    Returns
    -------
    MultiTaskDataset
        truth: ``task_relation`` the identity (the tasks are related only locally, so
        globally 0), ``local_region`` (n_samples,) bool, one entry per row: True for an
        example in the left half (``x0 < 0``), where task 1's label is a function of task
        0's label.
    """
    n = _pos_int("n_samples_per_task", n_samples_per_task, 8)
    label_noise = _nonneg("label_noise", label_noise)
    if label_noise > 1:
        raise ValueError(f"label_noise must be in [0, 1]; got {label_noise}.")
    rng = _rng(random_state)
    centres = np.array([[-2.0, -2.0], [-2.0, 2.0], [2.0, -2.0], [2.0, 2.0]])
    Xs, ys, ts = [], [], []
    for t, n_cls in enumerate((4, 2)):
        blob = np.arange(n) % 4
        X = centres[blob] + rng.normal(scale=0.8, size=(n, 2))
        if t == 0:
            y = blob.copy()
        else:
            left = X[:, 0] < 0
            y = np.where(left, (X[:, 1] > 0).astype(int), (X[:, 0] > 2).astype(int))
        flip = rng.random(n) < label_noise
        y = np.where(flip, (y + rng.integers(1, n_cls, n)) % n_cls, y)
        Xs.append(X)
        ys.append(y)
        ts.append(np.full(n, t))
    rel = np.eye(2, dtype=np.int8)
    X = np.vstack(Xs)
    return MultiTaskDataset(
        X, np.concatenate(ys), np.concatenate(ts),
        task_names=["T0 4 classes", "T1 2 classes"], feature_names=["x0", "x1"],
        truth={"task_relation": rel, "local_region": X[:, 0] < 0},
        kind="classification")


def make_clustered_tasks(*, n_tasks=12, n_clusters=3, n_features=5, n_task_features=3,
                         n_samples_per_task=60, spread=0.3, informative=True, centred=True,
                         random_state=None) -> MultiTaskDataset:
    """Logistic tasks from H cluster centres plus noise, with task features (TL-TF, 2009).

    Centres have equal norm; centre 1 is roughly opposite centre 0 (with two data features
    the centres are at equal angles, a random rotation). Task features are drawn
    around a cluster-specific mean (``informative``) or around the mean of an independent
    random cluster label (same marginal).

    Returns
    -------
    MultiTaskDataset
        ``task_features`` (m, q); truth: ``clusters`` (m,) int, ``coef`` (d, m),
        ``task_similarity`` (m, m) the true cosine of the columns of ``coef``.
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
    if d == 2 and h > 1:   # in the plane random centres are often too close to tell apart:
        angle = rng.uniform(0, 2 * np.pi) + 2 * np.pi * np.arange(h) / h   # equal angles
        C = 3.0 * np.vstack([np.cos(angle), np.sin(angle)])
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
        truth={"clusters": clusters, "coef": W, "task_similarity": task_cosine(W)},
        kind="classification")
