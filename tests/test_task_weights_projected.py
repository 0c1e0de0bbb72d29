"""The matrix-free square-loss solver of MT-KR / MT-KNN (``solver="projected"``): its row
projection against cvxpy, its optimum against the dense dual solver and cvxpy, and
``solver="auto"`` choosing it where the dense solver refuses."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from explorer.models import MTKNN, MTKR
from explorer.solvers.task_weights import MAX_EXACT_TASKS, square_qp_sweeps
from explorer.solvers.task_weights_projected import project_rows, projected_gradient_sweeps
from tests.test_mtknn import cvxpy_optimum, random_problem, run


@pytest.mark.parametrize("row_sum", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_row_projection_is_the_euclidean_one(seed, row_sum):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 7))
    V = rng.normal(size=(m, m)) * [0.1, 1.0, 10.0][seed % 3]
    P = project_rows(V, row_sum)
    for q in range(m):
        w = cp.Variable(m)
        constraints = [w[q] >= 0] + [w[q] >= sign * w[r] for r in range(m) if r != q
                                     for sign in (1, -1)]
        if row_sum:
            constraints.append(cp.sum(w) == 1)
        problem = cp.Problem(cp.Minimize(cp.sum_squares(w - V[q])), constraints)
        problem.solve(solver="CLARABEL")
        scale = max(1.0, np.abs(V).max())
        assert np.sum((P[q] - V[q]) ** 2) <= problem.value + 1e-9 * scale ** 2
        np.testing.assert_allclose(P[q], w.value, atol=1e-5 * scale)
    assert np.all(np.abs(P) <= np.diag(P)[:, None] + 1e-12)
    if row_sum:
        np.testing.assert_allclose(P.sum(1), 1.0, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("row_sum", [True, False])
def test_projected_gradient_reaches_the_dense_dual_optimum(seed, row_sum):
    F, y, task, m = random_problem(seed, row_sum=row_sum)
    l1, l2 = [(1.0, 1.0), (0.5, 2.0), (10.0, 0.1), (0.1, 0.05)][seed]
    dense = run(square_qp_sweeps(F, y, task, m, l1, l2, row_sum=row_sum), tol=1e-10)[-1]
    history = run(projected_gradient_sweeps(F, y, task, m, l1, l2, row_sum=row_sum), tol=1e-9)
    final = history[-1]
    assert final.gap < 1e-9
    assert all(s.dual <= dense.objective * (1 + 1e-9) for s in history)   # a valid bound
    assert abs(final.objective - dense.objective) / dense.objective <= 1e-8
    W = final.W
    assert np.all(np.abs(W) <= np.diag(W)[:, None] + 1e-12)
    if row_sum:
        np.testing.assert_allclose(W.sum(1), 1.0, atol=1e-9)


def test_projected_gradient_reaches_the_cvxpy_optimum():
    F, y, task, m = random_problem(7, row_sum=True)
    final = run(projected_gradient_sweeps(F, y, task, m, 2.0, 0.5, row_sum=True), tol=1e-9)[-1]
    reference = cvxpy_optimum(F, y, task, m, 2.0, 0.5, "square", row_sum=True)
    assert abs(final.objective - reference) / reference <= 1e-6


def _many_regression_tasks(m, per_task=8, seed=0):
    rng = np.random.default_rng(seed)
    task = np.repeat(np.arange(m), per_task)
    X = rng.normal(size=(task.size, 3)) + (task % 4)[:, None]
    y = X @ [1.0, -0.5, 0.2] + (task % 4) + 0.3 * rng.normal(size=task.size)
    return X, y, task


def test_auto_fits_more_tasks_than_the_dense_solver_takes_to_its_optimum():
    m = MAX_EXACT_TASKS + 5
    X, y, task = _many_regression_tasks(m)
    with pytest.raises(ValueError, match=f"got n_tasks = {m}"):
        MTKR(solver="dual", n_neighbors=4).fit(X, y, task)
    auto = MTKR(n_neighbors=4, tol=1e-7).fit(X, y, task)
    assert auto.solver == "auto" and auto.converged_ and auto.W_.shape == (m, m)
    np.testing.assert_allclose(auto.W_.sum(1), 1.0, atol=1e-9)
    gap = auto.gap_to_optimum(tol=1e-7)   # above the limit: by the matrix-free solver
    assert abs(gap["relative_gap"]) < 1e-6
    labels = np.tile([0, 1], task.size // 2)
    square = MTKNN(loss="square", n_neighbors=4, tol=1e-7).fit(X, labels, task)
    assert square.converged_ and square.W_.shape == (m, m)


def test_auto_is_the_dense_solver_below_the_limit_and_agrees_with_projected():
    X, y, task = _many_regression_tasks(6, per_task=12)
    auto = MTKR(n_neighbors=4, tol=1e-10).fit(X, y, task)
    dual = MTKR(solver="dual", n_neighbors=4, tol=1e-10).fit(X, y, task)
    projected = MTKR(solver="projected", n_neighbors=4, tol=1e-10).fit(X, y, task)
    np.testing.assert_array_equal(auto.W_, dual.W_)
    np.testing.assert_allclose(projected.W_, dual.W_, atol=1e-4)


def test_projected_refuses_the_hinge():
    X, y, task = _many_regression_tasks(3)
    with pytest.raises(ValueError, match="needs loss='square'"):
        MTKNN(solver="projected", loss="hinge", n_neighbors=3).fit(
            X, np.tile([0, 1], task.size // 2), task)
    with pytest.raises(ValueError, match="solver must be"):
        MTKR(solver="cg").fit(X, y, task)
