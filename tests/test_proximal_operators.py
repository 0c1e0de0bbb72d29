"""Closed-form proximal operators against their defining minimisation."""

import numpy as np
import pytest
from scipy.optimize import minimize

from explorer.solvers.proximal_operators import prox_columns, prox_l1, prox_rows, prox_trace


def _row_pen(X):
    return np.linalg.norm(X, axis=1).sum()


def _col_pen(X):
    return np.linalg.norm(X, axis=0).sum()


@pytest.mark.parametrize("prox, pen", [
    (prox_rows, _row_pen), (prox_columns, _col_pen),
    (prox_l1, lambda X: np.abs(X).sum()),
    (prox_trace, lambda X: np.linalg.svd(X, compute_uv=False).sum()),
])
def test_prox_is_the_minimiser(prox, pen):
    rng = np.random.default_rng(0)
    V = rng.normal(size=(4, 3))
    step, lam = 0.7, 0.9
    Z = prox(V, step, lam)

    def objective(x):
        X = x.reshape(V.shape)
        return lam * pen(X) + np.sum((X - V) ** 2) / (2 * step)

    best = objective(Z.ravel())
    for _ in range(20):
        probe = Z + 1e-3 * rng.normal(size=V.shape)
        assert objective(probe.ravel()) >= best - 1e-12
    ref = minimize(objective, V.ravel(), method="Powell", options={"xtol": 1e-10, "ftol": 1e-14})
    assert best <= ref.fun + 1e-8


def test_group_thresholding_zeroes_small_groups():
    V = np.array([[3.0, 4.0], [0.3, 0.4]])
    assert np.all(prox_rows(V, 1.0, 1.0)[1] == 0)
    assert np.all(prox_columns(V.T, 1.0, 1.0)[:, 1] == 0)
