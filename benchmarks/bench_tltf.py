"""Speed of TL-TF's variational EM (issues 14 and 31). Run:
``PYTHONPATH=. .venv/bin/python benchmarks/bench_tltf.py [--json]``

Times are CPU seconds of this process (``time.process_time``, best of several): on a shared
machine wall time also counts the other jobs' turns, which inflates long calls more than
short ones and so distorts the scaling ratios. The 4,000-task column checks that an EM
iteration stays linear in the tasks (ratio 4000/400 near 10).

Prints, at 40 tasks x 40 examples and 400 tasks x 40 examples (5 data features + intercept,
3 task features, H = 3): the time of one E-step sweep over every task (xi, then (V, m), then
phi, then the bound), of one M-step (Lambda, Psi, Gamma by Newton) and of one whole EM
iteration as ``TLTF`` runs it (an E-step to convergence, then the M-step); the ratio 400 / 40
of each (linear scaling in the tasks gives ~10); and the ratio of the named peer -- the same
E-step sweep run task by task in a Python loop (one task's blocks at a time, as the paper's
Algorithm 1 is written) -- over the vectorised sweep.
"""

import json
import os
import sys
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
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
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


def faster(ours_s: float, peer: str, peer_s: float) -> str:
    """``ours 0.037 s | peer 0.112 s | ours 3.0x faster`` (or ``peer ...x faster``)."""
    verdict = (f"ours {peer_s / ours_s:.1f}x faster" if ours_s <= peer_s
               else f"{peer} {ours_s / peer_s:.1f}x faster")
    return f"ours {ours_s:.4f} s | {peer} {peer_s:.4f} s | {verdict}"


def main() -> None:
    from _reference import header, into_json, machine_facts

    facts = machine_facts()   # the machine the figures were measured on (_reference.py)
    as_json = "--json" in sys.argv[1:]
    if not as_json:
        print(header(facts), flush=True)
    sizes = {40: 20, 400: 5, 4000: 2}
    times = {n: measure(n, repeat) for n, repeat in sizes.items()}
    if as_json:
        print(json.dumps(into_json({"load_average": open("/proc/loadavg").read().split()[:3],
                                    "cpu_seconds": times}, facts), indent=1))
        return
    print("TL-TF variational EM, 5 data features + intercept, 3 task features, H = 3, "
          "40 examples per task (CPU seconds)")
    print(f"{'':24s} " + " ".join(f"{n:>8d} tasks" for n in sizes) + "   400/40  4000/400")
    for key in times[40]:
        row = " ".join(f"{1e3 * times[n][key]:12.2f}ms" for n in sizes)
        print(f"{key:24s} {row} {times[400][key] / times[40][key]:8.1f} "
              f"{times[4000][key] / times[400][key]:8.1f}")
    for n in sizes:
        print(f"E sweep at {n:5d} tasks: "
              + faster(times[n]["E sweep"], "per-task loop", times[n]["peer: per-task E sweep"]))


if __name__ == "__main__":
    main()
