"""Estimators: one module per paper, plus baselines. All follow `explorer.models.base`."""

from .base import ConvergenceMonitor, FitDivergedError, MultiTaskEstimator, Snapshot
from .baselines import PerTaskEstimator
from .regularized import RegularizedMTL

__all__ = [
    "ConvergenceMonitor",
    "FitDivergedError",
    "MultiTaskEstimator",
    "PerTaskEstimator",
    "RegularizedMTL",
    "Snapshot",
]
