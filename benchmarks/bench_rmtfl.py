"""Speed of rMTFL (issue 3, "Speed"). Run: .venv/bin/python benchmarks/bench_rmtfl.py

Prints: iterations and wall time to tol 1e-5 on the Section 6.1 setting (n=20, n=200); the
time of ``fit`` over the bare solver loop (the same MFISTA iterations with no snapshots, no
convergence bookkeeping; target <= 1.10) for RobustMTFL and RegularizedMTL; the
ratio to cvxpy (default solver) on m=10, d=50; the ratio to scikit-learn MultiTaskLasso for
the L2,1 limiting case; time per iteration versus d and m (rMTFL and RMTL, Figure 4); and
the time per FISTA iteration over one X W plus one X^T R product (m=50, d=1000, n=100).
"""

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.linear_model import MultiTaskLasso  # noqa: E402

from explorer.data.synthetic import make_outlier_tasks  # noqa: E402
from explorer.models import L21MTFL, RMTL, RegularizedMTL, RobustMTFL  # noqa: E402
from explorer.solvers.multitask_least_squares import StackedTasks  # noqa: E402
from explorer.solvers.penalties import BlockSum, ColumnGroups, RowGroups  # noqa: E402
from explorer.solvers.proximal_gradient import proximal_gradient_steps  # noqa: E402
from explorer.solvers.regularized_mtl import RegularizedMTLProblem  # noqa: E402
from explorer.solvers.stacked_fista import stacked_fista_steps, warm_up  # noqa: E402


def data(m, d, n, seed=0):
    return make_outlier_tasks(n_tasks=m, n_outliers=m // 3, n_features=d, n_shared_features=d // 5,
                              n_samples_per_task=n, noise=1.0, random_state=seed)


def timed(fn, repeat=1):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def fit_over_bare(repeat=5):
    """``fit`` time over the bare solver loop for the same number of iterations."""
    import warnings

    ds = data(30, 200, 20)
    X, y, task = ds.X, ds.y, ds.task
    n_iter = 300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = RobustMTFL(tol=0.0, max_iter=n_iter)
        t_fit, _ = timed(lambda: est.fit(X, y, task), repeat)

        def bare_rmtfl():
            stacked = StackedTasks(X, y, task, 30)
            penalty = BlockSum(RowGroups(0.2 * RowGroups.lambda_max(stacked.grad_at_zero())),
                               ColumnGroups(est.lambda_columns_))
            x0 = np.zeros((stacked.d, 2 * stacked.m))
            for step in stacked_fista_steps(stacked, penalty, x0,
                                            lipschitz=stacked.lipschitz_lower_bound()):
                if step.iteration >= n_iter:
                    return step
        t_bare, _ = timed(bare_rmtfl, repeat)
        print(f"RobustMTFL fit / bare solver loop (m=30 d=200 n=20, {n_iter} iterations): "
              f"{t_fit * 1e3:.1f} ms / {t_bare * 1e3:.1f} ms = {t_fit / t_bare:.3f} "
              "(target <= 1.10)")

        Xc, yc, tc = X, (y > np.median(y)).astype(int), task
        reg = RegularizedMTL(loss="logistic", tol=0.0, max_iter=n_iter)
        t_fit, _ = timed(lambda: reg.fit(Xc, yc, tc), repeat)

        def bare_regularized():
            signs = np.where(yc == 1, 1.0, -1.0)
            problem = RegularizedMTLProblem(
                StackedTasks(Xc, signs, tc, 30, normalize=False, center=False),
                loss="logistic", lambda_deviation=reg.lambda_deviation,
                lambda_common=reg.lambda_common, fit_intercept=True)
            smooth, value = problem.closures()
            x0 = np.zeros((Xc.shape[1] + 1, 31))
            for step in proximal_gradient_steps(
                    x0, smooth, lambda v, s: v, lambda v: 0.0, smooth_value=value,
                    lipschitz=problem.lipschitz_lower_bound()):
                if step.iteration >= n_iter:
                    return step
        t_bare, _ = timed(bare_regularized, repeat)
        print(f"RegularizedMTL fit / bare solver loop (logistic, same data, {n_iter} "
              f"iterations): {t_fit * 1e3:.1f} ms / {t_bare * 1e3:.1f} ms = "
              f"{t_fit / t_bare:.3f} (target <= 1.10)")


def main():
    from _reference import header, machine_facts

    print(header(machine_facts()), flush=True)   # the machine the figures are measured on
    start = time.perf_counter()
    warm_up()
    print(f"warm_up (numba FISTA kernel compiled or loaded from cache): "
          f"{time.perf_counter() - start:.2f} s")
    for n in (20, 200):
        ds = data(30, 200, n)
        t, est = timed(lambda ds=ds: RobustMTFL(tol=1e-5).fit(ds.X, ds.y, ds.task), 3)
        print(f"rMTFL m=30 d=200 n={n}: {est.n_iter_} iterations, {t * 1e3:.1f} ms "
              f"(converged={est.converged_})")

    fit_over_bare()

    import cvxpy as cp
    ds = data(10, 50, 20)
    X, y, task = ds.X, ds.y, ds.task
    m, d = 10, 50
    l1, l2 = 0.01, 0.05
    def cvxpy_problem():
        P, Q = cp.Variable((d, m)), cp.Variable((d, m))
        loss = sum(cp.sum_squares(X[task == t] @ (P[:, t] + Q[:, t]) - y[task == t])
                   / (m * np.sum(task == t)) for t in range(m))
        return cp.Problem(cp.Minimize(loss + l1 * cp.sum(cp.norm(P, 2, axis=1))
                                      + l2 * cp.sum(cp.norm(Q, 2, axis=0))))
    # a fresh problem each time: canonicalisation included, it is what a user waits for
    t_cvx, opt = timed(lambda: cvxpy_problem().solve(), 3)

    def ours_to_cvxpy_objective():
        # stop at the first iterate as good as cvxpy's answer (to 1e-7 relative)
        est = RobustMTFL(lambda_rows=l1, lambda_columns=l2, tol=0.0, max_iter=100000,
                         normalize=False, fit_intercept=False)
        for snap in est.fit_iter(X, y, task):
            if snap.objective <= opt * (1 + 1e-7):
                return snap
        raise RuntimeError("never reached cvxpy's objective")

    t_ours, snap = timed(ours_to_cvxpy_objective, 3)
    print(f"cvxpy m=10 d=50: ours {t_ours * 1e3:.1f} ms ({snap.step} iterations to obj "
          f"{snap.objective:.8g}), cvxpy {t_cvx * 1e3:.1f} ms (obj {opt:.8g}): ratio "
          f"cvxpy/ours {t_cvx / t_ours:.1f}x (target >= 20x)")

    rng = np.random.default_rng(0)
    n, d, m = 200, 200, 30
    Xs = rng.normal(size=(n, d)) / np.sqrt(n)
    Y = Xs @ (rng.normal(size=(d, m)) * (rng.random(d) < 0.2)[:, None]) + 0.1 * rng.normal(
        size=(n, m))
    alpha = 0.002
    t_sk, ref = timed(lambda: MultiTaskLasso(alpha=alpha, fit_intercept=False, tol=1e-6
                                             ).fit(Xs, Y), 3)
    Xst, yst, tst = np.vstack([Xs] * m), Y.T.ravel(), np.repeat(np.arange(m), n)
    t_l21, ours = timed(lambda: L21MTFL(lambda_rows=2 * alpha / m, tol=1e-7, max_iter=20000,
                                        normalize=False, fit_intercept=False
                                        ).fit(Xst, yst, tst), 3)
    W = ours.coef_
    obj = lambda W: (np.sum((Y - Xs @ W) ** 2) / (2 * n)  # noqa: E731
                     + alpha * np.linalg.norm(W, axis=1).sum())
    print(f"L2,1 vs MultiTaskLasso (n={n}, d={d}, m={m}): ours {t_l21 * 1e3:.1f} ms "
          f"(obj {obj(W):.6g}), sklearn {t_sk * 1e3:.1f} ms (obj {obj(ref.coef_.T):.6g}): "
          f"ours/sklearn {t_l21 / t_sk:.2f}x (target <= 2x)")

    def per_iter(cls, m, d):
        ds = data(m, d, 50)
        t, est = timed(lambda: cls(tol=0.0, max_iter=30).fit(ds.X, ds.y, ds.task), 3)
        return t / est.n_iter_

    import warnings
    warnings.simplefilter("ignore")
    for label, grid in (("d", [(30, d) for d in (250, 500, 1000, 2000)]),
                        ("m", [(m, 500) for m in (20, 40, 80, 160)])):
        for cls in (RobustMTFL, RMTL):
            times = [per_iter(cls, m, d) for m, d in grid]
            print(f"{cls.__name__} time/iteration vs {label} "
                  f"{[g[1] if label == 'd' else g[0] for g in grid]}: "
                  + ", ".join(f"{t * 1e3:.2f} ms" for t in times)
                  + f"  (per d*m: {times[-1] / times[0]:.2f}x for 8x d*m)")

    ds = data(50, 1000, 100)
    est = RobustMTFL(tol=0.0, max_iter=30)
    t_fit, _ = timed(lambda: est.fit(ds.X, ds.y, ds.task))
    per = t_fit / est.n_iter_
    data_ = StackedTasks(ds.X, ds.y, ds.task, 50)
    Wn = np.random.default_rng(1).normal(size=(1000, 50))

    def products():
        r = data_.residuals(Wn)
        for sl in data_.slices:
            data_.X[sl].T @ r[sl]
    t_prod, _ = timed(products, 5)
    print(f"m=50 d=1000 n=100: {per * 1e3:.2f} ms/iteration, X W + X^T R {t_prod * 1e3:.2f} ms:"
          f" ratio {per / t_prod:.2f} (target <= 3)")


if __name__ == "__main__":
    main()
