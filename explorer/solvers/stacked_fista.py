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
tests check both give the same iterates. Trace-norm blocks use the generic routine.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ._fista_kernels import COLUMNS, L1, RIDGE, ROWS, _fista_batch, _residuals, _value
from .multitask_least_squares import StackedTasks
from .proximal_gradient import ProximalGradientStep

__all__ = ["PENALTY_KINDS", "BATCH_MAX_ENTRIES", "stacked_fista_steps", "warm_up"]

#: Penalty names accepted by :func:`stacked_fista_steps`.
PENALTY_KINDS = {"ridge": RIDGE, "l1": L1, "rows": ROWS, "columns": COLUMNS}
#: Designs with at most this many entries run 8 iterations per compiled call (the caller
#: still gets every iteration); larger ones one per call, so stopping wastes nothing.
BATCH_MAX_ENTRIES = 50_000


def stacked_fista_steps(data: StackedTasks, penalties: Sequence[str],
                        lams: Sequence[float], x0: np.ndarray, *, lipschitz: float,
                        monotone: bool = True, restart: bool = True,
                        max_line_search: int = 50) -> Iterator[ProximalGradientStep]:
    """Yield MFISTA iterations forever (the caller stops), like ``proximal_gradient_steps``.

    Parameters
    ----------
    data : StackedTasks
        The (normalised, centred) stacked tasks.
    penalties : sequence of {"ridge", "l1", "rows", "columns"}
        One per block, in block order.
    lams : sequence of float
        The penalty weights, one per block.
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
    kinds = np.array([PENALTY_KINDS[p] for p in penalties], dtype=np.int64)
    lam_arr = np.asarray(lams, dtype=np.float64)
    X, y = np.ascontiguousarray(data.X), np.ascontiguousarray(data.y)
    offsets = np.asarray(data.offsets, dtype=np.int64)
    weight = np.asarray(data.weight, dtype=np.float64)
    m, k = data.m, kinds.size
    x = np.array(x0, dtype=np.float64, copy=True)
    if x.shape != (data.d, k * m):
        raise ValueError(f"x0 must have shape ({data.d}, {k * m}); got {x.shape}.")
    r_x = _residuals(X, y, offsets, sum(x[:, b * m:(b + 1) * m] for b in range(k)))
    f_x = _value(r_x, offsets, weight)
    F_x = f_x + _penalty(x, kinds, lam_arr, m)
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


def _penalty(x: np.ndarray, kinds: np.ndarray, lams: np.ndarray, m: int) -> float:
    total = 0.0
    for b, (kind, lam) in enumerate(zip(kinds, lams, strict=True)):
        B = x[:, b * m:(b + 1) * m]
        if kind == RIDGE:
            total += lam * float(np.sum(B * B))
        elif kind == L1:
            total += lam * float(np.abs(B).sum())
        elif kind == ROWS:
            total += lam * float(np.sqrt(np.sum(B * B, axis=1)).sum())
        else:
            total += lam * float(np.sqrt(np.sum(B * B, axis=0)).sum())
    return total


def warm_up() -> None:
    """Compile (or load from the on-disk cache) the kernels on tiny data (server start)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 3))
    task = np.repeat([0, 1], 4)
    data = StackedTasks(X, rng.normal(size=8), task, 2)
    for penalties in (("rows", "columns"), ("ridge",), ("l1",)):
        steps = stacked_fista_steps(data, penalties, [0.1] * len(penalties),
                                    np.zeros((3, 2 * len(penalties))),
                                    lipschitz=data.lipschitz_lower_bound())
        next(steps)
