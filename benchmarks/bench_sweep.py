"""Warm-started against cold sweeps (issue 42): ``explorer.compare.sweep`` of 20 values x 3
trials, in process (``n_jobs=1``), on the app's two kinds of data.
Run: ``PYTHONPATH=. .venv/bin/python benchmarks/bench_sweep.py [--json] [--rounds N]``

* the opening data (``ExplorerState().dataset``: 7 classification tasks, 12 features) and
  the Shared-vs-separate page's model, ``RegularizedMTL`` (logistic, the page's max_iter of
  300), ``lambda_deviation`` over the page's range 1e-4 .. 10, log-spaced;
* School (139 regression tasks, 27 features, 15,362 students) and ``RobustMTFL``,
  ``lambda_columns`` from its lambda_max down to 1% of it, log-spaced.

Each sweep runs warm-started (the path from the largest penalty down, each fit starting from
the previous solution) and cold (every value from scratch), in interleaved rounds, best of
each kept. Printed per data set: the wall times, the ratio cold / warm (> 1: warm starts
pay), the same ratio of the fits' own seconds (the frame's ``fit_time``: the path alone,
without the per-trial baseline and the scoring), and how far the two sweeps' mean test
errors are apart (both stop at the solver's default tolerance, so they agree to about it,
not exactly). Quote the ratios: the absolute times depend on the machine (and its load:
see ``cpu_reference_s``, ``benchmarks/_reference.py``).
"""

import argparse
import json
import os
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402

from explorer.compare import sweep  # noqa: E402
from explorer.data.catalog import make_dataset  # noqa: E402
from explorer.models import RegularizedMTL, RobustMTFL  # noqa: E402

N_VALUES, N_TRIALS = 20, 3


def cases() -> dict:
    """name -> (data, estimator, parameter, values)."""
    from explorer.app.state import ExplorerState

    opening = ExplorerState().dataset
    school = make_dataset("school")
    top = RobustMTFL().lambda_max(school.X, school.y, school.task)["lambda_columns"]
    return {
        "opening data, RegularizedMTL lambda_deviation": (
            opening, RegularizedMTL(loss="logistic", max_iter=300), "lambda_deviation",
            list(np.geomspace(10.0, 1e-4, N_VALUES))),
        "School, RobustMTFL lambda_columns": (
            school, RobustMTFL(), "lambda_columns",
            list(np.geomspace(1.0, 0.01, N_VALUES) * top)),
    }


def run(case, warm: bool):
    data, estimator, param, values = case
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)   # max_iter 300 at small lambdas
        result = sweep(estimator, data, param, values, n_trials=N_TRIALS, warm_start=warm)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds")
    args = parser.parse_args()
    from _reference import header, into_json, machine_facts

    facts = machine_facts()   # the machine the figures were measured on (_reference.py)
    if not args.json:
        print(header(facts), flush=True)
    figures = {"n_values": N_VALUES, "n_trials": N_TRIALS, "rounds": args.rounds,
               "cases": {}}
    for name, case in cases().items():
        run(case, True)   # warm-up: numba kernels loaded, caches filled
        best = {"warm": float("inf"), "cold": float("inf")}
        fit_s = {"warm": float("inf"), "cold": float("inf")}
        results = {}
        for _ in range(args.rounds):
            for mode in ("warm", "cold"):
                seconds, result = run(case, mode == "warm")
                best[mode] = min(best[mode], seconds)
                frame = result.frame
                fit_s[mode] = min(fit_s[mode], float(
                    frame.loc[frame["quantity"] == "fit_time", "value"].sum()))
                results[mode] = result
        warm_error = results["warm"].curve("test_error")["mean"].to_numpy()
        cold_error = results["cold"].curve("test_error")["mean"].to_numpy()
        figures["cases"][name] = {
            "seconds": best, "fit_seconds": fit_s,
            "cold_over_warm": best["cold"] / best["warm"],
            "cold_over_warm_fits": fit_s["cold"] / fit_s["warm"],
            "max_abs_test_error_difference": float(np.max(np.abs(warm_error - cold_error))),
            "max_rel_test_error_difference": float(np.max(
                np.abs(warm_error - cold_error) / np.maximum(np.abs(cold_error), 1e-12))),
        }
    if args.json:
        print(json.dumps(into_json(figures, facts), indent=2))
        return
    print(f"sweeps of {N_VALUES} values x {N_TRIALS} trials, n_jobs=1, best of {args.rounds} "
          f"interleaved rounds:")
    for name, case in figures["cases"].items():
        print(f"  {name}")
        print(f"    warm {case['seconds']['warm']:7.3f} s   cold {case['seconds']['cold']:7.3f}"
              f" s   cold / warm {case['cold_over_warm']:.2f}x (the fits alone "
              f"{case['cold_over_warm_fits']:.2f}x)")
        print(f"    mean test error, warm against cold: at most "
              f"{case['max_abs_test_error_difference']:.2g} apart "
              f"({case['max_rel_test_error_difference']:.2g} relative)")


if __name__ == "__main__":
    main()
