"""Compare methods side by side: repeated random splits, the papers' tables, metrics.

``compare({"name": estimator, ...}, dataset, n_trials=10)`` returns a
:class:`ComparisonResult` (``.frame``, ``.table()``, ``.plot()``, ``.relationships()``,
``.to_html(path)``); see :func:`explorer.compare.harness.compare`.
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

__all__ = [
    "AVERAGE",
    "BACKENDS",
    "METRIC_NAMES",
    "ComparisonCancelled",
    "ComparisonResult",
    "amse",
    "average_precision",
    "compare",
    "detection_scores",
    "job_seeds",
    "mean_average_precision",
    "nmse",
    "paired_p_value",
    "precision_at_k",
]
