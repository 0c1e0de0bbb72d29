"""Stacked per-task least squares for the rMTFL family.

The smooth part of every model here is

    f(W) = sum_i 1/(m n_i) ||X_i^T w_i - y_i||^2        (rMTFL paper, Eq. 2; W is d x m)

with tasks of possibly different sizes ``n_i``. Rows are stored stacked task by task with
``offsets`` so each task is a contiguous slice; gradients are computed per task
(``2/(m n_i) X_i^T r_i``) and the (dm x dm) block matrix is never formed.

Normalisation (Eq. 1): the paper assumes ``sum_k x_jk^(i)2 = 1`` for every feature ``j`` of
every task ``i`` (the extracted text of Eq. 1 is garbled; this is the reading consistent with
Sec. 6.1 and the proof of Theorem 2, Eq. 35). With an intercept, each task's columns and
response are centred first. Coefficients found on the normalised data map back as
``w_user[j, i] = w_norm[j, i] / scale[j, i]``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["LAYOUTS", "StackedTasks", "VECTORIZE_MAX_ENTRIES"]

#: Stacked designs with at most this many entries use the vectorised products.
VECTORIZE_MAX_ENTRIES = 200_000
#: Storage of the normalised design: "rows" (n, d) in C order, each example's features
#: contiguous (the gradient methods' products); "features" (d, n) in C order, each
#: feature's values contiguous (what block coordinate descent reads).
LAYOUTS = ("rows", "features")
#: Entries of the temporaries :func:`_normalise_into` works on at once.
_CHUNK_ENTRIES = 1 << 16


def _normalise_into(dest: np.ndarray, X: np.ndarray, *, normalize: bool, center: bool
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Write ``X`` (n, d) centred and Eq. (1)-normalised, transposed, into ``dest`` (d, n).

    Returns ``(mean, scale)`` (d,) each. Works on blocks of columns, so the temporaries are
    small whatever the size of X; every column is reduced in the same order as NumPy's
    ``X.mean(axis=0)`` and ``np.sum(X ** 2, axis=0)`` on the whole (C-order) array, so
    the values are exactly those of the "rows" layout.
    """
    n, d = X.shape
    mean = X.mean(axis=0) if center else np.zeros(d)
    scale = np.ones(d)
    step = max(1, _CHUNK_ENTRIES // max(n, 1))
    for a in range(0, d, step):
        b = min(d, a + step)
        block = X[:, a:b] - mean[a:b] if center else X[:, a:b]
        if normalize:
            norms = np.sqrt(np.sum(block ** 2, axis=0))
            norms[norms == 0] = 1.0
            scale[a:b] = norms
            block = block / norms
        dest[a:b] = block.T
    return mean, scale


class StackedTasks:
    """Per-task data stacked with offsets, optionally centred and Eq. (1)-normalised.

    The one datafit of the rMTFL family's solvers (block CD, MFISTA): ``f(W)`` above, its
    gradient, its gradient at 0 (whose dual norms are the penalties' ``lambda_max``,
    :mod:`explorer.solvers.penalties`) and a Lipschitz lower bound; the compiled kernels
    read its arrays (design, responses, offsets, weights).

    Parameters
    ----------
    X : ndarray (n_samples, d); y : ndarray (n_samples,); task : ndarray of int (n_samples,)
    n_tasks : int
    normalize : bool   scale each task's features to unit L2 norm (Eq. 1)
    center : bool      subtract each task's feature and response means (intercepts)
    layout : {"rows", "features"}
        How the normalised design is stored (:data:`LAYOUTS`): "features" is the layout
        block coordinate descent reads, built without an (n, d) copy; ``X`` is then a
        transposed view of it.
    shared_layout : {"rows", "features"} or None
        The same for a design found shared by every task (None: ``layout``); the solver
        can differ for the two, and a shared design fitted stacked or by :meth:`shared`
        gets the same arithmetic when both are given the same layout.
    """

    def __init__(self, X, y, task, n_tasks, *, normalize=True, center=True, layout="rows",
                 shared_layout=None):
        shared_layout = layout if shared_layout is None else shared_layout
        for name, value in (("layout", layout), ("shared_layout", shared_layout)):
            if value not in LAYOUTS:
                raise ValueError(f"{name} must be one of {LAYOUTS}; got {value!r}.")
        task = np.asarray(task)
        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        counts = np.bincount(task, minlength=n_tasks)
        private = task.size > 1 and not np.all(task[:-1] <= task[1:])
        order = np.argsort(task, kind="stable") if private else None
        if private:
            y = y[order]
            if layout == "rows":  # rows task by task (a copy, ours to modify)
                X = X[order]
        else:
            y = y.copy()
        self._layout(counts, X.shape[1])
        # Every task on the same design (the MultiTaskLasso setting), found on the raw rows:
        # then only that (n0, d) design is centred, normalised and kept (centring and Eq. 1
        # give every task the same columns), products are one GEMM with it, and the stacked
        # copy is built only if something asks for ``X``.
        self._shared_design = None
        self._X = self._XT = None
        n0 = int(counts[0]) if self.m else 0
        if n0 > 0 and np.all(counts == n0) and self.m > 1:
            if order is not None and layout == "features":  # X still in the caller's order
                first = X[order[:n0]]
                same = all(np.array_equal(first, X[order[sl]]) for sl in self.slices[1:])
            else:  # X is stacked task by task
                first = X[:n0]
                if X.flags.c_contiguous:
                    from ._bcd_kernels import _blocks_equal
                    same = _blocks_equal(X, n0, self.m)
                else:
                    same = all(np.array_equal(first, X[sl]) for sl in self.slices[1:])
            if same:
                self._use_shared_design(first, y.reshape(self.m, n0).T.copy(),
                                        normalize=normalize, center=center,
                                        layout=shared_layout)
                y = self._Y.T.ravel()
        if self._shared_design is None and layout == "features":
            # normalised straight into the transposed layout block coordinate descent
            # reads: no (n, d) copy besides it (same values as the "rows" layout, transposed)
            self._XT = np.empty((self.d, task.size))
            for t, sl in enumerate(self.slices):
                rows = X[sl] if order is None else X[order[sl]]
                self.x_mean[:, t], self.scale[:, t] = _normalise_into(
                    self._XT[:, sl], rows, normalize=normalize, center=center)
                if center:
                    self.y_mean[t] = y[sl].mean()
                    y[sl] -= self.y_mean[t]
        elif self._shared_design is None:
            if not private:
                X = X.copy()
            for t, sl in enumerate(self.slices):
                if center:
                    self.x_mean[:, t] = X[sl].mean(axis=0)
                    self.y_mean[t] = y[sl].mean()
                    X[sl] -= self.x_mean[:, t]
                    y[sl] -= self.y_mean[t]
                if normalize:
                    norms = np.sqrt(np.sum(X[sl] ** 2, axis=0))
                    norms[norms == 0] = 1.0
                    self.scale[:, t] = norms
                    X[sl] /= norms
            self._X = X
        self.y = y
        self._finish(int(task.size))

    @classmethod
    def shared(cls, X, Y, *, normalize=True, center=True, layout="rows") -> StackedTasks:
        """All tasks on one design (the MultiTaskLasso setting), without stacking it.

        Parameters
        ----------
        X : ndarray (n0, d)   the design every task shares
        Y : ndarray (n0, m)   column t holds task t's responses

        The result is the object the stacked constructor builds for ``m`` copies of ``X``
        (same attributes, same solver path), but the ``(m n0, d)`` stack is never made and
        the equality check of the copies is skipped. ``layout`` as in the constructor.
        """
        if layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}; got {layout!r}.")
        X = np.asarray(X, dtype=np.float64)
        Y = np.asarray(Y, dtype=np.float64)
        n0, m = Y.shape
        self = cls.__new__(cls)
        self._layout(np.full(int(m), n0), X.shape[1])
        self._X = self._XT = None
        self._use_shared_design(X, Y.copy(), normalize=normalize, center=center,
                                layout=layout)
        self.y = self._Y.T.ravel()
        self._finish(n0 * self.m)
        return self

    def _layout(self, counts: np.ndarray, d: int) -> None:
        """Task sizes, offsets and slices of the stacked rows; zero means, unit scales."""
        self.m, self.d = len(counts), int(d)
        self.offsets = np.concatenate([[0], np.cumsum(counts)])
        self.slices = [slice(self.offsets[t], self.offsets[t + 1]) for t in range(self.m)]
        self.counts = counts.astype(np.float64)
        self.x_mean = np.zeros((self.d, self.m))
        self.y_mean = np.zeros(self.m)
        self.scale = np.ones((self.d, self.m))

    def _use_shared_design(self, X0, Y, *, normalize, center, layout):
        """Centre and Eq. (1)-normalise a copy of the one design ``X0`` (n0, d), stored in
        ``layout``, and the responses ``Y`` (n0, m, in place), and keep them: centring and
        Eq. (1) give every task the same columns, so one copy of the design serves all."""
        if center:
            self.y_mean = Y.mean(axis=0)
            Y -= self.y_mean
        if layout == "features":
            XT = np.empty((X0.shape[1], X0.shape[0]))
            mean, scale = _normalise_into(XT, X0, normalize=normalize, center=center)
            self._shared_design = XT.T                # (n0, d) view of the (d, n0) storage
        else:
            X0 = X0.copy()
            mean = X0.mean(axis=0) if center else np.zeros(X0.shape[1])
            if center:
                X0 -= mean
            scale = np.ones(X0.shape[1])
            if normalize:
                scale = np.sqrt(np.sum(X0 ** 2, axis=0))
                scale[scale == 0] = 1.0
                X0 /= scale
            self._shared_design = X0
        # every task's column is the same: (d, m) read-only views of the one (d,) column
        self.x_mean = np.broadcast_to(mean[:, None], (self.d, self.m))
        self.scale = np.broadcast_to(scale[:, None], (self.d, self.m))
        self._Y = Y                                  # (n0, m), column t = task t

    def _finish(self, n_samples: int) -> None:
        """Per-task weights and the row bookkeeping, from ``counts``."""
        counts = self.counts.astype(np.intp)
        self.weight = 1.0 / (self.m * np.maximum(self.counts, 1))  # 1 / (m n_i) per task
        # Small problems: one gathered einsum beats m Python-level products (measured ~2x
        # per iteration at m=10, d=50, n=20); large ones: per-task products read X once and
        # need no (n, d) temporaries, which keeps an iteration near the memory-traffic floor.
        self._vectorized = n_samples * self.d <= VECTORIZE_MAX_ENTRIES and \
            bool(np.all(counts > 0))
        self._row_task = np.repeat(np.arange(self.m), counts)
        self._row_weight = self.weight[self._row_task]
        self._grad_at_zero = None

    @property
    def X(self) -> np.ndarray:
        """The stacked, centred, normalised design (n_samples, d), task by task.

        With a shared design it is built (by tiling) only on first access; with the
        "features" layout it is a view of the (d, n) storage (F order)."""
        if self._XT is not None:
            return self._XT.T
        if self._X is None:
            self._X = np.tile(self._shared_design, (self.m, 1))
        return self._X

    @property
    def X_by_feature(self) -> np.ndarray:
        """The design transposed, in C order (feature j's values contiguous): (d, n0) for
        a shared design, else (d, n_samples).

        The storage itself with the "features" layout (or a shared design stored so),
        else a transposed copy."""
        design = self._shared_design if self._shared_design is not None else self.X
        return np.ascontiguousarray(design.T)

    @property
    def shared_design(self) -> np.ndarray | None:
        """The one (n0, d) design all tasks share (the MultiTaskLasso setting), else None.

        Products then go through one GEMM, which is what makes this layout fast.
        """
        return self._shared_design

    @property
    def n_design_entries(self) -> int:
        """Entries of the design a solver reads: ``n0 d`` for a shared design, else ``n d``."""
        design = self._shared_design if self._shared_design is not None else self.X
        return int(design.size)

    @property
    def row_task(self) -> np.ndarray:
        """Task id of each stacked row, shape (n_samples,) (non-decreasing)."""
        return self._row_task

    @property
    def row_weight(self) -> np.ndarray:
        """``1 / (m n_i)`` of each stacked row's task, shape (n_samples,)."""
        return self._row_weight

    def margins(self, W: np.ndarray) -> np.ndarray:
        """``X_i^T w_i`` stacked, shape (n_samples,): each row times its task's column."""
        if self._shared_design is not None:
            return (self._shared_design @ W).T.ravel()
        if self._vectorized:
            return np.einsum("ij,ji->i", self.X, W[:, self._row_task])
        f = np.empty_like(self.y)
        for t, sl in enumerate(self.slices):
            np.matmul(self.X[sl], W[:, t], out=f[sl])
        return f

    def task_gradients(self, g: np.ndarray) -> np.ndarray:
        """``X_i g_i`` per task (the chain rule through :meth:`margins`), shape (d, m).

        ``g`` holds one value per stacked row (a loss derivative times its weight).
        """
        if self._shared_design is not None:
            return self._shared_design.T @ g.reshape(self.m, -1).T
        if self._vectorized:
            return np.ascontiguousarray(
                np.add.reduceat(self.X * g[:, None], self.offsets[:-1], axis=0).T)
        G = np.empty((self.d, self.m))
        for t, sl in enumerate(self.slices):
            G[:, t] = self.X[sl].T @ g[sl]
        return G

    def task_sums(self, g: np.ndarray) -> np.ndarray:
        """Per-task sums of ``g`` (one value per stacked row), shape (m,)."""
        return np.add.reduceat(g, self.offsets[:-1]) if self._vectorized else \
            np.array([g[sl].sum() for sl in self.slices])

    def residuals(self, W: np.ndarray) -> np.ndarray:
        """``X_i^T w_i - y_i`` stacked, shape (n_samples,)."""
        if self._shared_design is not None:
            return (self._shared_design @ W - self._Y).T.ravel()
        if self._vectorized:
            return np.einsum("ij,ji->i", self.X, W[:, self._row_task]) - self.y
        r = np.empty_like(self.y)
        for t, sl in enumerate(self.slices):
            np.subtract(self.X[sl] @ W[:, t], self.y[sl], out=r[sl])
        return r

    def value(self, W: np.ndarray) -> float:
        if self._shared_design is not None:
            R = self._shared_design @ W - self._Y
            return float(np.sum(R * R, axis=0) @ self.weight)
        r = self.residuals(W)
        if self._vectorized:
            return float(self._row_weight @ (r * r))
        return float(sum(self.weight[t] * (r[sl] @ r[sl]) for t, sl in enumerate(self.slices)))

    def value_grad(self, W: np.ndarray) -> tuple[float, np.ndarray]:
        """``f(W)`` and its gradient (d, m), per task."""
        if self._shared_design is not None:
            R = self._shared_design @ W - self._Y               # (n0, m)
            G = (self._shared_design.T @ R) * (2.0 * self.weight)
            return float(np.sum(R * R, axis=0) @ self.weight), G
        r = self.residuals(W)
        if self._vectorized:
            scaled = (2.0 * self._row_weight) * r
            G = np.add.reduceat(self.X * scaled[:, None], self.offsets[:-1], axis=0).T
            return float(0.5 * (scaled @ r)), np.ascontiguousarray(G)
        G = np.empty((self.d, self.m))
        val = 0.0
        for t, sl in enumerate(self.slices):
            rt = r[sl]
            val += self.weight[t] * (rt @ rt)
            G[:, t] = (2.0 * self.weight[t]) * (self.X[sl].T @ rt)
        return float(val), G

    def grad_at_zero(self) -> np.ndarray:
        """Gradient of ``f`` at ``W = 0``, ``-2/(m n_i) X_i^T y_i``, shape (d, m) (cached):
        each penalty's ``lambda_max`` is its dual norm (:mod:`explorer.solvers.penalties`)."""
        if self._grad_at_zero is None:
            self._grad_at_zero = self.task_gradients(-2.0 * self._row_weight * self.y)
        return self._grad_at_zero

    def lipschitz_lower_bound(self) -> float:
        """Largest diagonal entry of the Hessian, ``2/(m n_i) ||X_i[:, j]||^2`` (a lower bound
        of the Lipschitz constant of the gradient in W)."""
        if self._shared_design is not None:
            return float(2.0 * np.max(self.weight) * np.max(np.sum(self._shared_design ** 2,
                                                                     axis=0)))
        return max(float(np.max(2.0 * self.weight[t] * np.sum(self.X[sl] ** 2, axis=0)))
                   for t, sl in enumerate(self.slices))

    def to_user_scale(self, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Map normalised coefficients back: (coef (d, m), intercept (m,))."""
        coef = W / self.scale
        intercept = self.y_mean - np.einsum("jt,jt->t", self.x_mean, coef)
        return coef, intercept
