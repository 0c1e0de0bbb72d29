"""Compare methods side by side: repeated random splits, the papers' tables, metrics.

``compare({"name": estimator, ...}, dataset, n_trials=10)`` returns a
:class:`ComparisonResult` (``.frame``, ``.table()``, ``.to_markdown()``, ``.relationships()``,
``.agreement()``); see :func:`explorer.compare.harness.compare`. Its figures and standalone
report are drawn a layer above, by :mod:`explorer.viz.comparison`.
``sweep(estimator, dataset, "lambda_columns", values)`` fits one estimator along one
hyper-parameter on the same splits and returns a :class:`SweepResult` (test error, baseline,
agreement with the truth, structure found, the CV choice); see :mod:`explorer.compare.sweep`.
"""

from .harness import BACKENDS, ComparisonCancelled, compare, job_seeds
from .metrics import (
    amse,
    average_precision,
    detection_scores,
    mean_average_precision,
    nmse,
    precision_at_k,
)
from .result import AVERAGE, ComparisonResult, paired_p_value
from .scoring import METRIC_NAMES
from .sweep import SweepCancelled, SweepResult, sweep

__all__ = [
    "AVERAGE",
    "BACKENDS",
    "METRIC_NAMES",
    "ComparisonCancelled",
    "ComparisonResult",
    "SweepCancelled",
    "SweepResult",
    "amse",
    "average_precision",
    "compare",
    "detection_scores",
    "job_seeds",
    "mean_average_precision",
    "nmse",
    "paired_p_value",
    "precision_at_k",
    "sweep",
]
