"""Speed of TL-TF's variational EM (issue 14, "Speed"). Run:
``PYTHONPATH=. .venv/bin/python benchmarks/bench_tltf.py``

Prints, at 40 tasks x 40 examples and 400 tasks x 40 examples (5 data features + intercept,
3 task features, H = 3): the time of one E-step sweep over every task (xi, then (V, m), then
phi, then the bound), of one M-step (Lambda, Psi, Gamma by Newton) and of one whole EM
iteration as ``TLTF`` runs it (an E-step to convergence, then the M-step); the ratio 400 / 40
of each (linear scaling in the tasks gives ~10); and the ratio of the named peer -- the same
E-step sweep run task by task in a Python loop (one task's blocks at a time, as the paper's
Algorithm 1 is written) -- over the vectorised sweep.
"""

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from explorer.data.synthetic import make_clustered_tasks  # noqa: E402
from explorer.models import TLTF  # noqa: E402
from explorer.solvers.tltf_variational import (  # noqa: E402
    StackedLogisticTasks,
    VariationalState,
    e_step,
    gate_log_prob,
    m_step,
)


def problem(n_tasks: int, n: int = 40, seed: int = 0):
    """A fitted model's stacked data, gate input and a mid-fit state (after 3 EM iterations)."""
    ds = make_clustered_tasks(n_tasks=n_tasks, n_clusters=3, n_features=5, n_samples_per_task=n,
                              centred=False, random_state=seed)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = TLTF(n_clusters=3, max_iter=3, random_state=0).fit(
            ds.X, ds.y, ds.task, task_features=ds.task_features)
    tf = (ds.task_features - model.task_feature_mean_) / model.task_feature_scale_
    U = np.column_stack([np.ones(n_tasks), tf])
    Xa = np.column_stack([ds.X, np.ones(ds.n_samples)])
    data, _ = StackedLogisticTasks.build(Xa, np.where(ds.y == 1, 1.0, -1.0), ds.task, n_tasks)
    state = VariationalState(xi=np.ones(ds.n_samples), m=model.posterior_mean_,
                             V=model.posterior_cov_, logdet_V=np.zeros(n_tasks), phi=model.phi_,
                             Lambda=model.Lambda_, Gamma=model.Gamma_, Psi=model.Psi_)
    return data, U, state


def best_of(fn, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def per_task_sweep(data, U, state) -> None:
    """The peer: one sweep of Algorithm 1's E-step, task by task in a Python loop."""
    log_prior = gate_log_prob(U, state.Gamma)
    for k in range(data.n_tasks):
        rows = slice(data.starts[k], data.starts[k + 1] if k + 1 < data.n_tasks else None)
        one = StackedLogisticTasks(data.X[rows], data.y[rows], np.zeros(data.X[rows].shape[0],
                                                                        dtype=int),
                                   np.array([0]), 1, data.half_yx[k:k + 1])
        alone = VariationalState(xi=state.xi[rows], m=state.m[k:k + 1], V=state.V[k:k + 1],
                                 logdet_V=state.logdet_V[k:k + 1], phi=state.phi[k:k + 1],
                                 Lambda=state.Lambda, Gamma=state.Gamma, Psi=state.Psi)
        e_step(one, alone, log_prior[k:k + 1], max_sweeps=1)


def measure(n_tasks: int, repeat: int) -> dict[str, float]:
    data, U, state = problem(n_tasks)
    log_prior = gate_log_prob(U, state.Gamma)
    e_state, _ = e_step(data, state, log_prior)
    return {
        "E sweep": best_of(lambda: e_step(data, state, log_prior, max_sweeps=1), repeat),
        "M step": best_of(lambda: m_step(e_state, U, covariance="full", gamma_l2=0.01), repeat),
        "EM iteration": best_of(lambda: m_step(e_step(data, state, log_prior)[0], U,
                                               covariance="full", gamma_l2=0.01), repeat),
        "peer: per-task E sweep": best_of(lambda: per_task_sweep(data, U, state),
                                          max(1, repeat // 4)),
    }


def main() -> None:
    small, large = measure(40, 20), measure(400, 5)
    print("TL-TF variational EM, 5 data features + intercept, 3 task features, H = 3")
    print(f"{'':24s} {'40 x 40':>10s} {'400 x 40':>10s} {'400/40':>8s}")
    for key in small:
        print(f"{key:24s} {1e3 * small[key]:8.2f}ms {1e3 * large[key]:8.2f}ms "
              f"{large[key] / small[key]:8.1f}")
    for size, times in (("40 x 40", small), ("400 x 40", large)):
        print(f"peer (per-task loop) / vectorised E sweep at {size}: "
              f"{times['peer: per-task E sweep'] / times['E sweep']:.1f}")


if __name__ == "__main__":
    main()
