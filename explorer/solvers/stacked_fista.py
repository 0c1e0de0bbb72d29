"""MFISTA for stacked least squares plus group penalties, one compiled call per iteration.

The rMTFL family (rMTFL Eq. 2 and its ridge / lasso / L2,1 / column-group baselines) is

    min_x  sum_t 1/(m n_t) ||X_t^T w_t - y_t||^2 + sum_b lam_b g_b(B_b),   W = sum_b B_b

with every ``g_b`` a block-separable penalty whose prox is closed-form (Eq. 6-7). On small
problems (m=10, d=50, n_t=20) the generic :func:`~explorer.solvers.proximal_gradient.
proximal_gradient_steps` spends most of an iteration in Python-level overhead (about 30
NumPy calls); here one numba call runs the whole iteration (search point, gradient,
backtracking, prox, restart test), with the residuals carried along (they are affine in W,
so the search point's cost no product). The scheme is the same as the generic routine
(MFISTA, backtracking from a Lipschitz lower bound, gradient-scheme adaptive restart); the
tests check both give the same iterates.

:func:`mfista_steps` is the models' entry point: the compiled iteration when every block's
penalty has a kernel (:attr:`~explorer.solvers.penalties.BlockSum.compiled`) and the tasks
have designs of their own, else the generic routine on the same datafit and penalty (the
trace norm, and a design shared by all tasks, where one GEMM per product is faster).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ._fista_kernels import _fista_batch, _residuals, _value
from .multitask_least_squares import StackedTasks
from .penalties import BlockSum, ColumnGroups, Lasso, Penalty, Ridge, RowGroups, as_block_sum
from .proximal_gradient import ProximalGradientStep, proximal_gradient_steps

__all__ = ["BATCH_MAX_ENTRIES", "mfista_steps", "stacked_fista_steps", "warm_up"]

#: Designs with at most this many entries run 8 iterations per compiled call (the caller
#: still gets every iteration); larger ones one per call, so stopping wastes nothing.
BATCH_MAX_ENTRIES = 50_000


def mfista_steps(data: StackedTasks, penalty: Penalty | BlockSum, x0: np.ndarray, *,
                 lipschitz: float) -> Iterator[ProximalGradientStep]:
    """MFISTA on ``data`` plus ``penalty`` from ``x0`` (d, k m), forever: the compiled
    iteration (:func:`stacked_fista_steps`) where it applies, else the generic
    :func:`~explorer.solvers.proximal_gradient.proximal_gradient_steps` (the same scheme)."""
    penalty = as_block_sum(penalty)
    if penalty.compiled and data.shared_design is None:
        return stacked_fista_steps(data, penalty, x0, lipschitz=lipschitz)
    smooth, value = _smooth(data, len(penalty))
    return proximal_gradient_steps(x0, smooth, penalty.prox, penalty.value,
                                   lipschitz=lipschitz, smooth_value=value)


def _smooth(data: StackedTasks, k: int):
    """``(smooth, value)`` closures of the datafit in ``x = [B_1 | ... | B_k]``: the value
    and gradient of ``f(W)``, ``W = sum_b B_b``, the gradient the same in every block."""
    if k == 1:
        return data.value_grad, data.value
    m = data.m

    def total(x):
        return sum(x[:, b * m:(b + 1) * m] for b in range(k))

    def smooth(x):
        val, G = data.value_grad(total(x))
        return val, np.tile(G, (1, k))

    def value(x):
        return data.value(total(x))

    return smooth, value


def stacked_fista_steps(data: StackedTasks, penalty: Penalty | BlockSum, x0: np.ndarray, *,
                        lipschitz: float, monotone: bool = True, restart: bool = True,
                        max_line_search: int = 50) -> Iterator[ProximalGradientStep]:
    """Yield MFISTA iterations forever (the caller stops), like ``proximal_gradient_steps``.

    Parameters
    ----------
    data : StackedTasks
        The (normalised, centred) stacked tasks.
    penalty : Penalty or BlockSum
        One penalty per block, in block order, each with a compiled kernel
        (:attr:`~explorer.solvers.penalties.BlockSum.compiled`).
    x0 : ndarray of shape (d, k m)
        Start (copied); the k blocks side by side.
    lipschitz : float > 0
        Lower bound of the Lipschitz constant of the loss gradient in x.

    Yields
    ------
    ProximalGradientStep
        Its ``x`` is never mutated afterwards (each batch of iterations allocates its
        own array).
    """
    if not lipschitz > 0 or not np.isfinite(lipschitz):
        raise ValueError(f"lipschitz must be a positive finite number; got {lipschitz!r}.")
    penalty = as_block_sum(penalty)
    kinds, lam_arr = penalty.kernel_arguments()
    X, y = np.ascontiguousarray(data.X), np.ascontiguousarray(data.y)
    offsets = np.asarray(data.offsets, dtype=np.int64)
    weight = np.asarray(data.weight, dtype=np.float64)
    m, k = data.m, kinds.size
    x = np.array(x0, dtype=np.float64, copy=True)
    if x.shape != (data.d, k * m):
        raise ValueError(f"x0 must have shape ({data.d}, {k * m}); got {x.shape}.")
    r_x = _residuals(X, y, offsets, penalty.total(x))
    f_x = _value(r_x, offsets, weight)
    F_x = f_x + penalty.value(x)
    state = np.array([1.0, 1.0, float(lipschitz), F_x, f_x])
    x_prev, z, r_prev, r_z = x, x, r_x, r_x
    batch = 8 if X.size <= BATCH_MAX_ENTRIES else 1
    iteration = 0
    while True:
        xs, stats, x, x_prev, z, r_x, r_prev, r_z, state = _fista_batch(
            X, y, offsets, weight, kinds, lam_arr, x, x_prev, z, r_x, r_prev, r_z, state,
            monotone, restart, max_line_search, batch)
        for b in range(batch):
            objective, smooth_value, L, trials, change = stats[b].tolist()
            if trials < 0:
                raise FloatingPointError(
                    f"line search failed after {max_line_search} doublings (L = {L:.3g}); "
                    "the data may not be finite.")
            iteration += 1
            yield ProximalGradientStep(iteration, xs[b], objective, smooth_value, L,
                                       int(trials), change)


def warm_up() -> None:
    """Compile (or load from the on-disk cache) the kernels on tiny data (server start)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 3))
    task = np.repeat([0, 1], 4)
    data = StackedTasks(X, rng.normal(size=8), task, 2)
    for penalty in (BlockSum(RowGroups(0.1), ColumnGroups(0.1)), BlockSum(Ridge(0.1)),
                    BlockSum(Lasso(0.1))):
        steps = stacked_fista_steps(data, penalty, np.zeros((3, 2 * len(penalty))),
                                    lipschitz=data.lipschitz_lower_bound())
        next(steps)
