"""Estimators: one module per paper, plus baselines. All follow `explorer.models.base`."""

from .base import ConvergenceMonitor, FitDivergedError, MultiTaskEstimator, Snapshot
from .baselines import PerTaskEstimator
from .mtadaboost import MTAdaBoost, SingleTaskAdaBoost
from .mtdt import MTDecisionTree, SingleTaskTree
from .regularized import RegularizedMTL
from .rmtfl import (
    L21MTFL,
    RMTL,
    ColumnGroupMTL,
    MultiTaskLassoL1,
    MultiTaskRidge,
    RobustMTFL,
    TraceNormMTL,
    TwoStageRMTFL,
)

__all__ = [
    "ConvergenceMonitor",
    "FitDivergedError",
    "MTAdaBoost",
    "MTDecisionTree",
    "MultiTaskEstimator",
    "PerTaskEstimator",
    "RegularizedMTL",
    "SingleTaskAdaBoost",
    "SingleTaskTree",
    "Snapshot",
]

__all__ += ["RMTL", "ColumnGroupMTL", "L21MTFL", "MultiTaskLassoL1", "MultiTaskRidge",
            "RobustMTFL", "TraceNormMTL", "TwoStageRMTFL"]
