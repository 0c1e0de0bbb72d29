"""How far MT-KNN's sigma (the mean pairwise distance) is from the mean over every pair
(the figures in ``mean_pairwise_distance``'s docstring).

* Above ``SIGMA_EXACT_MAX`` (3,000) rows sigma is the mean over a 3,000-row sample: for two
  data sets (``make_task_family`` with ten related tasks of 700 examples in 12 features,
  seed 1; 5,000 standard normal points in 2-D, seed 2) the relative error of 20 fits' sigma
  (``neighbours_and_mean_distance`` with ``default_rng(None)``, as an estimator with
  ``random_state=None`` draws) against scipy's ``pdist`` mean.
* Up to 3,000 rows, duplicated rows: 500 rows (5 features of scales 0.1-100 around 50), then
  the same 500 again and the first 200 a third time (seeds 3, three draws), sigma against the
  ``pdist`` mean; and without duplicates (the app's opening data, seed 0).

    PYTHONPATH=. python benchmarks/measure_sigma.py
"""

import numpy as np
from scipy.spatial.distance import pdist

from explorer.data import make_task_family
from explorer.solvers.nearest_neighbours import neighbours_and_mean_distance


def relative_error(X, rng=None) -> float:
    exact = pdist(X).mean()
    return abs(neighbours_and_mean_distance(X, 6, rng)[0] - exact) / exact


def main():
    sampled = {
        "task family 7000 x 12": make_task_family(("related",) * 9, n_features=12,
                                                  n_samples_per_task=700,
                                                  random_state=1).X,
        "normal 5000 x 2": np.random.default_rng(2).normal(size=(5000, 2)),
    }
    for name, X in sampled.items():
        errors = [relative_error(X, np.random.default_rng(None)) for _ in range(20)]
        print(f"sampled sigma, {name}: relative error {min(errors):.1e} to {max(errors):.1e} "
              "over 20 fits")
    rng = np.random.default_rng(3)
    for _ in range(3):
        base = rng.normal(size=(500, 5)) * [1, 10, 100, 0.1, 1] + 50
        X = np.vstack([base, base, base[:200]])
        print(f"all pairs, 1200 rows with 700 repeats: relative error {relative_error(X):.1e}")
    X = make_task_family(("related",) * 5 + ("unrelated",), n_features=12,
                         n_samples_per_task=24, random_state=0).X
    print(f"all pairs, the opening data (no repeats): relative error {relative_error(X):.1e}")


if __name__ == "__main__":
    main()
