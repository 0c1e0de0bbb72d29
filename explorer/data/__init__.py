"""Multi-task datasets, validation, CSV I/O, synthetic generators with truth, real data."""

from .dataset import MAX_CSV_BYTES, MultiTaskDataset, read_csv
from .validation import check_multitask, check_scalar

__all__ = [
    "MAX_CSV_BYTES",
    "MultiTaskDataset",
    "check_multitask",
    "check_scalar",
    "read_csv",
]
