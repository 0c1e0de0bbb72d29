"""The penalty objects (explorer.solvers.penalties) against their definitions."""

import cvxpy as cp  # a test dependency: missing, the tests must fail, not skip
import numpy as np
import pytest

from explorer.solvers._fista_kernels import _prox_block
from explorer.solvers.penalties import (
    NO_KERNEL,
    BlockSum,
    ColumnGroups,
    Lasso,
    Penalty,
    Ridge,
    RowGroups,
    TraceNorm,
)

ALL = [Ridge, Lasso, RowGroups, ColumnGroups, TraceNorm]
NORMS = [Lasso, RowGroups, ColumnGroups, TraceNorm]

#: g(B) written out, and as cvxpy expressions
DIRECT = {
    Ridge: lambda B: sum(B[j, t] ** 2 for j in range(B.shape[0]) for t in range(B.shape[1])),
    Lasso: lambda B: sum(abs(B[j, t]) for j in range(B.shape[0]) for t in range(B.shape[1])),
    RowGroups: lambda B: sum(np.sqrt(B[j] @ B[j]) for j in range(B.shape[0])),
    ColumnGroups: lambda B: sum(np.sqrt(B[:, t] @ B[:, t]) for t in range(B.shape[1])),
    TraceNorm: lambda B: np.linalg.svd(B, compute_uv=False).sum(),
}
CVXPY = {
    Ridge: lambda B: cp.sum_squares(B),
    Lasso: lambda B: cp.sum(cp.abs(B)),
    RowGroups: lambda B: cp.sum(cp.norm(B, 2, axis=1)),
    ColumnGroups: lambda B: cp.sum(cp.norm(B, 2, axis=0)),
    TraceNorm: lambda B: cp.normNuc(B),
}


def _block(seed=0, d=6, m=4):
    """A block with a zero row, a zero column and a zero entry (every kind of group)."""
    B = np.random.default_rng(seed).normal(size=(d, m))
    B[2] = 0.0
    B[:, 1] = 0.0
    B[0, 0] = 0.0
    return B


@pytest.mark.parametrize("kind", ALL, ids=lambda k: k.__name__)
def test_value_is_the_formula(kind):
    B = _block()
    assert kind(0.7).value(B) == pytest.approx(0.7 * DIRECT[kind](B), rel=1e-13)
    assert kind(0.7).value(np.zeros((3, 2))) == 0.0


@pytest.mark.parametrize("kind", ALL, ids=lambda k: k.__name__)
def test_prox_is_the_minimiser_cvxpy_finds(kind):
    V = np.random.default_rng(1).normal(size=(5, 4))
    V[3] *= 0.1                      # a small row and column: thresholded to zero
    V[:, 2] *= 0.1
    step, lam = 0.8, 0.6
    B = cp.Variable(V.shape)
    # (Clarabel for every kind: cvxpy's default for the QPs, OSQP, warns of a deprecated
    # option at the lowest versions CI installs)
    cp.Problem(cp.Minimize(lam * CVXPY[kind](B) + cp.sum_squares(B - V) / (2 * step))).solve(
        solver="CLARABEL")
    np.testing.assert_allclose(kind(lam).prox(V, step), B.value, atol=1e-5)


@pytest.mark.parametrize("kind", ALL, ids=lambda k: k.__name__)
def test_subdiff_distance_is_zero_exactly_at_the_optimum(kind):
    # B = prox(V) minimises lam g(B) + ||B - V||^2 / (2 step), whose smooth part has the
    # gradient G = (B - V) / step: -G is in lam dg(B) there, and nowhere else
    V = np.random.default_rng(2).normal(size=(6, 4))
    V[1] *= 0.05
    V[:, 3] *= 0.05
    penalty, step = kind(0.5), 0.9
    B = penalty.prox(V, step)
    assert np.max(penalty.subdiff_distance(B, (B - V) / step)) <= 1e-12
    off = B + 0.3                      # not the optimum: some group violates
    assert np.max(penalty.subdiff_distance(off, (off - V) / step)) > 1e-3


@pytest.mark.parametrize("kind", NORMS, ids=lambda k: k.__name__)
def test_dual_norm_bounds_the_inner_product_and_is_attained(kind):
    rng = np.random.default_rng(3)
    G = rng.normal(size=(5, 4))
    dual, g = kind.dual_norm(G), (lambda B: kind(1.0).value(B))
    for _ in range(200):              # Hoelder: <G, B> <= g^*(G) g(B)
        B = rng.normal(size=G.shape) * (rng.random(G.shape) < 0.5)
        assert np.sum(G * B) <= dual * g(B) + 1e-12
    # and the supremum over the unit ball of g is reached: g^*(G) = max <G, B>, g(B) <= 1
    B = cp.Variable(G.shape)
    best = cp.Problem(cp.Maximize(cp.sum(cp.multiply(G, B))), [CVXPY[kind](B) <= 1]).solve()
    assert dual == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("kind", ALL, ids=lambda k: k.__name__)
def test_lambda_max_is_where_the_block_becomes_zero(kind):
    # with gradient G0 at 0, B = 0 is optimal iff prox(-step G0, step) = 0 (a fixed point)
    G0 = np.random.default_rng(4).normal(size=(6, 5))
    lam_max, step = kind.lambda_max(G0), 0.3
    assert np.all(kind(lam_max * (1 + 1e-9)).prox(-step * G0, step) == 0) or kind is Ridge
    assert np.any(kind(lam_max * 0.99).prox(-step * G0, step) != 0)


def test_ridge_has_no_dual_norm_and_its_lambda_max_is_a_scale():
    G0 = np.random.default_rng(5).normal(size=(4, 3))
    with pytest.raises(TypeError, match="not a norm"):
        Ridge.dual_norm(G0)
    assert Ridge.lambda_max(G0) == np.max(np.abs(G0))


@pytest.mark.parametrize("kind", [Lasso, RowGroups, ColumnGroups], ids=lambda k: k.__name__)
def test_groups_of_block_cd(kind):
    B, G = _block(6), np.random.default_rng(7).normal(size=(6, 4))
    penalty = kind(0.4)
    axis = 0 if kind.groups == "columns" else 1
    norms = penalty.group_dual_norms(G)
    assert norms.shape == (G.shape[1 - axis],)
    assert np.max(norms) == kind.dual_norm(G)
    np.testing.assert_array_equal(penalty.support(B), np.any(B != 0, axis=axis))
    # a zero group is optimal iff its dual norm <= lam: the subdifferential distance agrees
    zero = ~penalty.support(B)
    distance = penalty.subdiff_distance(B, G)
    if kind is Lasso:
        distance = distance.max(axis=1)
    np.testing.assert_array_equal((norms > 0.4)[zero], (distance > 0)[zero])


@pytest.mark.parametrize("kind", [Lasso, RowGroups, ColumnGroups, Ridge],
                         ids=lambda k: k.__name__)
def test_the_compiled_prox_is_the_objects_prox(kind):
    # the kernel reads only the object's code and weight, and computes its prox and value
    V = np.random.default_rng(8).normal(size=(5, 6))   # two blocks of m = 3
    penalty, step = kind(0.7), 0.4
    out = np.empty_like(V)
    value = _prox_block(V, out, 3, 3, penalty.code, step, penalty.lam)
    np.testing.assert_allclose(out[:, 3:], penalty.prox(V[:, 3:], step), rtol=1e-14)
    assert value == pytest.approx(penalty.value(out[:, 3:]), rel=1e-12)


def test_block_sum_is_the_penalties_block_by_block():
    rng = np.random.default_rng(9)
    P, Q = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    x = np.hstack([P, Q])
    rmtfl = BlockSum(RowGroups(0.3), ColumnGroups(0.8))
    assert len(rmtfl) == 2 and rmtfl.lams == (0.3, 0.8)
    np.testing.assert_array_equal(rmtfl.total(x), P + Q)
    assert rmtfl.value(x) == RowGroups(0.3).value(P) + ColumnGroups(0.8).value(Q)
    np.testing.assert_array_equal(rmtfl.prox(x, 0.5), np.hstack(
        [RowGroups(0.3).prox(P, 0.5), ColumnGroups(0.8).prox(Q, 0.5)]))
    # the dual scaling: s G inside both dual balls, on the boundary of one
    G = rng.normal(size=(5, 3))
    s = rmtfl.dual_bound(G)
    assert s == min(0.3 / RowGroups.dual_norm(G), 0.8 / ColumnGroups.dual_norm(G))
    assert BlockSum(Lasso(1.0)).dual_bound(np.zeros((2, 2))) == np.inf
    codes, lams = rmtfl.kernel_arguments()
    assert codes.dtype == np.int64 and list(codes) == [RowGroups.code, ColumnGroups.code]
    assert list(lams) == [0.3, 0.8]
    rmtl = BlockSum(TraceNorm(0.3), ColumnGroups(0.8))
    assert rmtfl.compiled and not rmtl.compiled and TraceNorm.code == NO_KERNEL
    with pytest.raises(ValueError, match="no compiled kernel"):
        rmtl.kernel_arguments()
    with pytest.raises(TypeError):
        BlockSum("rows")
    assert RowGroups(0.3) == RowGroups(0.3) != ColumnGroups(0.3)
    assert repr(rmtfl) == "BlockSum(RowGroups(0.3), ColumnGroups(0.8))"


def test_penalty_base_is_abstract():
    with pytest.raises(NotImplementedError):
        Penalty(1.0).value(np.zeros((2, 2)))
    with pytest.raises(NotImplementedError):
        TraceNorm(1.0).group_dual_norms(np.zeros((2, 2)))
    with pytest.raises(NotImplementedError):
        Ridge(1.0).support(np.zeros((2, 2)))
