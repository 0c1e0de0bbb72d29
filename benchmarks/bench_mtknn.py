"""MT-KNN / MT-KR solvers vs cvxpy on the same objective (Eq. 2 / Eq. 7), letters-size setting.

m = 7 tasks, 400 training points per task, 16 features; each row prints our time, cvxpy's and
who is faster by how much, with the objective gap (ours stops at a relative duality gap of
1e-7). The machine may be shared, so each solver row runs ``REPEATS`` rounds (ours, then cvxpy,
on the same problem; CPU time of this process, both being single-threaded: wall time would also
count other jobs' turns) and prints the medians, the ratio of the medians and the worst round's
ratio (the round where cvxpy came closest), with the load average. Then sigma + the neighbour
search: our one blocked pass against the two passes it replaced (a blocked NumPy sum of all
distances, then scikit-learn's brute-force ``NearestNeighbors``; wall time, medians: ours uses
two threads), same result; then a fit's time split into its parts.
``--json`` prints the figures as one JSON object instead.

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_mtknn.py [--json]
"""

import json
import sys
import time
import warnings

import cvxpy as cp
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from explorer.models import MTKNN, MTKR
from explorer.solvers import task_weights
from explorer.solvers.nearest_neighbours import neighbours_and_mean_distance
from explorer.solvers.task_weights import hinge_interior_point_steps, square_qp_sweeps

M, N, D = 7, 400, 16
REPEATS = 9


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
    start = time.process_time()
    problem.solve(solver="CLARABEL")
    return time.process_time() - start, problem.value


def ours(sweeps, tol):
    start = time.process_time()
    for sweep in sweeps:
        if sweep.gap < tol:
            break
    return time.process_time() - start, sweep.objective


def faster(ours_s: float, peer: str, peer_s: float) -> str:
    """``ours 2.41 ms | peer 63.0 ms | ours 26.1x faster`` (or ``peer ...x faster``)."""
    verdict = (f"ours {peer_s / ours_s:.1f}x faster" if ours_s <= peer_s
               else f"{peer} {ours_s / peer_s:.1f}x faster")
    return f"ours {1e3 * ours_s:.2f} ms | {peer} {1e3 * peer_s:.1f} ms | {verdict}"


def two_pass_sigma_and_search(X, k):
    """The peer: sigma as a blocked NumPy sum of all distances, then scikit-learn's search."""
    from sklearn.neighbors import NearestNeighbors

    sq = np.einsum("ij,ij->i", X, X)
    total = 0.0
    for start in range(0, X.shape[0], 512):
        d2 = sq[start:start + 512, None] + sq[None, :] - 2.0 * X[start:start + 512] @ X.T
        total += np.sqrt(np.maximum(d2, 0.0)).sum()
    sigma = total / (X.shape[0] * (X.shape[0] - 1))
    return sigma, *NearestNeighbors(n_neighbors=k, algorithm="brute").fit(X).kneighbors(X)


def median_time(fn):
    runs = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = fn()
        runs.append(time.perf_counter() - start)
    return float(np.median(runs)), out


def fit_breakdown(X, y, task, loss):
    """Seconds of a full MT-KNN fit's parts: sigma, neighbour search, features, solver."""
    from explorer.solvers.heterogeneous_neighbors import heterogeneous_neighbours, vote_features
    from explorer.solvers.nearest_neighbours import neighbours_and_mean_distance

    signed = np.where(y == 1, 1.0, -1.0)
    times = {}
    start = time.perf_counter()
    sigma, dist, idx = neighbours_and_mean_distance(X, 6)
    nb = heterogeneous_neighbours(dist, idx, task, 5, sigma, exclude_self=True)
    times["sigma + search"] = time.perf_counter() - start
    start = time.perf_counter()
    F = vote_features(nb, signed, M)
    times["features"] = time.perf_counter() - start
    sweeps = hinge_interior_point_steps(F, signed, task, M, 1.0, 1.0) if loss == "hinge" \
        else square_qp_sweeps(F, signed, task, M, 1.0, 1.0)
    times["solver"] = ours(sweeps, 1e-6)[0]
    return times


def main():
    from _reference import header, into_json, machine_facts

    as_json = "--json" in sys.argv[1:]
    facts = machine_facts()   # the machine the figures were measured on (_reference.py)
    if not as_json:
        print(header(facts))
    report = {"load_average": open("/proc/loadavg").read().split()[:3], "solvers": {}}
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
        for _ in range(REPEATS + 1):   # rounds side by side; the first only warms up
            sweeps = hinge_interior_point_steps(F, yy, task, M, 1.0, 1.0) if loss == "hinge" \
                else square_qp_sweeps(F, yy, task, M, 1.0, 1.0, row_sum=row_sum)
            runs_ours.append(ours(sweeps, 1e-7))
            runs_cvx.append(cvxpy_solve(F, yy, task, loss, row_sum))
        runs_ours, runs_cvx = runs_ours[1:], runs_cvx[1:]
        t_ours = float(np.median([t for t, _ in runs_ours]))
        t_cvx = float(np.median([t for t, _ in runs_cvx]))
        worst = min(c / o for (o, _), (c, _) in zip(runs_ours, runs_cvx, strict=True))
        v_ours, v_cvx = runs_ours[-1][1], runs_cvx[-1][1]
        gap = (v_ours - v_cvx) / abs(v_cvx)
        report["solvers"][name] = {"ours_s": t_ours, "cvxpy_s": t_cvx,
                                   "cvxpy_over_ours": t_cvx / t_ours,
                                   "worst_round_cvxpy_over_ours": worst,
                                   "objective_rel_diff": gap}
        if not as_json:
            print(f"{name:14s} {faster(t_ours, 'cvxpy', t_cvx)} (medians of {REPEATS}; worst "
                  f"round {worst:.1f}x) | objective rel diff {gap:+.1e}")
    t_one, (sigma, _, idx) = median_time(lambda: neighbours_and_mean_distance(X, 6))
    t_two, (sigma_two, _, idx_two) = median_time(lambda: two_pass_sigma_and_search(X, 6))
    same = bool(np.array_equal(idx, idx_two))
    report["sigma_and_search"] = {"ours_s": t_one, "two_pass_s": t_two,
                                  "two_pass_over_ours": t_two / t_one,
                                  "sigma_rel_diff": abs(sigma - sigma_two) / sigma_two,
                                  "same_neighbours": same}
    if not as_json:
        print(f"sigma + search {faster(t_one, 'NumPy sigma + scikit-learn', t_two)} | sigma rel "
              f"diff {abs(sigma - sigma_two) / sigma_two:.0e}, same neighbours: {same}")
    for loss in ("hinge", "square"):
        parts = fit_breakdown(X, labels, task, loss)
        total = sum(parts.values())
        report[f"fit_{loss}"] = parts
        if not as_json:
            print(f"MT-KNN {loss} fit {total:.3f} s: " + ", ".join(
                f"{k} {v:.3f} s ({v / total:.0%})" for k, v in parts.items()))
    report["load_average_after"] = open("/proc/loadavg").read().split()[:3]
    if as_json:
        print(json.dumps(into_json(report, facts), indent=1))
    else:
        print(f"load average before {' '.join(report['load_average'])}, after "
              f"{' '.join(report['load_average_after'])}")


if __name__ == "__main__":
    main()
