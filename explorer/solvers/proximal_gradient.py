"""Accelerated proximal gradient (FISTA) with backtracking, as one reusable generator.

Minimises ``F(x) = f(x) + g(x)`` where ``f`` is smooth (gradient Lipschitz with an unknown
constant ``L``) and ``g`` has a cheap proximal operator. Every model that is "a loss plus a
penalty" (rMTFL and its baselines, RegularizedMTL) runs through :func:`proximal_gradient_steps`
with its own ``smooth``, ``prox`` and ``penalty``: one routine, different proximal operators.

Scheme (Beck & Teboulle 2009; rMTFL paper, Eq. 5-8):

* search point ``s_k = x_k + a_k (x_k - x_{k-1})`` (momentum from ``t_k``);
* step ``z = prox_{g/L}(s_k - grad f(s_k) / L)``, accepted when the quadratic upper bound
  holds, ``f(z) <= f(s) + <grad f(s), z - s> + L/2 ||z - s||^2`` (Eq. 8); otherwise ``L``
  doubles. ``L`` starts from a *lower bound* of the Lipschitz constant and never decreases,
  so it stays within a factor 2 of the smallest value that works: a large start would take
  timid steps and a loose ``tol`` would then stop far from the optimum.
* ``monotone=True`` (default) uses MFISTA (Beck & Teboulle 2009, "Fast gradient-based
  algorithms for constrained total variation ...", Sec. V): ``x_{k+1}`` is ``z`` only if it
  does not increase ``F``, else the previous ``x``; the momentum uses ``z`` either way, which
  keeps the O(1/k^2) rate while making the objective sequence non-increasing.

The generator never stops by itself: the caller reads each :class:`ProximalGradientStep`
and decides (see :class:`explorer.models.base.ConvergenceMonitor`). :func:`minimize` is the
plain-function wrapper.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["ProximalGradientStep", "proximal_gradient_steps", "minimize"]

SmoothFn = Callable[[np.ndarray], tuple[float, np.ndarray]]
ValueFn = Callable[[np.ndarray], float]
ProxFn = Callable[[np.ndarray, float], np.ndarray]


@dataclass(frozen=True)
class ProximalGradientStep:
    """State after one accepted iteration.

    ``x`` is the solver's current iterate; it is not copied, so copy it before storing it.
    """

    iteration: int
    x: np.ndarray
    objective: float
    smooth_value: float
    lipschitz: float
    line_search_trials: int
    relative_change: float


def proximal_gradient_steps(
    x0: np.ndarray,
    smooth: SmoothFn,
    prox: ProxFn,
    penalty: ValueFn,
    *,
    lipschitz: float,
    smooth_value: ValueFn | None = None,
    monotone: bool = True,
    restart: bool = True,
    max_line_search: int = 50,
) -> Iterator[ProximalGradientStep]:
    """Yield FISTA iterations of ``min_x f(x) + g(x)`` forever (the caller stops).

    Parameters
    ----------
    x0 : ndarray of any shape
        Starting point (warm start); it is copied.
    smooth : callable x -> (f(x), grad f(x))
    prox : callable (v, step) -> argmin_x  g(x) + ||x - v||^2 / (2 step)
    penalty : callable x -> g(x)
    lipschitz : float > 0
        A lower bound of the Lipschitz constant of ``grad f``; it doubles until Eq. (8)
        holds.
    smooth_value : callable x -> f(x), optional
        Cheaper value-only version of ``smooth`` for line-search trials.
    monotone : bool
        MFISTA (non-increasing objective) when True; plain FISTA otherwise.
    restart : bool
        Adaptive restart (O'Donoghue & Candes 2015, gradient scheme): when the momentum
        points uphill, ``<s - z, z - x> > 0``, it is reset (``t = 1``) and the next step
        is a plain proximal gradient step from the current iterate (the objective stays
        non-increasing). Measured on rMTFL, iterations to reach 1e-6 relative accuracy:
        556 -> 350 (m=10, d=50, n=20, unnormalised), 199 -> 135 and 61 -> 43 (the paper's
        Sec. 6.1 setting, n=20 and n=200).
    max_line_search : int
        Doublings allowed per iteration before giving up (a ``FloatingPointError``).
    """
    if not lipschitz > 0 or not math.isfinite(lipschitz):
        raise ValueError(f"lipschitz must be a positive finite number; got {lipschitz!r}.")
    value_only = smooth_value if smooth_value is not None else (lambda v: smooth(v)[0])
    x = np.array(x0, dtype=np.float64, copy=True)
    x_prev = x.copy()
    z = x.copy()
    f_x = value_only(x)
    F_x = f_x + penalty(x)
    t = 1.0
    t_prev = 1.0
    L = float(lipschitz)
    iteration = 0
    while True:
        # Search point. MFISTA: s = x + (t_prev/t)(z - x) + ((t_prev - 1)/t)(x - x_prev).
        s = x + (t_prev / t) * (z - x) + ((t_prev - 1.0) / t) * (x - x_prev)
        f_s, grad_s = smooth(s)
        trials = 0
        while True:
            trials += 1
            z = prox(s - grad_s / L, 1.0 / L)
            diff = z - s
            f_z = value_only(z)
            bound = f_s + float(np.vdot(grad_s, diff)) + 0.5 * L * float(np.vdot(diff, diff))
            # A relative slack absorbs round-off once the step is tiny.
            if f_z <= bound + 1e-13 * max(1.0, abs(f_s)):
                break
            if trials >= max_line_search:
                raise FloatingPointError(
                    f"line search failed after {trials} doublings (L = {L:.3g}); the "
                    "smooth part's gradient may be wrong or the data not finite."
                )
            L *= 2.0
        F_z = f_z + penalty(z)
        uphill = restart and float(np.vdot(s - z, z - x)) > 0.0
        x_prev = x
        if not monotone or F_z <= F_x:
            x, f_new, F_new = z, f_z, F_z
        else:
            x, f_new, F_new = x, f_x, F_x
        if not monotone:
            # Plain FISTA: the search point extrapolates the accepted iterates only.
            z = x
        # Measured on the candidate z: a step MFISTA rejects leaves F unchanged, which must
        # not read as convergence.
        change = abs(F_x - F_z) / max(abs(F_x), np.finfo(float).tiny)
        F_x, f_x = F_new, f_new
        t_prev, t = t, 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        if uphill:
            t_prev = t = 1.0
            z = x
        iteration += 1
        yield ProximalGradientStep(iteration, x, F_x, f_x, L, trials, change)


def minimize(
    x0: np.ndarray,
    smooth: SmoothFn,
    prox: ProxFn,
    penalty: ValueFn,
    *,
    lipschitz: float,
    tol: float = 1e-6,
    max_iter: int = 1000,
    **kwargs,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Run :func:`proximal_gradient_steps` until the relative objective change < ``tol``.

    Returns
    -------
    x : ndarray, the final iterate (a copy)
    history : ndarray of shape (n_iter,), objective per iteration
    converged : bool
    """
    history = []
    converged = False
    step = None
    for step in proximal_gradient_steps(x0, smooth, prox, penalty, lipschitz=lipschitz,
                                        **kwargs):
        history.append(step.objective)
        if step.iteration > 1 and step.relative_change < tol:
            converged = True
            break
        if step.iteration >= max_iter:
            break
    assert step is not None
    return step.x.copy(), np.asarray(history), converged
