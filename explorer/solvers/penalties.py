"""The rMTFL family's penalties as objects, and their sums over the blocks of ``W``.

Every model of :mod:`explorer.models.rmtfl` minimises one datafit plus penalties,

    F(x) = f(W) + sum_b lam_b g_b(B_b),    x = [B_1 | ... | B_k],    W = B_1 + ... + B_k,

with the blocks ``B_b`` (d features x m tasks each) stored side by side. The datafit is
least squares over the stacked tasks, ``f(W) = sum_t 1/(m n_t) ||X_t w_t - y_t||^2`` (rMTFL
paper, Eq. 2), and it is :class:`~explorer.solvers.multitask_least_squares.StackedTasks`:
its value, gradient, gradient at 0 and Lipschitz bound, and the arrays the compiled
kernels read. A penalty is one of the classes below, ``lam g(B)`` on one block:

=====================  =========================  ========================  =============
class                  ``g(B)``                   dual norm ``g^*(G)``      groups
=====================  =========================  ========================  =============
:class:`Ridge`         ``||B||_F^2``              (not a norm)              none
:class:`Lasso`         ``||B||_1``                ``max |G_jt|``            rows (entries)
:class:`RowGroups`     ``||B||_{1,2}``            largest row norm          rows
:class:`ColumnGroups`  ``||B^T||_{1,2}``          largest column norm       columns
:class:`TraceNorm`     ``||B||_*``                spectral norm ``||G||_2``  none
=====================  =========================  ========================  =============

and :class:`BlockSum` is their sum over the blocks: rMTFL is ``BlockSum(RowGroups(lam1),
ColumnGroups(lam2))`` (Eq. 2, ``W = P + Q``), RMTL (Chen, Zhou & Ye 2011) is
``BlockSum(TraceNorm(lam1), ColumnGroups(lam2))`` (``W = L + S``), a single-penalty
baseline is a sum of one block.

What a penalty answers (skglm's design: the solvers ask the penalty, never a string):

* ``value(B)``: ``lam g(B)``.
* ``prox(V, step)``: ``argmin_B lam g(B) + ||B - V||_F^2 / (2 step)`` (closed forms in
  :mod:`explorer.solvers.proximal_operators`).
* ``dual_norm(G)``: ``g^*(G)``; ``lambda_max(G0)``: the smallest ``lam`` for which the block
  is zero at the optimum when the gradient of the datafit at 0 is ``G0`` (``g^*(G0)``).
* ``subdiff_distance(B, G)``: per group, the distance of ``-G`` to ``lam dg(B)`` (0 at the
  optimum, whatever the group: the optimality violation).
* For block coordinate descent (:mod:`explorer.solvers.block_cd`), which updates one
  group at a time: ``groups`` ("rows" or "columns", None when it cannot),
  ``group_dual_norms(G)`` (the working set's scores) and ``support(B)`` (nonzero groups).
* For the compiled kernels (:mod:`explorer.solvers._fista_kernels`, ``_bcd_kernels``):
  ``code``, an integer the kernels branch on (the numbering lives beside the kernels that
  read it, :data:`~explorer.solvers._fista_kernels.ROWS` and the others, so numba's cache
  of a kernel can never hold another numbering); with ``lam`` it is all a kernel needs.
  :meth:`BlockSum.kernel_arguments` gives them for every block at once.

A group penalty's value sums its squares with ``np.sum`` along the group's axis: the order
block CD's objective values and duality gaps (and the compiled MFISTA's start) were always
computed in, so those fits are reproduced to the last bit. The generic MFISTA routine
(trace norm, shared designs) used ``einsum`` before: its objective values may differ in the
last bits (1.8e-15 at most on the reference fits; the coefficients are the same).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import numpy as np

from ._fista_kernels import COLUMNS, L1, RIDGE, ROWS
from .proximal_operators import prox_columns, prox_l1, prox_rows, prox_trace

__all__ = ["NO_KERNEL", "Penalty", "Ridge", "Lasso", "RowGroups", "ColumnGroups",
           "TraceNorm", "BlockSum"]

#: ``Penalty.code`` of a penalty no compiled kernel handles (the trace norm).
NO_KERNEL = -1


class Penalty:
    """``lam g(B)`` on one (d, m) block; subclasses define ``g`` (see the module docstring).

    Parameters
    ----------
    lam : float >= 0
        The penalty's weight (``lambda_rows``, ``lambda_columns``, ... of the estimators).
    """

    #: The compiled kernels' code for this penalty (:data:`NO_KERNEL`: none handles it).
    code: int = NO_KERNEL
    #: The groups block coordinate descent updates one at a time: "rows" (row j of the
    #: block across the tasks), "columns" (task t's column), or None (not by block CD).
    groups: str | None = None

    def __init__(self, lam: float):
        self.lam = float(lam)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.lam!r})"

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.lam == self.lam

    def __hash__(self) -> int:
        return hash((type(self), self.lam))

    def value(self, B: np.ndarray) -> float:
        """``lam g(B)``."""
        raise NotImplementedError

    def prox(self, V: np.ndarray, step: float) -> np.ndarray:
        """``argmin_B lam g(B) + ||B - V||_F^2 / (2 step)`` (a new array)."""
        raise NotImplementedError

    @staticmethod
    def dual_norm(G: np.ndarray) -> float:
        """``g^*(G)``: ``B = 0`` is optimal for ``f + lam g`` exactly when ``g^*(grad f(0))
        <= lam``."""
        raise NotImplementedError

    @classmethod
    def lambda_max(cls, G0: np.ndarray) -> float:
        """The smallest ``lam`` with a zero block at the optimum, given the datafit's
        gradient at 0, ``G0`` (d, m): ``g^*(G0)``."""
        return cls.dual_norm(G0)

    def subdiff_distance(self, B: np.ndarray, G: np.ndarray) -> np.ndarray:
        """Per group, the distance of ``-G`` to ``lam dg(B)`` (the subdifferential): all
        zero exactly at an optimum of ``f + lam g`` when ``G = grad f(B)``."""
        raise NotImplementedError

    def group_dual_norms(self, G: np.ndarray) -> np.ndarray:
        """Per group of :attr:`groups`, the dual norm of G's part: a zero group is optimal
        exactly when it is <= lam (block coordinate descent's working-set score)."""
        raise NotImplementedError(f"{type(self).__name__} is not solved group by group.")

    def support(self, B: np.ndarray) -> np.ndarray:
        """Per group of :attr:`groups`, whether B's part is nonzero."""
        if self.groups is None:
            raise NotImplementedError(f"{type(self).__name__} is not solved group by group.")
        return np.any(B != 0, axis=1 if self.groups == "rows" else 0)


def _group_norms(A: np.ndarray, axis: int) -> np.ndarray:
    """The L2 norms of the rows (axis=1) or columns (axis=0) of ``A``."""
    return np.sqrt(np.sum(A * A, axis=axis))


def _largest_group_norm(G: np.ndarray, axis: int) -> float:
    return float(np.sqrt(np.max(np.sum(G * G, axis=axis))))


def _group_distance(B: np.ndarray, G: np.ndarray, lam: float, axis: int) -> np.ndarray:
    """dist(-G_j, lam d||B_j||) per group j: ``max(||G_j|| - lam, 0)`` for a zero group,
    ``||G_j + lam B_j / ||B_j||||`` for a nonzero one."""
    norms = _group_norms(B, axis)
    unit = B / np.expand_dims(np.where(norms > 0, norms, 1.0), axis)
    return np.where(norms > 0, _group_norms(G + lam * unit, axis),
                    np.maximum(_group_norms(G, axis) - lam, 0.0))


class Ridge(Penalty):
    """``lam ||B||_F^2`` (per-task ridge): smooth, not a norm.

    ``lambda_max`` is only a scale here (ridge never zeroes a block): the largest entry of
    the gradient at 0, as for :class:`Lasso`.
    """

    code = RIDGE

    def value(self, B):
        return self.lam * float(np.sum(B * B))

    def prox(self, V, step):
        return V / (1.0 + 2.0 * step * self.lam)

    @staticmethod
    def dual_norm(G):
        raise TypeError("the ridge penalty is not a norm: it has no dual norm.")

    @classmethod
    def lambda_max(cls, G0):
        return Lasso.dual_norm(G0)

    def subdiff_distance(self, B, G):
        """Per entry, ``|G + 2 lam B|`` (the penalty is differentiable)."""
        return np.abs(G + 2.0 * self.lam * B)


class Lasso(Penalty):
    """``lam ||B||_1`` (per-task lasso), entry-wise soft-thresholding.

    Block coordinate descent visits it row by row (each entry of row j exactly minimised),
    so its groups are rows, with the dual norm of a row ``max_t |G_jt|``.
    """

    code = L1
    groups = "rows"

    def value(self, B):
        return self.lam * float(np.abs(B).sum())

    def prox(self, V, step):
        return prox_l1(V, step, self.lam)

    @staticmethod
    def dual_norm(G):
        return float(np.max(np.abs(G)))

    def subdiff_distance(self, B, G):
        """Per entry: ``max(|G| - lam, 0)`` at 0, ``|G + lam sign(B)|`` elsewhere."""
        return np.where(B != 0, np.abs(G + self.lam * np.sign(B)),
                        np.maximum(np.abs(G) - self.lam, 0.0))

    def group_dual_norms(self, G):
        return np.max(np.abs(G), axis=1)


class RowGroups(Penalty):
    """``lam ||B||_{1,2} = lam sum_j ||B[j, :]||_2`` (rMTFL's ``lambda_rows ||P||_{1,2}``,
    Eq. 2): a feature is used by every task or by none (shared features).

    Prox: row-group soft-thresholding, ``B_j = max(0, 1 - step lam / ||V_j||) V_j`` (the
    paper's closed form for P, Section 3.1, unnumbered between Eq. 7 and 8: one half of the
    proximal step Eq. 5). Dual norm: the largest row norm.
    """

    code = ROWS
    groups = "rows"

    def value(self, B):
        return self.lam * float(_group_norms(B, 1).sum())

    def prox(self, V, step):
        return prox_rows(V, step, self.lam)

    @staticmethod
    def dual_norm(G):
        return _largest_group_norm(G, 1)

    def subdiff_distance(self, B, G):
        return _group_distance(B, G, self.lam, 1)

    def group_dual_norms(self, G):
        return _group_norms(G, 1)


class ColumnGroups(Penalty):
    """``lam ||B^T||_{1,2} = lam sum_t ||B[:, t]||_2`` (rMTFL's ``lambda_columns
    ||Q^T||_{1,2}``, Eq. 2; RMTL's column-sparse S): a task's column is zero or not (the
    outlier tasks).

    Prox: column-group soft-thresholding, ``B_t = max(0, 1 - step lam / ||V_t||) V_t`` (the
    closed form for Q beside the one for P, Section 3.1). Dual norm: the largest column
    norm.
    """

    code = COLUMNS
    groups = "columns"

    def value(self, B):
        return self.lam * float(_group_norms(B, 0).sum())

    def prox(self, V, step):
        return prox_columns(V, step, self.lam)

    @staticmethod
    def dual_norm(G):
        return _largest_group_norm(G, 0)

    def subdiff_distance(self, B, G):
        return _group_distance(B, G, self.lam, 0)

    def group_dual_norms(self, G):
        return _group_norms(G, 0)


class TraceNorm(Penalty):
    """``lam ||B||_* = lam sum_i sigma_i(B)`` (trace-norm regression; RMTL's low-rank L,
    Chen, Zhou & Ye 2011): tasks share a low-dimensional subspace.

    Prox: singular-value thresholding. Dual norm: the spectral norm. No compiled kernel:
    MFISTA runs it through the generic routine (an SVD per step dominates anyway).
    """

    def value(self, B):
        return self.lam * float(np.linalg.svd(B, compute_uv=False).sum())

    def prox(self, V, step):
        return prox_trace(V, step, self.lam)

    @staticmethod
    def dual_norm(G):
        return float(np.linalg.norm(G, 2))

    def subdiff_distance(self, B, G):
        """One group (the whole block). With ``B = U S V^T`` (the singular values above
        round-off), ``d||B||_* = {U V^T + M : U^T M = 0, M V = 0, ||M||_2 <= 1}``; the
        distance of ``-G`` to ``lam`` times it splits into the part of ``D = -G - lam U V^T``
        outside the complement of U and V, and the excess of the complement part's singular
        values over ``lam``."""
        U, s, Vt = np.linalg.svd(B, full_matrices=False)
        rank = int(np.sum(s > s[0] * max(B.shape) * np.finfo(float).eps)) if s.size else 0
        U, Vt = U[:, :rank], Vt[:rank]
        D = -G - self.lam * (U @ Vt)
        outside_U = D - U @ (U.T @ D)
        complement = outside_U - (outside_U @ Vt.T) @ Vt   # (I - U U^T) D (I - V V^T)
        excess = np.maximum(np.linalg.svd(complement, compute_uv=False) - self.lam, 0.0)
        return np.array([math.sqrt(float(np.sum((D - complement) ** 2))
                                   + float(np.sum(excess ** 2)))])


class BlockSum:
    """``sum_b lam_b g_b(B_b)`` over ``x = [B_1 | ... | B_k]`` (d, k m), ``W = sum_b B_b``.

    rMTFL (Eq. 2): ``BlockSum(RowGroups(lambda_rows), ColumnGroups(lambda_columns))`` over
    ``x = [P | Q]``; RMTL: ``BlockSum(TraceNorm(lambda_trace), ColumnGroups(lambda_columns))``
    over ``[L | S]``; a single-penalty model: one block, ``x = W``. The datafit sees only
    ``W``, so its gradient in every block is the same ``G = grad f(W)``.
    """

    def __init__(self, *penalties: Penalty):
        if not penalties or not all(isinstance(p, Penalty) for p in penalties):
            raise TypeError(f"BlockSum takes one or more Penalty objects; got {penalties!r}.")
        self.penalties = tuple(penalties)

    def __repr__(self) -> str:
        return f"BlockSum{self.penalties!r}"

    def __iter__(self) -> Iterator[Penalty]:
        return iter(self.penalties)

    def __len__(self) -> int:
        return len(self.penalties)

    def __getitem__(self, b: int) -> Penalty:
        return self.penalties[b]

    @property
    def lams(self) -> tuple[float, ...]:
        return tuple(p.lam for p in self.penalties)

    def split(self, x: np.ndarray) -> list[np.ndarray]:
        """The blocks of ``x`` (d, k m), views."""
        m = x.shape[1] // len(self.penalties)
        return [x[:, b * m:(b + 1) * m] for b in range(len(self.penalties))]

    def total(self, x: np.ndarray) -> np.ndarray:
        """``W = sum_b B_b`` (a new array)."""
        return sum(self.split(x))

    def value(self, x: np.ndarray) -> float:
        """``sum_b lam_b g_b(B_b)``."""
        total = 0.0
        for p, B in zip(self.penalties, self.split(x), strict=True):
            total += p.value(B)
        return total

    def prox(self, x: np.ndarray, step: float) -> np.ndarray:
        """Block by block (the penalty is separable over the blocks: rMTFL's Eq. 5 splits
        into the two closed forms for P and Q)."""
        if len(self.penalties) == 1:
            return self.penalties[0].prox(x, step)
        return np.hstack([p.prox(B, step)
                          for p, B in zip(self.penalties, self.split(x), strict=True)])

    def dual_bound(self, G: np.ndarray) -> float:
        """The largest ``s`` with ``s G`` in every block's dual ball, ``g_b^*(s G) <= lam_b``
        (inf when G = 0): the scaling that makes a residual a feasible dual point (the
        duality gap of :mod:`explorer.solvers.block_cd`)."""
        s = math.inf
        for p in self.penalties:
            dual = p.dual_norm(G)
            if dual > 0:
                s = min(s, p.lam / dual)
        return s

    @property
    def compiled(self) -> bool:
        """Whether the compiled MFISTA iteration handles every block."""
        return all(p.code != NO_KERNEL for p in self.penalties)

    def kernel_arguments(self) -> tuple[np.ndarray, np.ndarray]:
        """``(codes, lams)``: int64 and float64 arrays, one entry per block, what the
        compiled MFISTA iteration reads."""
        if not self.compiled:
            raise ValueError(f"no compiled kernel for {self!r}.")
        return (np.array([p.code for p in self.penalties], dtype=np.int64),
                np.array([p.lam for p in self.penalties], dtype=np.float64))


def as_block_sum(penalty: Penalty | BlockSum | Sequence[Penalty]) -> BlockSum:
    """A :class:`BlockSum` from one penalty, a sequence of them, or a BlockSum."""
    if isinstance(penalty, BlockSum):
        return penalty
    if isinstance(penalty, Penalty):
        return BlockSum(penalty)
    return BlockSum(*penalty)
