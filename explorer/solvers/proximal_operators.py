"""Closed-form proximal operators of the sparsity penalties (rMTFL paper, Eq. 6-7).

Each ``prox_*(V, step, lam)`` returns ``argmin_X lam * g(X) + ||X - V||_F^2 / (2 step)``.

>>> import numpy as np
>>> prox_rows(np.array([[3.0, 4.0], [0.3, 0.4]]), 1.0, 1.0)
array([[2.4, 3.2],
       [0. , 0. ]])
"""

from __future__ import annotations

import numpy as np

__all__ = ["prox_rows", "prox_columns", "prox_l1", "prox_trace", "row_norms", "column_norms"]


def row_norms(V: np.ndarray) -> np.ndarray:
    """L2 norm of each row of ``V`` (d, m) -> (d,)."""
    return np.sqrt(np.einsum("ij,ij->i", V, V))


def column_norms(V: np.ndarray) -> np.ndarray:
    """L2 norm of each column of ``V`` (d, m) -> (m,)."""
    return np.sqrt(np.einsum("ij,ij->j", V, V))


def _shrink_factor(norms: np.ndarray, threshold: float) -> np.ndarray:
    safe = np.where(norms > 0, norms, 1.0)
    return np.maximum(1.0 - threshold / safe, 0.0)


def prox_rows(V: np.ndarray, step: float, lam: float) -> np.ndarray:
    """Row-group soft-thresholding: prox of ``lam * ||V||_{1,2}`` (sum of row norms)."""
    return V * _shrink_factor(row_norms(V), step * lam)[:, None]


def prox_columns(V: np.ndarray, step: float, lam: float) -> np.ndarray:
    """Column-group soft-thresholding: prox of ``lam * ||V^T||_{1,2}`` (sum of column norms)."""
    return V * _shrink_factor(column_norms(V), step * lam)[None, :]


def prox_l1(V: np.ndarray, step: float, lam: float) -> np.ndarray:
    """Entry-wise soft-thresholding: prox of ``lam * ||V||_1``."""
    return np.sign(V) * np.maximum(np.abs(V) - step * lam, 0.0)


def prox_trace(V: np.ndarray, step: float, lam: float) -> np.ndarray:
    """Singular-value thresholding: prox of ``lam * ||V||_*`` (trace norm)."""
    U, s, Vt = np.linalg.svd(V, full_matrices=False)
    s = np.maximum(s - step * lam, 0.0)
    return (U * s) @ Vt
