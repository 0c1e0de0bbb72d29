"""Multi-task datasets, validation, CSV I/O, synthetic generators with truth, real data."""

from .catalog import CATALOG, list_presets, load_preset, make_dataset
from .dataset import MAX_CSV_BYTES, TASK_FEATURE_PREFIX, MultiTaskDataset, read_csv
from .real import load_diabetes_tasks, load_digits_tasks, load_school, load_toy_pair
from .synthetic import (
                        make_clustered_tasks,
                        make_local_relatedness,
                        make_outlier_tasks,
                        make_task_family,
                        task_cosine,
)
from .validation import (
    TRUTH_SPEC,
    check_multitask,
    check_scalar,
    check_task_features,
    check_truth,
)

__all__ = [
    "CATALOG",
    "MAX_CSV_BYTES",
    "MultiTaskDataset",
    "TASK_FEATURE_PREFIX",
    "TRUTH_SPEC",
    "check_multitask",
    "check_scalar",
    "check_task_features",
    "check_truth",
    "list_presets",
    "load_diabetes_tasks",
    "load_digits_tasks",
    "load_preset",
    "load_school",
    "load_toy_pair",
    "make_clustered_tasks",
    "make_dataset",
    "make_local_relatedness",
    "make_outlier_tasks",
    "make_task_family",
    "read_csv",
    "task_cosine",
]
