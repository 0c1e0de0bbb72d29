"""Speed of MTBoost (issue 12, "Speed"). Run: .venv/bin/python benchmarks/bench_mtboost.py

Prints, for digit pairs (scikit-learn's 8x8 digits, 5 pairs, 20 % for training as in the
paper) and for a 4-task 20 000-example synthetic set (d = 20): the time per boosting round of
MTBoost, the time of one pooled base-learner fit on the same rows (the supertask's cost), and
their ratio in units of ``n_inner`` (target <= 1.5: a round is ``n_inner`` supertask fits plus
little else); AnyBoost's time per round beside it. Then the test error of MTBoost and
AnyBoost on digit pairs over 5 splits (MTBoost does *not* beat AnyBoost there).
"""

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from explorer.data import make_task_family  # noqa: E402
from explorer.data.real import load_digits_tasks  # noqa: E402
from explorer.models import AnyBoost, MTBoost  # noqa: E402
from explorer.models.mtboost import _fit_base  # noqa: E402

N_ROUNDS, N_INNER = 10, 10


def best_of(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def per_round(name, X, y, task, base="ls_svm", repeat=5):
    """Best-of-``repeat`` times, the model fits and the pooled fits interleaved so that a
    busy machine slows both alike."""
    signed = np.where(y == y.max(), 1.0, -1.0)
    weight = np.full(len(y), 1.0 / len(y))
    mt = MTBoost(base_learner=base, n_rounds=N_ROUNDS, n_inner=N_INNER, eps=0.0,
                 random_state=0)
    anyboost = AnyBoost(base_learner=base, n_rounds=N_ROUNDS, eps=0.0)
    pooled = t_mt = t_any = np.inf
    fits = N_ROUNDS * N_INNER
    for _ in range(repeat):
        # as many pooled fits as the model makes, in one block: both measurements last
        # about as long, so a busy machine's interruptions hit them alike
        pooled = min(pooled, best_of(lambda: [_fit_base(base, 0, X, signed, weight)
                                              for _ in range(fits)], 1) / fits)
        t_mt = min(t_mt, best_of(lambda: mt.fit(X, y, task), 1) / N_ROUNDS)
        t_any = min(t_any, best_of(lambda: anyboost.fit(X, y, task), 1) / N_ROUNDS)
    print(f"{name:26s} {base:6s} n={len(y):6d} d={X.shape[1]:3d}  round {1e3 * t_mt:8.2f} ms  "
          f"pooled fit {1e3 * pooled:7.2f} ms  round / pooled fit = "
          f"{t_mt / pooled / N_INNER:5.2f} x n_inner  (AnyBoost round {1e3 * t_any:7.2f} ms)")


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
    print(f"MTBoost: {N_ROUNDS} rounds, n_inner={N_INNER}; best of 5 interleaved repeats")
    digits = load_digits_tasks("pairs", n_tasks=5, max_per_task=300, random_state=0)
    train, _ = digits.split(0.2, random_state=0)
    per_round("digit pairs (20 % train)", train.X, train.y, train.task)
    per_round("digit pairs (all rows)", digits.X, digits.y, digits.task)
    big = make_task_family(("related", "negated", "unrelated"), n_features=20,
                           n_samples_per_task=5000, random_state=0)
    for base in ("ls_svm", "stump"):
        per_round("4 tasks x 5000 synthetic", big.X, big.y, big.task, base)
    digit_errors()


if __name__ == "__main__":
    main()
