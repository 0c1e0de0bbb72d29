"""Dataset catalog: every generator / loader with its parameters, for the UI and the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .dataset import MultiTaskDataset
from .real import load_diabetes_tasks, load_digits_tasks, load_toy_pair
from .synthetic import (
    make_clustered_tasks,
    make_local_relatedness,
    make_outlier_tasks,
    make_task_family,
)

_KINDS = ("int", "float", "choice", "bool", "text")


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a catalog entry: kind, default, bounds / choices, label, doc."""

    name: str
    default: object
    kind: str
    bounds: tuple | None = None
    choices: tuple = ()
    label: str = ""
    doc: str = ""
    log: bool = False

    def validate(self, value):
        """Parse ``value`` (strings accepted, as from the CLI) and check it; return it."""
        name = self.name
        if self.kind == "bool":
            if isinstance(value, str):
                low = value.strip().lower()
                if low in ("1", "true", "yes", "on"):
                    return True
                if low in ("0", "false", "no", "off"):
                    return False
            if isinstance(value, bool):
                return value
            raise ValueError(f"{name} must be a bool; got {value!r}.")
        if self.kind in ("int", "float"):
            if isinstance(value, str):
                try:
                    value = int(value) if self.kind == "int" else float(value)
                except ValueError:
                    raise ValueError(f"{name} must be {self.kind}; got {value!r}.") from None
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{name} must be {self.kind}; got {value!r}.")
            if self.kind == "int":
                if float(value) != int(value):
                    raise ValueError(f"{name} must be an integer; got {value!r}.")
                value = int(value)
            else:
                value = float(value)
                if value != value or value in (float("inf"), float("-inf")):
                    raise ValueError(f"{name} must be finite; got {value!r}.")
            if self.bounds is not None:
                lo, hi = self.bounds
                if (lo is not None and value < lo) or (hi is not None and value > hi):
                    raise ValueError(f"{name} must be in [{lo}, {hi}]; got {value!r}.")
            return value
        if self.kind == "choice":
            if value not in self.choices:
                raise ValueError(f"{name} must be one of {self.choices}; got {value!r}.")
            return value
        if not isinstance(value, str):
            raise ValueError(f"{name} must be text; got {value!r}.")
        return value


@dataclass(frozen=True)
class DatasetEntry:
    """A catalog entry: ``build(**params, random_state=seed)`` gives a MultiTaskDataset."""

    name: str
    label: str
    kind: str
    params: tuple[ParamSpec, ...]
    seeded: bool
    build: Callable[..., MultiTaskDataset]
    description: str


def _family(relations, **kw):
    return make_task_family(tuple(r.strip() for r in relations.split(",")), **kw)


P = ParamSpec
CATALOG: dict[str, DatasetEntry] = {e.name: e for e in (
    DatasetEntry(
        "task_family", "Task family (related / negated / unrelated)", "either",
        (P("relations", "related,negated,unrelated", "text", label="Relations to task 0",
           doc="comma-separated: related, negated, unrelated, relabelled"),
         P("n_features", 2, "int", (1, 200), label="Features"),
         P("n_samples_per_task", 100, "int", (4, 5000), label="Examples per task"),
         P("perturbation", 0.3, "float", (0.0, 5.0), label="Perturbation of related tasks"),
         P("noise", 0.1, "float", (0.0, 5.0), label="Noise"),
         P("kind", "classification", "choice", choices=("classification", "regression"),
           label="Kind")),
        True, _family, "Task 0 is a base concept; the others relate to it as stated."),
    DatasetEntry(
        "outlier_tasks", "Outlier tasks (robust MTFL)", "regression",
        (P("n_tasks", 10, "int", (1, 100), label="Tasks"),
         P("n_outliers", 2, "int", (0, 100), label="Outlier tasks"),
         P("n_features", 20, "int", (1, 500), label="Features"),
         P("n_shared_features", 5, "int", (0, 500), label="Shared features"),
         P("n_samples_per_task", 30, "int", (2, 2000), label="Examples per task"),
         P("noise", 0.5, "float", (0.0, 50.0), label="Noise")),
        True, make_outlier_tasks, "Gong, Ye & Zhang (2012) Sec. 6.1: shared features + outliers."),
    DatasetEntry(
        "local_relatedness", "Local relatedness (MT-DT)", "classification",
        (P("n_samples_per_task", 200, "int", (8, 5000), label="Examples per task"),
         P("label_noise", 0.0, "float", (0.0, 1.0), label="Label noise")),
        True, make_local_relatedness,
        "Two 2-D tasks with 4 and 2 classes, labels correlated only on the left half."),
    DatasetEntry(
        "clustered_tasks", "Clustered tasks with task features (TL-TF)", "classification",
        (P("n_tasks", 12, "int", (1, 200), label="Tasks"),
         P("n_clusters", 3, "int", (1, 20), label="Clusters"),
         P("n_features", 5, "int", (1, 200), label="Features"),
         P("n_task_features", 3, "int", (1, 50), label="Task features"),
         P("n_samples_per_task", 60, "int", (4, 5000), label="Examples per task"),
         P("spread", 0.3, "float", (0.0, 5.0), label="Spread within cluster"),
         P("informative", True, "bool", label="Task features informative"),
         P("centred", True, "bool", label="Centred data")),
        True, make_clustered_tasks, "Yan & Zhang (2009): tasks from cluster centres."),
    DatasetEntry(
        "digits_tasks", "Digits (one-vs-rest or pairs)", "classification",
        (P("protocol", "one-vs-rest", "choice", choices=("one-vs-rest", "pairs"),
           label="Protocol"),
         P("n_tasks", 5, "int", (1, 10), label="Tasks"),
         P("max_per_task", 150, "int", (10, 2000), label="Examples per task")),
        True, load_digits_tasks, "scikit-learn digits as one-vs-rest or digit-pair tasks."),
    DatasetEntry(
        "toy_pair", "Toy pair from breast cancer (MT-KNN)", "classification",
        (P("relation", "related", "choice", choices=("related", "negated", "unrelated"),
           label="Relation"),
         P("base", "breast_cancer", "choice", choices=("breast_cancer",), label="Base data"),
         P("fraction", 0.2, "float", (0.02, 0.5), label="Fraction per task")),
        True, load_toy_pair, "Zhang (2013) toy protocol: two tasks from one data set."),
    DatasetEntry(
        "diabetes_tasks", "Diabetes by sex (regression)", "regression",
        (P("split", "sex", "choice", choices=("sex", "sex_age"), label="Split by"),),
        False, load_diabetes_tasks, "scikit-learn diabetes split into tasks by a covariate."),
)}
del P


def make_dataset(name: str, params: dict | None = None, random_state=None) -> MultiTaskDataset:
    """Build catalog entry ``name``: fill defaults, validate each value, build."""
    if name not in CATALOG:
        raise ValueError(f"name must be one of {sorted(CATALOG)}; got {name!r}.")
    entry = CATALOG[name]
    params = dict(params or {})
    specs = {p.name: p for p in entry.params}
    unknown = sorted(set(params) - set(specs))
    if unknown:
        raise ValueError(f"params: unknown parameter(s) {unknown} for {name!r}; "
                         f"expected some of {sorted(specs)}.")
    values = {k: s.validate(params.get(k, s.default)) for k, s in specs.items()}
    return entry.build(**values, random_state=random_state)


def _preset_dirs() -> list[Path]:
    here = Path(__file__).resolve()
    return [here.parents[2] / "data", here.parent / "presets"]


def list_presets() -> list[str]:
    """Names of the scenario presets (``data/*.json``, or package ``presets/``)."""
    names = set()
    for d in _preset_dirs():
        if d.is_dir():
            names.update(p.stem for p in d.glob("*.json"))
    return sorted(names)


def load_preset(name: str) -> dict:
    """Read preset ``name``: dict with name, description, dataset, params, data_seed, page."""
    for d in _preset_dirs():
        p = d / f"{name}.json"
        if p.is_file():
            return json.loads(p.read_text())
    raise ValueError(f"name must be one of the presets {list_presets()}; got {name!r}.")
