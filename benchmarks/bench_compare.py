"""Wall time of the comparison harness on its three execution paths (issue 16, "Speed").
Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_compare.py [--json] [--rounds N]``

A 10-trial, 4-method comparison (multi-task ridge, L2,1 MTFL, robust MTFL, per-task ridge;
the rMTFL paper's synthetic setting, 30 tasks x 200 features x 20 examples, 20% training)
timed
with ``n_jobs=1`` (in process), ``n_jobs=2`` (joblib, loky worker processes) and a 2-worker
Dask ``LocalCluster`` (processes, one thread each). Each path is warmed once (workers
started, numba kernels loaded), then the three are timed in interleaved rounds and the best
of each is kept. Printed: the times, the speed-up of each parallel path over ``n_jobs=1``,
and the overhead of the Dask path relative to joblib at equal workers (target <= 1.3x).
The three runs' numbers are checked identical.
"""

import argparse
import json
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import pandas as pd  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402

from explorer.compare import compare  # noqa: E402
from explorer.data.synthetic import make_outlier_tasks  # noqa: E402
from explorer.models import L21MTFL, MultiTaskRidge, PerTaskEstimator, RobustMTFL  # noqa: E402

N_TRIALS = 10


def methods() -> dict:
    return {"ridge (MT)": MultiTaskRidge(lambda_ridge=1.0),
            "L2,1": L21MTFL(lambda_rows=0.1),
            "rMTFL": RobustMTFL(lambda_rows=0.1, lambda_columns=0.1),
            "ridge (STL)": PerTaskEstimator(estimator=Ridge(alpha=1.0))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    args = parser.parse_args()
    from _reference import header, into_json, machine_facts
    from distributed import Client, LocalCluster

    facts = machine_facts()   # the machine the figures were measured on (_reference.py)
    if not args.json:
        print(header(facts), flush=True)

    data = make_outlier_tasks(random_state=0)   # the paper's 30 tasks x 200 features x 20
    common = {"n_trials": N_TRIALS, "train_fraction": 0.2, "metric": ["nmse", "amse"],
              "random_state": 0, "progress": False}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        paths = {"n_jobs=1": lambda: compare(methods(), data, n_jobs=1, **common),
                 "joblib n_jobs=2": lambda: compare(methods(), data, n_jobs=2, **common),
                 "dask 2 workers": lambda: compare(methods(), data, backend="dask",
                                                   client=client, **common)}
        frames = {name: run().frame.drop(columns="fit_time_s") for name, run in paths.items()}
        for name, frame in frames.items():   # warm-up runs, checked identical
            pd.testing.assert_frame_equal(frame, frames["n_jobs=1"], check_exact=True,
                                          obj=name)
        best = dict.fromkeys(paths, float("inf"))
        for _ in range(args.rounds):
            for name, run in paths.items():
                start = time.perf_counter()
                run()
                best[name] = min(best[name], time.perf_counter() - start)
    figures = {
        "jobs": N_TRIALS * len(methods()),
        "seconds": best,
        "speedup_joblib_2_over_1": best["n_jobs=1"] / best["joblib n_jobs=2"],
        "speedup_dask_2_over_1": best["n_jobs=1"] / best["dask 2 workers"],
        "dask_over_joblib_equal_workers": best["dask 2 workers"] / best["joblib n_jobs=2"],
        "target_dask_over_joblib": 1.3,
        "cpu_count": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(into_json(figures, facts), indent=2))
        return
    print(f"{figures['jobs']} jobs ({N_TRIALS} trials x {len(methods())} methods), best of "
          f"{args.rounds} interleaved rounds, {os.cpu_count()} CPUs:")
    for name, seconds in best.items():
        print(f"  {name:<17} {seconds:7.3f} s")
    print(f"  speed-up joblib 2 jobs / 1 job : {figures['speedup_joblib_2_over_1']:.2f}x")
    print(f"  speed-up dask 2 workers / 1 job: {figures['speedup_dask_2_over_1']:.2f}x")
    print(f"  dask / joblib at 2 workers     : {figures['dask_over_joblib_equal_workers']:.2f}x"
          f"  (target <= 1.3x)")


if __name__ == "__main__":
    main()
