"""Our solvers against the best peers in Python, same process, same data, same objective.

Prints issue 15's table afresh, each row as "ours 0.61 s | celer 0.90 s | ours 1.48x faster"
(``--json``: the same rows with ``ratio`` = our time / the peer's, ``faster`` and
``speedup`` >= 1):

* L2,1 on a shared design (the MultiTaskLasso setting) at four sizes: ``L21MTFL.fit_shared``
  (the one design and the (n, m) responses, the peers' input; validation and data
  preparation included) against scikit-learn, celer and skglm ``MultiTaskLasso``; also "solver
  alone", the BCD on the prepared design, and "stacked", ``fit`` on the m stacked copies as a
  user of the stacked layout calls it (it reads the m-times larger input twice: validation and
  the shared-design check; timed up to ``STACKED_MAX_ENTRIES``). Objective ``1/(2n)||Y - XW||^2 +
  alpha ||W||_{2,1}``; ours is the same problem times ``2/m`` (``lambda_rows = 2 alpha / m``).
  "normal" penalty = 0.1 alpha_max, "strong" = 0.3 alpha_max.
* rMTFL (Eq. 2) against cvxpy at m=10/d=50/n=20 and at the paper's m=30/d=200/n=20 (Sec. 6.1,
  normalised data, the default penalties). cvxpy's time includes building the problem.
* MT-DT (IG_M) against scikit-learn's entropy tree on digits (depth 8 / unlimited) and on
  synthetic sets with n = 1000 ... 100 000 (``bench_mtdt.py``'s data and pooling).

Same objective: each solver runs at the loosest of its own tolerances (1e-2, 1e-3, ...) whose
answer is within 1e-6 relative of the best objective any solver reached (rMTFL: within 1e-6
of cvxpy's), checked, then timed: best of ``--repeat`` (3), ours and the peer alternating.

    python benchmarks/bench_peers.py [--repeat 3] [--quick] [--json] [--crossover]

``--quick`` drops the largest L2,1 size (it stacks 4 GB) and n = 100 000 for the tree;
``--crossover`` also prints BCD / MFISTA times on per-task designs (the "auto" rule's data).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from functools import partial

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from explorer.models import L21MTFL, ColumnGroupMTL, RobustMTFL  # noqa: E402
from explorer.solvers import warm_up  # noqa: E402
from explorer.solvers.multitask_least_squares import StackedTasks  # noqa: E402
from explorer.solvers.penalties import RowGroups  # noqa: E402

L21_SIZES = [(200, 500, 10, "normal"), (500, 1000, 20, "strong"),
             (1000, 2000, 30, "strong"), (2000, 5000, 50, "normal")]
PENALTY = {"normal": 0.1, "strong": 0.3}
TOLS = [10.0 ** -k for k in range(2, 13)]
SAME = 1e-6
STACKED_MAX_ENTRIES = 50_000_000   # the stacked layout's (m n, d) copy is timed up to this


def best_of(repeat, fn):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def interleaved(repeat, *fns):
    """Best time of each function, run in turn so all see the same machine load."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for slot, fn in zip(times, fns, strict=True):
            slot.append(best_of(1, fn))
    return [min(t) for t in times]


def loosest_tol(fit, objective, target):
    """The loosest tolerance whose fit reaches ``target`` (objective <= target), and that
    fit's objective."""
    for tol in TOLS:
        value = objective(fit(tol))
        if value <= target:
            return tol, value
    raise RuntimeError(f"no tolerance down to {TOLS[-1]} reached {target!r}")


def shared_design_data(n, d, m, seed=0):
    rng = np.random.default_rng(seed)
    Xs = rng.normal(size=(n, d))
    W = rng.normal(size=(d, m)) * (rng.random(d) < 0.05)[:, None]
    Y = Xs @ W + rng.normal(size=(n, m))
    return Xs, Y


class CelerMTL:
    """celer's MultiTaskLasso solver (``celer.homotopy.mtl_path`` at one alpha, prune=True as
    its estimator's default). celer 0.7.4's estimator calls ``_validate_data``, which
    scikit-learn 1.6+ removed, so its ``fit`` fails with our scikit-learn; the solver is
    what we compare against, called here as the estimator would."""

    def __init__(self, *, alpha, tol, max_iter, fit_intercept=False):
        assert not fit_intercept
        self.alpha, self.tol, self.max_iter = alpha, tol, max_iter

    def fit(self, X, Y):
        from celer.homotopy import mtl_path

        _, coefs, _ = mtl_path(np.asfortranarray(X), np.asfortranarray(Y), alphas=[self.alpha],
                               tol=self.tol, max_iter=self.max_iter, prune=True)
        self.coef_ = coefs[..., 0]            # (m, d), as scikit-learn's
        return self


def l21_rows(repeat, quick):
    from skglm import MultiTaskLasso as SkglmMTL
    from sklearn.linear_model import MultiTaskLasso as SklearnMTL

    rows = []
    for n, d, m, strength in L21_SIZES[:3] if quick else L21_SIZES:
        Xs, Y = shared_design_data(n, d, m)
        alpha = PENALTY[strength] * np.sqrt(np.sum((Xs.T @ Y) ** 2, axis=1)).max() / n

        def objective(W, Xs=Xs, Y=Y, alpha=alpha, n=n):
            return float(np.sum((Y - Xs @ W) ** 2) / (2 * n)
                         + alpha * np.linalg.norm(W, axis=1).sum())

        def ours(tol, Xs=Xs, Y=Y, alpha=alpha, m=m):
            return L21MTFL(lambda_rows=2 * alpha / m, normalize=False, fit_intercept=False,
                           tol=tol, max_iter=100000).fit_shared(Xs, Y)

        def peer(cls, tol, Xs=Xs, Y=Y, alpha=alpha):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return cls(alpha=alpha, fit_intercept=False, tol=tol, max_iter=10000
                           ).fit(Xs, Y)

        prepared = StackedTasks.shared(Xs, Y, normalize=False, center=False)

        def solver_only(tol, data=prepared, alpha=alpha, m=m, d=d):
            """The BCD on the prepared shared design (no input validation, no reading of
            the m-times stacked X): the same input scikit-learn gets."""
            from explorer.solvers.block_cd import block_cd_steps

            data._grad_at_zero = None  # paid on every fit, as in ``fit``
            for step in block_cd_steps(data, RowGroups(2 * alpha / m), np.zeros((d, m)),
                                       tol=tol):
                if step.converged:
                    return step
            raise RuntimeError("unreachable")

        fits = {"explorer": (ours, lambda est: est.coef_),
                "scikit-learn": (partial(peer, SklearnMTL), lambda est: est.coef_.T),
                "celer": (partial(peer, CelerMTL), lambda est: est.coef_.T),
                "skglm": (partial(peer, SkglmMTL), lambda est: est.coef_.T)}
        best = min(objective(coef(fit(1e-12))) for fit, coef in fits.values())
        target = best * (1 + SAME)
        tols = {}
        for name, (fit, coef) in fits.items():
            tols[name] = loosest_tol(fit, lambda est, coef=coef: objective(coef(est)),
                                     target)
        # short fits get more repeats (a shared machine's hiccups are ms long)
        runs = repeat if n * d * m > 5_000_000 else max(repeat, 9)
        times = interleaved(runs, *[partial(fit, tols[name][0])
                                    for name, (fit, _) in fits.items()])
        times = dict(zip(fits, times, strict=True))
        try:  # (absent before issue 15: the script also measures the old code)
            solver_tol = loosest_tol(solver_only, lambda step: objective(step.x), target)[0]
            t_solver = best_of(runs, partial(solver_only, solver_tol))
        except ImportError:
            t_solver = float("nan")
        t_stacked = float("nan")
        if n * d * m <= STACKED_MAX_ENTRIES:
            X, y, task = np.vstack([Xs] * m), Y.T.ravel(), np.repeat(np.arange(m), n)

            def stacked(tol, X=X, y=y, task=task, alpha=alpha, m=m):
                return L21MTFL(lambda_rows=2 * alpha / m, normalize=False,
                               fit_intercept=False, tol=tol, max_iter=100000).fit(X, y, task)

            t_stacked = best_of(runs, partial(stacked, tols["explorer"][0]))
            del X, y, task
        peers = {k: v for k, v in times.items() if k != "explorer"}
        fastest = min(peers, key=peers.get)
        rows.append({"workload": f"L2,1 shared design n={n} d={d} m={m} {strength}",
                     "explorer_s": times["explorer"], "peers_s": peers,
                     "best_peer": fastest, "ratio": times["explorer"] / peers[fastest],
                     "solver_only_s": t_solver,
                     "solver_only_ratio": t_solver / peers[fastest],
                     "stacked_s": t_stacked, "stacked_ratio": t_stacked / peers[fastest],
                     "tolerances": {k: v[0] for k, v in tols.items()},
                     "objective_rel": {k: v[1] / best - 1 for k, v in tols.items()},
                     "solver": getattr(ours(tols["explorer"][0]), "solver_", "fista")})
        del prepared
    return rows


def rmtfl_rows(repeat):
    import cvxpy as cp

    from explorer.data.synthetic import make_outlier_tasks

    rows = []
    for m, d, n, paper in ((10, 50, 20, False), (30, 200, 20, True)):
        ds = make_outlier_tasks(n_tasks=m, n_outliers=m // 3, n_features=d,
                                n_shared_features=d // 5, n_samples_per_task=n, noise=1.0,
                                random_state=0)
        if paper:  # Sec. 6.1: normalised (Eq. 1), centred, the default penalties
            data = StackedTasks(ds.X, ds.y, ds.task, m)
            X, y, task = data.X, data.y, data.row_task
            l1 = 0.2 * RowGroups.lambda_max(data.grad_at_zero())
            l2 = 1.15 * np.sqrt(d / m) * l1
        else:
            X, y, task = ds.X, ds.y, ds.task
            l1, l2 = 0.01, 0.05
        groups = [task == t for t in range(m)]

        used = []  # the solver cvxpy picked

        def cvxpy_solve(X=X, y=y, groups=groups, l1=l1, l2=l2, m=m, d=d, used=used):
            P, Q = cp.Variable((d, m)), cp.Variable((d, m))
            loss = sum(cp.sum_squares(X[g] @ (P[:, t] + Q[:, t]) - y[g]) / (m * g.sum())
                       for t, g in enumerate(groups))
            problem = cp.Problem(cp.Minimize(loss + l1 * cp.sum(cp.norm(P, 2, axis=1))
                                             + l2 * cp.sum(cp.norm(Q, 2, axis=0))))
            value = problem.solve()
            used.append(problem.solver_stats.solver_name)
            return value

        opt = cvxpy_solve()
        peer = f"cvxpy ({used[0]})"

        def ours(tol, X=X, y=y, task=task, l1=l1, l2=l2):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return RobustMTFL(lambda_rows=l1, lambda_columns=l2, normalize=False,
                                  fit_intercept=False, tol=tol, max_iter=100000
                                  ).fit(X, y, task)

        tol, value = loosest_tol(ours, lambda est: est.objective_history_[-1],
                                 opt * (1 + SAME))
        t_ours, t_cvx = interleaved(repeat, partial(ours, tol), cvxpy_solve)
        t_ours = min(t_ours, best_of(max(repeat, 9), partial(ours, tol)))
        est = ours(tol)
        rows.append({"workload": f"rMTFL m={m} d={d} n={n}" + (" (paper, Sec. 6.1)"
                                                               if paper else ""),
                     "explorer_s": t_ours, "peers_s": {peer: t_cvx}, "best_peer": peer,
                     "ratio": t_ours / t_cvx, "tolerances": {"explorer": tol},
                     "objective_rel": {"explorer": value / opt - 1},
                     "solver": getattr(est, "solver_", "fista"),
                     "iterations": est.n_iter_})
    return rows


def tree_rows(repeat, quick):
    from bench_mtdt import _fit_ours, _fit_peer, digits_one_vs_rest, synthetic

    from explorer.models.base import encode_task_labels

    sets = [digits_one_vs_rest()] + [synthetic(n=n) for n in
                                     ((1000, 10000) if quick else (1000, 10000, 100000))]
    rows = []
    for X, y, task, name in sets:
        codes, classes = encode_task_labels(y, task, int(task.max()) + 1)
        offsets = np.concatenate([[0], np.cumsum([len(c) for c in classes])])
        pooled = offsets[task] + codes
        weight = np.ones(len(y))
        for depth in (8, None):
            # fits of tens of ms need more repeats on a shared machine (5 gave 0.75-0.95
            # on digits at depth 8 where 15 give 0.75 every time)
            runs = max(repeat, 15) if len(y) <= 10_000 else max(repeat, 3)
            ours, peer = interleaved(runs, partial(_fit_ours, X, y, task, weight, depth),
                                     partial(_fit_peer, X, pooled, weight, depth))
            rows.append({"workload": f"MT-DT IG_M {name} max_depth={depth}",
                         "explorer_s": ours, "peers_s": {"scikit-learn": peer},
                         "best_peer": "scikit-learn", "ratio": ours / peer})
    return rows


def crossover_rows(repeat):
    """BCD / MFISTA fit times on per-task designs, each at the loosest tol reaching the
    same objective (1e-6 of the tighter run): the data behind ``solver="auto"``."""
    from explorer.data.synthetic import make_outlier_tasks

    rows = []
    for cls in (RobustMTFL, L21MTFL, ColumnGroupMTL):  # noqa: B007 (bound below)
        for m, d, n in ((10, 50, 20), (30, 200, 20), (10, 500, 50), (30, 200, 200)):
            ds = make_outlier_tasks(n_tasks=m, n_outliers=m // 3, n_features=d,
                                    n_shared_features=d // 5, n_samples_per_task=n,
                                    noise=1.0, random_state=0)
            for fraction in (0.03, 0.3):
                params = {k: fraction * v
                          for k, v in cls().lambda_max(ds.X, ds.y, ds.task).items()}
                if cls is RobustMTFL:
                    params["lambda_columns"] = "auto"

                def fit(tol, solver, params=params, ds=ds, cls=cls):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        return cls(**params, solver=solver, tol=tol, max_iter=100000).fit(
                            ds.X, ds.y, ds.task)

                exact = min(fit(1e-12, s).objective_history_[-1] for s in ("bcd", "fista"))
                tols = {s: loosest_tol(partial(fit, solver=s),
                                       lambda est: est.objective_history_[-1],
                                       exact * (1 + SAME))[0] for s in ("bcd", "fista")}
                t_bcd, t_fista = interleaved(repeat, partial(fit, tols["bcd"], "bcd"),
                                             partial(fit, tols["fista"], "fista"))
                auto = fit(1e-6, "auto").solver_
                rows.append({"workload": f"{cls.__name__} m={m} d={d} n={n} "
                                         f"lambda={fraction} lambda_max",
                             "bcd_s": t_bcd, "fista_s": t_fista,
                             "bcd_over_fista": t_bcd / t_fista, "auto": auto})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--crossover", action="store_true")
    args = parser.parse_args(argv)
    from _reference import header, into_json, machine_facts

    facts = machine_facts()   # the machine the figures were measured on (_reference.py)
    if not args.json:
        print(header(facts), flush=True)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    warm_up()
    rows = l21_rows(args.repeat, args.quick) + rmtfl_rows(args.repeat) + \
        tree_rows(args.repeat, args.quick)
    extra = crossover_rows(args.repeat) if args.crossover else []
    for row in rows:
        row.update(verdict(row["explorer_s"], row["peers_s"][row["best_peer"]],
                           row["best_peer"]))
    if args.json:
        print(json.dumps(into_json({"load_average": load, "peers": rows, "crossover": extra},
                                   facts), indent=1))
        return
    print(f"load average {load}; each row: our time | the fastest peer's | who is faster "
          "and by how much")
    for row in rows:
        peer = row["best_peer"]
        print(f"{row['workload']}\n    ours {duration(row['explorer_s'])} | {peer} "
              f"{duration(row['peers_s'][peer])} | {row['verdict']}")
        others = [f"{k} {duration(v)}" for k, v in row["peers_s"].items() if k != peer]
        if others:
            print(f"    other peers: {', '.join(others)}")
        if "solver_only_s" in row:
            print(f"    our solver alone {duration(row['solver_only_s'])} "
                  f"({speed_words(row['solver_only_s'], row['peers_s'][peer], peer)}); "
                  f"our fit on the m stacked copies {duration(row['stacked_s'])} "
                  f"({speed_words(row['stacked_s'], row['peers_s'][peer], peer)})")
    for row in extra:
        print(f"{row['workload']}\n    BCD {duration(row['bcd_s'])} | MFISTA "
              f"{duration(row['fista_s'])} | "
              f"{speed_words(row['bcd_s'], row['fista_s'], 'MFISTA', ours='BCD')}"
              f"; auto -> {row['auto']}")


def duration(seconds: float) -> str:
    """``0.61 s``, ``12.3 ms``, ``n/a`` for NaN (not measured)."""
    if not np.isfinite(seconds):
        return "n/a"
    return f"{seconds:.2f} s" if seconds >= 1 else f"{seconds * 1e3:.3g} ms"


def speed_words(ours_s: float, peer_s: float, peer: str, *, ours: str = "ours") -> str:
    """``ours 1.5x faster`` / ``celer 2.0x faster`` / ``as fast`` (within 2 %)."""
    if not (np.isfinite(ours_s) and np.isfinite(peer_s)):
        return "n/a"
    factor = max(ours_s, peer_s) / min(ours_s, peer_s)
    if factor < 1.02:
        return "as fast"
    winner = ours if ours_s < peer_s else peer
    return f"{winner} {factor:.2f}x faster" if factor < 10 else \
        f"{winner} {factor:.0f}x faster"


def verdict(ours_s: float, peer_s: float, peer: str) -> dict:
    """Who is faster and by how much, for the JSON rows and the table."""
    return {"faster": "explorer" if ours_s <= peer_s else peer,
            "speedup": max(ours_s, peer_s) / min(ours_s, peer_s),
            "verdict": speed_words(ours_s, peer_s, peer)}


if __name__ == "__main__":
    main()
