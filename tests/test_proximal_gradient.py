"""The shared FISTA routine against scikit-learn's Lasso and against its own guarantees."""

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from explorer.solvers.proximal_gradient import minimize, proximal_gradient_steps


def lasso_problem(seed=0, n=60, d=25, lam=1.5):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, d))
    b = A[:, :3] @ np.array([3.0, -2.0, 1.0]) + rng.normal(size=n)

    def smooth(x):
        r = A @ x - b
        return 0.5 * r @ r, A.T @ r

    def prox(v, step):
        return np.sign(v) * np.maximum(np.abs(v) - lam * step, 0.0)

    return A, b, lam, smooth, prox, lambda x: lam * np.abs(x).sum()


@pytest.mark.parametrize("monotone", [True, False])
def test_matches_sklearn_lasso(monotone):
    A, b, lam, smooth, prox, penalty = lasso_problem()
    x, history, converged = minimize(np.zeros(A.shape[1]), smooth, prox, penalty,
                                     lipschitz=1e-2, tol=1e-14, max_iter=20000,
                                     monotone=monotone)
    ref = Lasso(alpha=lam / A.shape[0], fit_intercept=False, tol=1e-14,
                max_iter=100000).fit(A, b)
    assert converged
    np.testing.assert_allclose(x, ref.coef_, atol=1e-6)
    np.testing.assert_array_equal(x == 0, ref.coef_ == 0)


def test_monotone_variant_never_increases_the_objective():
    A, b, lam, smooth, prox, penalty = lasso_problem(seed=1)
    _, history, _ = minimize(np.zeros(A.shape[1]), smooth, prox, penalty, lipschitz=1e-3,
                             tol=1e-15, max_iter=500)
    assert np.all(np.diff(history) <= 1e-12 * history[0])


def test_lipschitz_estimate_only_grows_and_stays_within_factor_two():
    A, b, lam, smooth, prox, penalty = lasso_problem(seed=2)
    true_L = np.linalg.norm(A, 2) ** 2
    estimates = []
    for step in proximal_gradient_steps(np.zeros(A.shape[1]), smooth, prox, penalty,
                                        lipschitz=1e-3):
        estimates.append(step.lipschitz)
        if step.iteration == 200:
            break
    assert np.all(np.diff(estimates) >= 0)
    assert estimates[-1] <= 2 * true_L


def test_bad_lipschitz_and_broken_gradient_fail_clearly():
    A, b, lam, smooth, prox, penalty = lasso_problem()
    with pytest.raises(ValueError, match="lipschitz must be a positive finite number; got 0"):
        next(proximal_gradient_steps(np.zeros(A.shape[1]), smooth, prox, penalty, lipschitz=0))

    def wrong_gradient(x):
        value, grad = smooth(x)
        return value, -grad

    with pytest.raises(FloatingPointError, match="line search failed"):
        next(proximal_gradient_steps(10 * np.ones(A.shape[1]), wrong_gradient, prox, penalty,
                                     lipschitz=1.0))


def test_adaptive_restart_keeps_the_optimum_and_needs_fewer_iterations():
    # an ill-conditioned design (correlated columns): where FISTA's momentum oscillates
    rng = np.random.default_rng(3)
    base = rng.normal(size=(80, 1))
    A = base + 0.05 * rng.normal(size=(80, 30))
    b = A[:, :2] @ np.array([2.0, -1.0]) + 0.1 * rng.normal(size=80)
    lam = 0.05

    def smooth(x):
        r = A @ x - b
        return 0.5 * r @ r, A.T @ r

    def prox(v, step):
        return np.sign(v) * np.maximum(np.abs(v) - lam * step, 0.0)

    def penalty(x):
        return lam * np.abs(x).sum()

    ref = Lasso(alpha=lam / A.shape[0], fit_intercept=False, tol=1e-14,
                max_iter=1_000_000).fit(A, b)
    best = smooth(ref.coef_)[0] + penalty(ref.coef_)
    iterations = {}
    for restart in (False, True):
        previous = np.inf
        for step in proximal_gradient_steps(np.zeros(30), smooth, prox, penalty,
                                            lipschitz=1e-2, restart=restart):
            assert step.objective <= previous * (1 + 1e-14)   # still monotone
            previous = step.objective
            if step.objective <= best * (1 + 1e-8) or step.iteration >= 50_000:
                break
        iterations[restart] = step.iteration
    assert iterations[True] < 50_000 and iterations[True] < iterations[False], iterations


# ---------------------------------------------------------------- the compiled iteration
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("penalties", [("rows", "columns"), ("rows",), ("columns",), ("l1",),
                                       ("ridge",)])
def test_compiled_iteration_follows_the_generic_routine(penalties, batched, monkeypatch):
    """stacked_fista_steps runs the scheme of proximal_gradient_steps (same iterates up to
    round-off, same Lipschitz doublings), batched (8 iterations per compiled call) or not,
    and never mutates an iterate it has yielded."""
    from explorer.solvers import stacked_fista

    if not batched:
        monkeypatch.setattr(stacked_fista, "BATCH_MAX_ENTRIES", 0)
    from explorer.solvers.multitask_least_squares import StackedTasks
    from explorer.solvers.penalties import BlockSum, ColumnGroups, Lasso, Ridge, RowGroups
    from explorer.solvers.proximal_operators import (
        column_norms,
        prox_columns,
        prox_l1,
        prox_rows,
        row_norms,
    )
    from explorer.solvers.stacked_fista import stacked_fista_steps

    rng = np.random.default_rng(4)
    m, d = 4, 7
    task = np.repeat(np.arange(m), [6, 11, 8, 9])
    X = rng.normal(size=(task.size, d))
    y = X @ rng.normal(size=d) + rng.normal(size=task.size)
    data = StackedTasks(X, y, task, m)
    lams = [0.05, 0.2][: len(penalties)]
    k = len(penalties)
    operators = {"rows": (prox_rows, lambda B: row_norms(B).sum()),
                 "columns": (prox_columns, lambda B: column_norms(B).sum()),
                 "l1": (prox_l1, lambda B: np.abs(B).sum()),
                 "ridge": (lambda V, step, lam: V / (1 + 2 * step * lam),
                           lambda B: np.sum(B * B))}

    def blocks(x):
        return [x[:, b * m:(b + 1) * m] for b in range(k)]

    def smooth(x):
        value, G = data.value_grad(sum(blocks(x)))
        return value, np.tile(G, (1, k))

    def prox(v, step):
        return np.hstack([operators[p][0](B, step, lam)
                          for p, B, lam in zip(penalties, blocks(v), lams, strict=True)])

    def penalty(x):
        return sum(lam * operators[p][1](B)
                   for p, B, lam in zip(penalties, blocks(x), lams, strict=True))

    lipschitz = data.lipschitz_lower_bound()
    generic = proximal_gradient_steps(np.zeros((d, k * m)), smooth, prox, penalty,
                                      lipschitz=lipschitz)
    kinds = {"rows": RowGroups, "columns": ColumnGroups, "l1": Lasso, "ridge": Ridge}
    penalty = BlockSum(*(kinds[p](lam) for p, lam in zip(penalties, lams, strict=True)))
    compiled = stacked_fista_steps(data, penalty, np.zeros((d, k * m)), lipschitz=lipschitz)
    kept = []
    for _ in range(60):
        a, b = next(generic), next(compiled)
        assert a.iteration == b.iteration and a.lipschitz == b.lipschitz
        assert b.objective == pytest.approx(a.objective, rel=1e-10)
        np.testing.assert_allclose(b.x, a.x, atol=1e-9)
        kept.append((b.x, b.x.copy()))
    assert all(np.array_equal(x, copy) for x, copy in kept)
