"""MT-KR's W on many tasks: the matrix-free solver (``solver="projected"``) against its peers
on the same objective (Eq. 7).

1. m = 40 synthetic tasks (the dense dual solver still takes them): time to a relative gap of
   1e-7, projected vs the dense dual (``square_qp_sweeps``), and the objectives reached.
2. School (139 tasks, 24% training per task, k = 5): projected to a certified gap of 1e-4 and
   1e-6, vs the paper's SMO (``paper_smo_sweeps``): one sweep's time and the objective after
   it, relative to the projected optimum. (The dense solver refuses 139 tasks: ~24 GB.)

    PYTHONPATH=. OPENBLAS_NUM_THREADS=1 python benchmarks/bench_mtkr_many_tasks.py
"""

import time

import numpy as np

from explorer.data import load_school
from explorer.models import MTKR
from explorer.solvers.heterogeneous_neighbors import kernel_regression_features
from explorer.solvers.task_weights import square_qp_sweeps
from explorer.solvers.task_weights_paper import paper_smo_sweeps
from explorer.solvers.task_weights_projected import projected_gradient_sweeps, warm_up


def features(X, y, task, m, k=5):
    means = np.bincount(task, weights=y, minlength=m) / np.bincount(task, minlength=m)
    nb, _ = MTKR(n_neighbors=k)._training_neighbourhoods(X, task, np.random.default_rng(0))
    return kernel_regression_features(nb, y, m, means)


def until(sweeps, tol):
    start = time.perf_counter()
    for count, sweep in enumerate(sweeps, start=1):
        if sweep.gap <= tol:
            return time.perf_counter() - start, sweep.objective, count
    raise AssertionError("unreachable")


def synthetic(m=40, per_task=30, seed=0):
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(m), per_task)
    X = rng.normal(size=(task.size, 4)) + (task % 5)[:, None]
    y = X @ [1.0, -0.5, 0.2, 0.1] + (task % 5) + 0.3 * rng.normal(size=task.size)
    return features(X, y, task, m), y, task, m


def main():
    from _reference import header, machine_facts

    print(header(machine_facts()), flush=True)   # the machine the figures are measured on
    warm_up()
    F, y, task, m = synthetic()
    t_dense, f_dense, n_dense = until(square_qp_sweeps(F, y, task, m, 1.0, 1.0, row_sum=True),
                                      1e-7)
    t_proj, f_proj, n_proj = until(
        projected_gradient_sweeps(F, y, task, m, 1.0, 1.0, row_sum=True), 1e-7)
    print(f"m = {m}, n = {y.size}, gap 1e-7: projected {t_proj:.2f} s ({n_proj} sweeps), "
          f"dense dual {t_dense:.2f} s ({n_dense} passes): projected {t_dense / t_proj:.1f}x "
          f"faster; objectives {f_proj:.8g} vs {f_dense:.8g} "
          f"(relative difference {(f_proj - f_dense) / f_dense:.1e})")

    school = load_school()
    train, _ = school.split(0.24, random_state=0)
    m = school.n_tasks
    y = train.y.astype(float)
    F = features(train.X, y, train.task, m)
    for tol in (1e-4, 1e-6):
        t, f_star, n = until(projected_gradient_sweeps(F, y, train.task, m, 1.0, 1.0,
                                                       row_sum=True), tol)
        print(f"School, m = {m}, n = {y.size}: projected to gap {tol:g} in {t:.1f} s "
              f"({n} sweeps), objective {f_star:.8g}")
    start = time.perf_counter()
    sweep = next(paper_smo_sweeps(F, y, train.task, m, 1.0, 1.0))
    t_smo = time.perf_counter() - start
    print(f"School: the paper's SMO, one sweep {t_smo:.1f} s ({t_smo / t:.1f}x the projected "
          f"solver's whole run to 1e-6), objective {(sweep.objective - f_star) / f_star:.1%} "
          "above the projected optimum after it")


if __name__ == "__main__":
    main()
