"""Estimators: one module per paper, plus baselines. All follow `explorer.models.base`."""

from .base import ConvergenceMonitor, FitDivergedError, MultiTaskEstimator, Snapshot

__all__ = [
    "ConvergenceMonitor",
    "FitDivergedError",
    "MultiTaskEstimator",
    "Snapshot",
]
