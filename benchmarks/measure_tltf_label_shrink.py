"""How much the paper's 0/1 labels shrink TL-TF's posterior mean (the figures in TLTF's
module docstring, deviation 1).

One task, no intercept, a weak prior (Psi = 100 I, zero mean), 400 standard normal examples
in 3-D, centred; labels drawn from ``sigmoid(w . x)``. The E-step (Jaakkola-Jordan bound,
run to convergence) is fed the labels as 0/1, as the paper writes them; the reference is
scikit-learn's logistic regression (C = 100, no intercept) on the same data. The shrink is
the posterior mean's length along the reference, ``(m . ref) / (ref . ref)``; the cosine of
the two says whether the direction survives. Settings, seeds 0-11 each:

* ``w = (1, -2, 0.5)`` (the test's setting, |w| = 2.29);
* a random direction (seed 100 + s) of length 1, 2.29 and 4.58.

    PYTHONPATH=. python benchmarks/measure_tltf_label_shrink.py
"""

import numpy as np
from sklearn.linear_model import LogisticRegression

from explorer.solvers.tltf_variational import StackedLogisticTasks, VariationalState, e_step

N, D = 400, 3
SEEDS = range(12)


def shrink(seed: int, w: np.ndarray) -> tuple[float, float]:
    """(shrink, cosine) of the 0/1-label posterior mean against the logistic fit."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, D))
    X -= X.mean(axis=0)
    y = (rng.random(N) < 1 / (1 + np.exp(-(X @ w)))).astype(int)
    ref = LogisticRegression(C=100.0, fit_intercept=False, tol=1e-10,
                             max_iter=5000).fit(X, y).coef_[0]
    data, _ = StackedLogisticTasks.build(X, y.astype(float), np.zeros(N, int), 1)
    start = VariationalState(xi=np.ones(N), m=np.zeros((1, D)), V=100 * np.eye(D)[None],
                             logdet_V=np.zeros(1), phi=np.ones((1, 1)),
                             Lambda=np.zeros((D, 1)), Gamma=np.zeros((1, 1)),
                             Psi=100 * np.eye(D))
    mean = e_step(data, start, np.zeros((1, 1)), max_sweeps=500, tol=1e-14)[0].m[0]
    return (float(mean @ ref / (ref @ ref)),
            float(mean @ ref / np.linalg.norm(mean) / np.linalg.norm(ref)))


def summary(name: str, results) -> None:
    shrinks, cosines = zip(*results, strict=True)
    print(f"{name}: shrink {min(shrinks):.2f}-{max(shrinks):.2f}x (median "
          f"{np.median(shrinks):.2f}), cosine >= {min(cosines):.4f}")


def main():
    fixed = np.array([1.0, -2.0, 0.5])
    summary("w = (1, -2, 0.5)", [shrink(s, fixed) for s in SEEDS])
    everything = []
    for length in (1.0, np.linalg.norm(fixed), 2 * np.linalg.norm(fixed)):
        results = []
        for s in SEEDS:
            u = np.random.default_rng(100 + s).normal(size=D)
            results.append(shrink(s, length * u / np.linalg.norm(u)))
        summary(f"random direction, |w| = {length:.2f}", results)
        everything += results
    summary("all random directions", everything)


if __name__ == "__main__":
    main()
