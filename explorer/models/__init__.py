"""Estimators: one module per paper, plus baselines. All follow `explorer.models.base`.

Penalty names
-------------
Every penalty parameter is named ``lambda_<term>`` after the term it weights, so one name
means one thing in every model (the papers' positional ``lambda1`` / ``lambda2`` mean
different things in different papers). ``"auto"`` resolves against ``lambda_max_``, a dict
keyed by the same names (the smallest value of that penalty that zeroes its block); the
value used is stored as ``<name>_``.

================== ================================ ==========================================
parameter          term it weights                  models (paper's name)
================== ================================ ==========================================
lambda_rows        ``||B||_{1,2}``, sum of row      RobustMTFL P (lambda1), L21MTFL W,
                   norms (shared features)          TwoStageRMTFL stage 1 P
lambda_columns     ``||B^T||_{1,2}``, sum of column RobustMTFL Q (lambda2), RMTL S,
                   norms (outlier tasks)            ColumnGroupMTL W
lambda_trace       ``||B||_*``, trace norm          RMTL L, TraceNormMTL W
lambda_l1          ``||W||_1``                      MultiTaskLassoL1
lambda_ridge       ``||W||_F^2``                    MultiTaskRidge
refit_lambda_rows  ``||W||_{1,2}`` of stage 2       TwoStageRMTFL
lambda_deviation   ``(1/m) sum_t ||v_t||^2``, the   RegularizedMTL (Evgeniou & Pontil's
                   tasks' deviations from ``w_0``   lambda1): task coupling
lambda_common      ``||w_0||^2``, the common part   RegularizedMTL (lambda2)
lambda_relation    ``tr(W Omega^{-1} W^T)``, task   MTRL (lambda2; lambda1 is lambda_ridge)
                   covariance Omega
lam                ``tr(W_t Omega^{-1} W_t^T)`` on  MTBoost, AnyBoost (the paper's lambda is
                   per-task mean losses             n_i * lam; the name is issue 12's)
lambda_asymmetry   ``1/4 ||W - W^T||_F^2`` of the   MTKNN, MTKR (lambda1)
                   task-pair weights W
lambda_ridge       ``1/2 ||W||_F^2`` of the         MTKNN, MTKR (lambda2)
                   task-pair weights W
================== ================================ ==========================================

Estimates and truth
-------------------
An estimate and the truth it is compared with (``MultiTaskDataset.truth``) share a name and
a shape; feature x task matrices are (d, m) everywhere (``coef_``, the truth, the ``P`` /
``Q`` / ``W`` of ``task_relationships()`` and of the snapshots' ``matrices``). Views that
show tasks as rows transpose.

===================================== ============================== ========================
estimate                              truth key                      shape, type
===================================== ============================== ========================
``coef_``                             ``"coef"``                     (d, m) float
``outlier_tasks_``                    ``"outlier_tasks"``            (m,) bool
``shared_features_``                  ``"shared_features"``          (d,) bool
``task_relationships()["similarity"]`` ``"task_similarity"``         (m, m) cosine in [-1, 1]
``TLTF.phi_.argmax(axis=1)``           ``"clusters"``                 (m,) int (up to relabelling)
===================================== ============================== ========================

Tasks on one design
-------------------
``fit_shared(X, Y)`` fits regression tasks that share one design ``X`` (n, d), with ``Y``
(n, m) holding task ``t``'s responses in column ``t`` (scikit-learn's ``MultiTaskLasso``
layout): the same model as ``fit`` on the m stacked copies. The group-penalty models
(:mod:`.rmtfl`) solve on the one design without building the stack (``StackedTasks.shared``);
the others stack it and call ``fit``.

Other shared conventions: ``warm_start=True`` is the one way to start from the previous
solution; ``random_state`` is a parameter of every estimator; ``uses_task_features`` says
whether ``fit`` takes ``task_features`` (m, q); ``supports_new_tasks`` whether
``predict_new_task`` works; ``accepts_sample_weight`` whether ``fit`` takes
``sample_weight``.
"""

from .base import (
    ConvergenceMonitor,
    FitDivergedError,
    LazyMapping,
    MultiTaskEstimator,
    Snapshot,
)
from .baselines import PerTaskEstimator
from .mtadaboost import MTAdaBoost, SingleTaskAdaBoost
from .mtboost import AnyBoost, MTBoost
from .mtdt import MTDecisionTree, SingleTaskTree
from .mtknn import MTKNN, MTKR, KernelRegressionPerTask, KNNPerTask
from .mtrl import MTRL
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
from .tltf import TLTF

__all__ = [
    "AnyBoost",
    "MTBoost",
    "MTRL",
    "ConvergenceMonitor",
    "FitDivergedError",
    "LazyMapping",
    "MTAdaBoost",
    "MTDecisionTree",
    "MultiTaskEstimator",
    "PerTaskEstimator",
    "RegularizedMTL",
    "SingleTaskAdaBoost",
    "SingleTaskTree",
    "Snapshot",
    "RMTL",
    "ColumnGroupMTL",
    "L21MTFL",
    "MultiTaskLassoL1",
    "MultiTaskRidge",
    "RobustMTFL",
    "TraceNormMTL",
    "TwoStageRMTFL",
    "MTKNN",
    "MTKR",
    "KNNPerTask",
    "KernelRegressionPerTask",
    "TLTF",
]
