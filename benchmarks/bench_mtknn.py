"""MT-KNN / MT-KR solvers vs cvxpy on the same objective (Eq. 2 / Eq. 7), letters-size setting.

m = 7 tasks, 400 training points per task, 16 features; prints our time, cvxpy's, the ratio,
the objective gap (ours stops at a relative duality gap of 1e-7), best of 5 runs each; then a
fit's time split into sigma (mean pairwise distance), the neighbour search (scikit-learn's
NearestNeighbors), the vote features and the solver.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_mtknn.py
"""

import time
import warnings

import cvxpy as cp
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from explorer.models import MTKNN, MTKR
from explorer.solvers import task_weights
from explorer.solvers.task_weights import hinge_interior_point_steps, square_qp_sweeps

M, N, D = 7, 400, 16
REPEATS = 5


def data(seed=0):
    rng = np.random.default_rng(seed)
    base = rng.normal(size=D)
    X = rng.normal(size=(M * N, D))
    task = np.repeat(np.arange(M), N)
    signs = np.array([1, 1, 1, -1, -1, 1, 1])
    coef = base[:, None] * signs + 0.5 * rng.normal(size=(D, M))
    f = np.einsum("ij,ji->i", X, coef[:, task])
    return X, (f > 0).astype(int), f + 0.3 * rng.normal(size=f.size), task


def cvxpy_solve(F, y, task, loss, row_sum):
    W = cp.Variable((M, M))
    f = cp.sum(cp.multiply(F, W[task]), axis=1)
    data_term = cp.sum(cp.pos(1 - cp.multiply(y, f))) if loss == "hinge" else \
        cp.sum_squares(y - f)
    cons = [cp.diag(W) >= 0] + [c for q in range(M) for r in range(M) if r != q
                                for c in (W[q, r] <= W[q, q], W[q, r] >= -W[q, q])]
    if row_sum:
        cons.append(cp.sum(W, axis=1) == 1)
    problem = cp.Problem(cp.Minimize(data_term + 0.25 * cp.sum_squares(W - W.T)
                                     + 0.5 * cp.sum_squares(W)), cons)
    start = time.perf_counter()
    problem.solve(solver="CLARABEL")
    return time.perf_counter() - start, problem.value


def ours(sweeps, tol):
    start = time.perf_counter()
    for sweep in sweeps:
        if sweep.gap < tol:
            break
    return time.perf_counter() - start, sweep.objective


def fit_breakdown(X, y, task, loss):
    """Seconds of a full MT-KNN fit's parts: sigma, neighbour search, features, solver."""
    from sklearn.neighbors import NearestNeighbors

    from explorer.solvers.heterogeneous_neighbors import (
        heterogeneous_neighbours,
        mean_pairwise_distance,
        vote_features,
    )

    signed = np.where(y == 1, 1.0, -1.0)
    times = {}
    start = time.perf_counter()
    sigma = mean_pairwise_distance(X)
    times["sigma"] = time.perf_counter() - start
    start = time.perf_counter()
    index = NearestNeighbors(n_neighbors=6).fit(X)
    nb = heterogeneous_neighbours(index, task, X, 5, sigma, exclude_self=True)
    times["search"] = time.perf_counter() - start
    start = time.perf_counter()
    F = vote_features(nb, signed, M)
    times["features"] = time.perf_counter() - start
    sweeps = hinge_interior_point_steps(F, signed, task, M, 1.0, 1.0) if loss == "hinge" \
        else square_qp_sweeps(F, signed, task, M, 1.0, 1.0)
    times["solver"] = ours(sweeps, 1e-6)[0]
    return times


def main():
    task_weights.warm_up()
    X, labels, target, task = data()
    warnings.simplefilter("ignore", ConvergenceWarning)
    for name, model, y in (("MT-KNN hinge", MTKNN(tol=1e-2, max_iter=1), labels),
                           ("MT-KNN square", MTKNN(loss="square", tol=1e-2, max_iter=1), labels),
                           ("MT-KR", MTKR(tol=1e-2, max_iter=1), target)):
        model.fit(X, y, task)            # one sweep: only for its training features
        F, yy = model.train_features_, model.train_y_
        loss = "square" if name != "MT-KNN hinge" else "hinge"
        row_sum = name == "MT-KR"
        runs_ours, runs_cvx = [], []
        for _ in range(REPEATS):   # best of REPEATS: the machine is shared
            sweeps = hinge_interior_point_steps(F, yy, task, M, 1.0, 1.0) if loss == "hinge" \
                else square_qp_sweeps(F, yy, task, M, 1.0, 1.0, row_sum=row_sum)
            runs_ours.append(ours(sweeps, 1e-7))
            runs_cvx.append(cvxpy_solve(F, yy, task, loss, row_sum))
        t_ours, v_ours = min(runs_ours)
        t_cvx, v_cvx = min(runs_cvx)
        print(f"{name:14s} ours {t_ours:7.3f} s  cvxpy {t_cvx:7.3f} s  ratio "
              f"{t_cvx / t_ours:6.1f}x  objective rel diff {(v_ours - v_cvx) / abs(v_cvx):+.1e}")
    for loss in ("hinge", "square"):
        parts = fit_breakdown(X, labels, task, loss)
        total = sum(parts.values())
        print(f"MT-KNN {loss} fit {total:.3f} s: " + ", ".join(
            f"{k} {v:.3f} s ({v / total:.0%})" for k, v in parts.items()))


if __name__ == "__main__":
    main()
