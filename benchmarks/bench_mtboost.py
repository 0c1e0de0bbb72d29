"""Speed of MTBoost (issue 12, "Speed"). Run: .venv/bin/python benchmarks/bench_mtboost.py

Prints, for digit pairs (scikit-learn's 8x8 digits, 5 pairs, 20 % for training as in the
paper) and for a 4-task 20 000-example synthetic set (d = 20): the time per boosting round of
MTBoost, the time of one pooled base-learner fit on the same rows (the supertask's cost), and
their ratio in units of ``n_inner`` (target <= 1.5: a round is ``n_inner`` supertask fits plus
little else); AnyBoost's time per round beside it. Medians of side-by-side repeats, with the
worst repeat and the load average; CPU time of this process. Then the test error of MTBoost
and AnyBoost on digit pairs over 5 splits (MTBoost does *not* beat AnyBoost there).
``--json``: the timings as one JSON object (no test errors).
"""

import json
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from explorer.data import make_task_family  # noqa: E402
from explorer.data.real import load_digits_tasks  # noqa: E402
from explorer.models import AnyBoost, MTBoost  # noqa: E402
from explorer.models.mtboost import _fit_base  # noqa: E402

N_ROUNDS, N_INNER = 10, 10
REPEATS = 7
AS_JSON = "--json" in sys.argv[1:]


def seconds(fn) -> float:
    """CPU seconds of this (single-threaded) process: wall time would also count the other
    jobs' turns on a shared machine."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def per_round(name, X, y, task, base="ls_svm", repeat=REPEATS):
    """Medians over ``repeat`` side-by-side repeats: one MTBoost fit (``N_ROUNDS`` rounds of
    ``N_INNER`` inner steps), then as many pooled fits in one block, then one AnyBoost fit,
    so that a busy machine's interruptions hit them alike. The ratio is per repeat; the
    worst repeat is printed beside the median."""
    signed = np.where(y == y.max(), 1.0, -1.0)
    weight = np.full(len(y), 1.0 / len(y))
    mt = MTBoost(base_learner=base, n_rounds=N_ROUNDS, n_inner=N_INNER, eps=0.0,
                 random_state=0)
    anyboost = AnyBoost(base_learner=base, n_rounds=N_ROUNDS, eps=0.0)
    fits = N_ROUNDS * N_INNER
    mt.fit(X, y, task)                  # warm: compiled kernels, caches
    rounds, pooled, any_rounds = [], [], []
    for _ in range(repeat):
        rounds.append(seconds(lambda: mt.fit(X, y, task)) / N_ROUNDS)
        pooled.append(seconds(lambda: [_fit_base(base, 0, X, signed, weight)
                                       for _ in range(fits)]) / fits)
        any_rounds.append(seconds(lambda: anyboost.fit(X, y, task)) / N_ROUNDS)
    ratios = np.array(rounds) / np.array(pooled) / N_INNER
    t_mt, t_pooled, t_any = (float(np.median(v)) for v in (rounds, pooled, any_rounds))
    row = {"rows": len(y), "features": X.shape[1], "base": base, "round_ms": 1e3 * t_mt,
           "pooled_fit_ms": 1e3 * t_pooled, "anyboost_round_ms": 1e3 * t_any,
           "round_over_pooled_per_inner_step": float(np.median(ratios)),
           "worst_repeat": float(ratios.max()), "repeats": repeat}
    if not AS_JSON:
        print(f"{name:26s} {base:6s} n={len(y):6d} d={X.shape[1]:3d}  round {1e3 * t_mt:8.2f} ms"
              f"  pooled fit {1e3 * t_pooled:7.2f} ms  round / pooled fit = "
              f"{np.median(ratios):4.2f} x n_inner (worst repeat {ratios.max():4.2f})  "
              f"(AnyBoost round {1e3 * t_any:7.2f} ms)")
    return row


def digit_errors(n_splits=5):
    errors = []
    for seed in range(n_splits):
        train, test = load_digits_tasks("pairs", n_tasks=5, max_per_task=300,
                                        random_state=seed).split(0.2, random_state=seed)
        row = []
        for est in (MTBoost(n_rounds=100, n_inner=10, random_state=seed),
                    AnyBoost(n_rounds=100)):
            est.fit(train.X, train.y, train.task)
            row.append(1 - est.score(test.X, test.y, test.task))
        errors.append(row)
    mt, anyboost = np.mean(errors, axis=0)
    print(f"digit pairs, 100 rounds, {n_splits} splits: test error MTBoost {mt:.3f}, "
          f"AnyBoost {anyboost:.3f}")


def main():
    from _reference import header, into_json, machine_facts

    facts = machine_facts()   # the machine the figures were measured on (_reference.py)
    load = open("/proc/loadavg").read().split()[:3]
    if not AS_JSON:
        print(header(facts))
        print(f"MTBoost: {N_ROUNDS} rounds, n_inner={N_INNER}; medians of {REPEATS} "
              f"side-by-side repeats; load average {' '.join(load)}")
    digits = load_digits_tasks("pairs", n_tasks=5, max_per_task=300, random_state=0)
    train, _ = digits.split(0.2, random_state=0)
    rows = {"digit pairs (20 % train)": per_round("digit pairs (20 % train)", train.X,
                                                  train.y, train.task),
            "digit pairs (all rows)": per_round("digit pairs (all rows)", digits.X, digits.y,
                                                digits.task)}
    big = make_task_family(("related", "negated", "unrelated"), n_features=20,
                           n_samples_per_task=5000, random_state=0)
    for base in ("ls_svm", "stump"):
        rows[f"4 tasks x 5000 synthetic, {base}"] = per_round(
            "4 tasks x 5000 synthetic", big.X, big.y, big.task, base)
    if AS_JSON:
        print(json.dumps(into_json({"load_average": load, "per_round": rows,
                                    "load_average_after": open("/proc/loadavg").read()
                                    .split()[:3]}, facts), indent=1))
    else:
        digit_errors()
        print(f"load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
