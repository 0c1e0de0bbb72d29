"""Dataset catalog: every generator / loader with its parameters, for the UI and the CLI.

Each entry declares its parameters once, as a :class:`param.Parameterized` class
(``CATALOG[name].params``); the sidebar's widgets, the URL keys (``d.<name>``), the CLI's
``generate --param`` options and every validation message derive from that declaration.
A size bound per entry is checked against the per-data-set budget before anything is built.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import param

from ..parameters import describe, parse_values, public_parameters
from .dataset import MultiTaskDataset
from .real import (
    SCHOOL_FEATURES,
    SCHOOL_ROWS,
    SCHOOL_TASKS,
    load_diabetes_tasks,
    load_digits_tasks,
    load_school,
    load_toy_pair,
)
from .synthetic import (
    make_clustered_tasks,
    make_local_relatedness,
    make_outlier_tasks,
    make_task_family,
)

#: Resource budget of one data set (checked before anything is built): together with a
#: live fit's record (bounded at 64 MB) and the views, one session stays under ~300 MB.
MAX_VALUES = 2_000_000   # rows x features: 16 MB of float64 for X
MAX_ROWS = 200_000
MAX_TASKS = 200


def check_budget(n_rows: int, n_features: int, n_tasks: int, *, what: str = "the data set"
                 ) -> None:
    """Refuse a data set larger than the per-data-set budget, with a message naming it.

    >>> check_budget(1000, 20, 5)
    >>> check_budget(432_000, 2, 4, what="the file")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the file has 432,000 rows; the limit is 200,000 rows. ...
    >>> check_budget(100_000, 200, 20)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the data set would hold 100,000 rows x 200 features = 20,000,000 values; ...
    """
    n_rows, n_features, n_tasks = int(n_rows), int(n_features), int(n_tasks)
    values = n_rows * n_features
    has = "has" if what == "the file" else "would have"
    hit = []   # every limit that was hit, named with its number
    if n_rows > MAX_ROWS:
        hit.append(f"{what} {has} {n_rows:,} rows; the limit is {MAX_ROWS:,} rows")
    if n_tasks > MAX_TASKS:
        hit.append(f"{what} {has} {n_tasks:,} tasks; the limit is {MAX_TASKS:,} tasks")
    if values > MAX_VALUES:
        hold = "holds" if what == "the file" else "would hold"
        hit.append(f"{what} {hold} {n_rows:,} rows x {n_features:,} features = {values:,} "
                   f"values; the limit is {MAX_VALUES:,} values")
    if hit:
        raise ValueError(". ".join(hit) + ". Choose fewer tasks, examples or features.")


RELATIONS = ("related", "negated", "unrelated", "relabelled")


class TaskFamilyParams(param.Parameterized):
    """Parameters of ``make_task_family``."""

    # The app opens on these defaults: few examples per task in 12 dimensions, where one
    # task alone learns poorly and the five related tasks' examples help it (shared models
    # beat separate ones); the unrelated task shows what sharing must leave alone.
    relations = param.String(
        "related,related,related,related,related,unrelated", label="Relations to task 0",
        regex=r"^\s*(related|negated|unrelated|relabelled)\s*"
              r"(,\s*(related|negated|unrelated|relabelled)\s*){0,49}$",
        doc="comma-separated list of related, negated, unrelated, relabelled")
    n_features = param.Integer(12, bounds=(1, 200), label="Features")
    n_samples_per_task = param.Integer(24, bounds=(4, 5000), label="Examples per task")
    perturbation = param.Number(0.3, bounds=(0.0, 5.0), label="Perturbation of related tasks")
    noise = param.Number(0.1, bounds=(0.0, 5.0), label="Noise")
    kind = param.Selector(default="classification", objects=["classification", "regression"],
                          label="Kind")


class OutlierTasksParams(param.Parameterized):
    """Parameters of ``make_outlier_tasks``."""

    n_tasks = param.Integer(10, bounds=(1, 100), label="Tasks")
    n_outliers = param.Integer(2, bounds=(0, 100), label="Outlier tasks")
    n_features = param.Integer(20, bounds=(1, 500), label="Features")
    n_shared_features = param.Integer(5, bounds=(0, 500), label="Shared features")
    n_samples_per_task = param.Integer(30, bounds=(2, 2000), label="Examples per task")
    noise = param.Number(0.5, bounds=(0.0, 50.0), label="Noise")


class LocalRelatednessParams(param.Parameterized):
    """Parameters of ``make_local_relatedness``."""

    n_samples_per_task = param.Integer(200, bounds=(8, 5000), label="Examples per task")
    label_noise = param.Number(0.0, bounds=(0.0, 1.0), label="Label noise")


class ClusteredTasksParams(param.Parameterized):
    """Parameters of ``make_clustered_tasks``."""

    n_tasks = param.Integer(12, bounds=(1, 200), label="Tasks")
    n_clusters = param.Integer(3, bounds=(1, 20), label="Clusters")
    n_features = param.Integer(5, bounds=(1, 200), label="Features")
    n_task_features = param.Integer(3, bounds=(1, 50), label="Task features")
    n_samples_per_task = param.Integer(60, bounds=(4, 5000), label="Examples per task")
    spread = param.Number(0.3, bounds=(0.0, 5.0), label="Spread within cluster")
    informative = param.Boolean(True, label="Task features informative")
    centred = param.Boolean(True, label="Centred data")


class DigitsParams(param.Parameterized):
    """Parameters of ``load_digits_tasks``."""

    protocol = param.Selector(default="one-vs-rest", objects=["one-vs-rest", "pairs"],
                              label="Protocol")
    n_tasks = param.Integer(5, bounds=(1, 10), label="Tasks")
    max_per_task = param.Integer(150, bounds=(10, 2000), label="Examples per task")


class ToyPairParams(param.Parameterized):
    """Parameters of ``load_toy_pair``."""

    relation = param.Selector(default="related", objects=["related", "negated", "unrelated"],
                              label="Relation")
    base = param.Selector(default="breast_cancer", objects=["breast_cancer"], label="Base data")
    fraction = param.Number(0.2, bounds=(0.02, 0.5), label="Fraction per task")


class DiabetesParams(param.Parameterized):
    """Parameters of ``load_diabetes_tasks``."""

    split = param.Selector(default="sex", objects=["sex", "sex_age"], label="Split by")


class SchoolParams(param.Parameterized):
    """``load_school`` has no parameters: the data are the benchmark as published."""


@dataclass(frozen=True)
class DatasetEntry:
    """A catalog entry.

    Attributes
    ----------
    name, label, kind, description : str
    params : type of param.Parameterized
        The declaration of the entry's parameters (widgets, URL keys, CLI options and
        validation messages all derive from it).
    seeded : bool
        Whether the data depend on the data seed.
    build : callable
        ``build(**values, random_state=seed) -> MultiTaskDataset``.
    size : callable
        ``size(values) -> (n_rows, n_features, n_tasks)``, an upper bound checked against the
        budget before ``build`` runs.
    """

    name: str
    label: str
    kind: str
    params: type[param.Parameterized]
    seeded: bool
    build: Callable[..., MultiTaskDataset]
    description: str
    size: Callable[[dict], tuple[int, int, int]]

    def defaults(self) -> dict[str, Any]:
        """Every parameter's default value."""
        return {name: self.params.param[name].default for name in public_parameters(self.params)}

    def values(self, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``params`` (text or typed, untrusted) parsed, validated and filled with defaults.

        Raises ``ValueError`` naming an unknown parameter or a bad value.
        """
        params = dict(params or {})
        known = public_parameters(self.params)
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise ValueError(f"{unknown} are not parameters of {self.name!r}; expected some "
                             f"of {known}.")
        return {**self.defaults(), **parse_values(self.params, params)}


def _family(relations, **kw):
    return make_task_family(tuple(r.strip() for r in relations.split(",")), **kw)


CATALOG: dict[str, DatasetEntry] = {e.name: e for e in (
    DatasetEntry(
        "task_family", "Task family (related / negated / unrelated)", "either",
        TaskFamilyParams, True, _family,
        "Task 0 is a base concept; the others relate to it as stated.",
        lambda v: ((len(v["relations"].split(",")) + 1) * v["n_samples_per_task"],
                   v["n_features"], len(v["relations"].split(",")) + 1)),
    DatasetEntry(
        "outlier_tasks", "Outlier tasks (robust MTFL)", "regression",
        OutlierTasksParams, True, make_outlier_tasks,
        "Gong, Ye & Zhang (2012) Sec. 6.1: shared features + outliers.",
        lambda v: (v["n_tasks"] * v["n_samples_per_task"], v["n_features"], v["n_tasks"])),
    DatasetEntry(
        "local_relatedness", "Local relatedness (MT-DT)", "classification",
        LocalRelatednessParams, True, make_local_relatedness,
        "Two 2-D tasks with 4 and 2 classes, labels correlated only on the left half.",
        lambda v: (2 * v["n_samples_per_task"], 2, 2)),
    DatasetEntry(
        "clustered_tasks", "Clustered tasks with task features (TL-TF)", "classification",
        ClusteredTasksParams, True, make_clustered_tasks,
        "Yan & Zhang (2009): tasks from cluster centres.",
        lambda v: (v["n_tasks"] * v["n_samples_per_task"], v["n_features"], v["n_tasks"])),
    DatasetEntry(
        "digits_tasks", "Digits (one-vs-rest or pairs)", "classification",
        DigitsParams, True, load_digits_tasks,
        "scikit-learn digits as one-vs-rest or digit-pair tasks.",
        lambda v: (v["n_tasks"] * v["max_per_task"], 64, v["n_tasks"])),
    DatasetEntry(
        "toy_pair", "Toy pair from breast cancer (MT-KNN)", "classification",
        ToyPairParams, True, load_toy_pair,
        "Zhang (2013) toy protocol: two tasks from one data set.",
        lambda v: (569, 30, 2)),
    DatasetEntry(
        "diabetes_tasks", "Diabetes by sex (regression)", "regression",
        DiabetesParams, False, load_diabetes_tasks,
        "scikit-learn diabetes split into tasks by a covariate.",
        lambda v: (442, 10, 4)),
    DatasetEntry(
        "school", "School: 139 London schools", "regression",
        SchoolParams, False, lambda random_state=None: load_school(),
        "Real exam scores of 15,362 students, one task per school (the rMTFL paper's "
        "Table 2).",
        lambda v: (SCHOOL_ROWS, SCHOOL_FEATURES, SCHOOL_TASKS)),
)}


#: The ``dataset_name`` of a data set read from a file: never an entry (nothing can build it
#: again, so a link that names it cannot bring the file).
UPLOADED = "uploaded"


def make_dataset(name: str, params: Mapping[str, Any] | None = None, random_state=None
                 ) -> MultiTaskDataset:
    """Build catalog entry ``name``: parse and validate each value (text is accepted, as
    from a link or the CLI), fill defaults, check the budget, build.

    Raises ``ValueError`` naming the entry, the parameter or the budget.
    """
    if name not in CATALOG:
        raise ValueError(f"name must be one of {sorted(CATALOG)}; got {describe(name)}.")
    entry = CATALOG[name]
    values = entry.values(params)
    check_budget(*entry.size(values), what=f"{name!r} with these parameters")
    return entry.build(**values, random_state=random_state)


#: Keys of a scenario file (``data/scenarios/<name>.json``): required, then optional.
SCENARIO_KEYS = ("name", "title", "story", "dataset", "params", "data_seed", "page")
SCENARIO_OPTIONAL_KEYS = ("description", "init_seed", "train_fraction", "page_params")


def _checkout_scenarios() -> Path:
    """``data/scenarios`` of the source checkout: the one place scenarios are edited."""
    return Path(__file__).resolve().parents[2] / "data" / "scenarios"


def _package_scenarios() -> Path:
    """The package's copy (what a wheel ships), written by :func:`sync_package_scenarios`."""
    return Path(__file__).resolve().parent / "scenarios"


def _scenario_dir() -> Path:
    """Where scenarios are read from: the checkout's ``data/scenarios`` when this module runs
    from a source checkout (editable installs included), else the package's copy; never both,
    so a scenario removed from ``data/scenarios`` cannot linger."""
    checkout = _checkout_scenarios()
    if (checkout.parents[1] / "pyproject.toml").is_file() and checkout.is_dir():
        return checkout
    return _package_scenarios()


def list_presets() -> list[str]:
    """Names of the scenarios (``data/scenarios/*.json``), sorted."""
    folder = _scenario_dir()
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


def load_preset(name: str) -> dict:
    """Read and check scenario ``name`` (one of :func:`list_presets`; never a path).

    Returns a dict with ``name``, ``title``, ``story`` (one line: what to look at),
    ``dataset``, ``params`` (validated by the catalog entry), ``data_seed``, ``page`` and
    optionally ``description``, ``init_seed``, ``train_fraction`` and ``page_params``
    (``{name: value}`` of the page's hyper-parameters; the app checks them against the
    page's declaration, as it checks a link's ``<page>.<name>`` values).

    Raises ``ValueError`` naming the scenario and what is wrong.
    """
    names = list_presets()
    if name not in names:
        raise ValueError(f"name must be one of the scenarios {names}; got {describe(name)}.")
    path = _scenario_dir() / f"{name}.json"
    # every session of a server reads every scenario: checked once per version of the file
    stat = path.stat()
    version = (str(path), stat.st_mtime_ns, stat.st_size)
    if _checked_scenarios.get(name, (None,))[0] != version:
        try:
            scenario = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"scenario {name!r} is not valid JSON: {exc}.") from None
        _check_scenario(name, scenario)
        _checked_scenarios[name] = (version, scenario)
    return copy.deepcopy(_checked_scenarios[name][1])


#: name -> ((path, mtime_ns, size), the checked scenario) (see :func:`load_preset`)
_checked_scenarios: dict[str, tuple[tuple, dict]] = {}


def _check_scenario(name: str, scenario: Any) -> None:
    if not isinstance(scenario, dict):
        raise ValueError(f"scenario {name!r} must be a JSON object; got "
                         f"{type(scenario).__name__}.")
    missing = [key for key in SCENARIO_KEYS if key not in scenario]
    unknown = sorted(set(scenario) - set(SCENARIO_KEYS) - set(SCENARIO_OPTIONAL_KEYS))
    if missing or unknown:
        raise ValueError(f"scenario {name!r}: missing keys {missing}, unknown keys {unknown}; "
                         f"expected {list(SCENARIO_KEYS)} and optionally "
                         f"{list(SCENARIO_OPTIONAL_KEYS)}.")
    if scenario["name"] != name:
        raise ValueError(f"scenario {name!r}: 'name' must be the file's name {name!r}; got "
                         f"{describe(scenario['name'])}.")
    for key in ("title", "story", "page"):
        if not isinstance(scenario[key], str) or not scenario[key].strip():
            raise ValueError(f"scenario {name!r}: {key!r} must be non-empty text; got "
                             f"{describe(scenario[key])}.")
    if "\n" in scenario["story"]:
        raise ValueError(f"scenario {name!r}: 'story' must be one line.")
    if scenario["dataset"] not in CATALOG:
        raise ValueError(f"scenario {name!r}: dataset must be one of {sorted(CATALOG)}; got "
                         f"{describe(scenario['dataset'])}.")
    for key in ("params", "page_params"):
        if not isinstance(scenario.get(key, {}), dict):
            raise ValueError(f"scenario {name!r}: {key!r} must be an object; got "
                             f"{describe(scenario[key])}.")
    try:
        CATALOG[scenario["dataset"]].values(scenario["params"])
    except ValueError as exc:
        raise ValueError(f"scenario {name!r}: params: {exc}") from None


#: What the package copies from the checkout's ``data/``: (folder, file pattern).
PACKAGE_COPIES = (("scenarios", "*.json"), ("school", "*.csv.gz"))


def sync_package_scenarios(*, check: bool = False) -> list[str]:
    """Make the package's copies of ``data/scenarios`` and of the shipped real data
    (``data/school``; :data:`PACKAGE_COPIES`) equal to their source in ``data/``.

    The copies exist only because a wheel cannot ship files outside the package; they are
    never edited by hand. With ``check=True`` nothing is written. Returns the names of the
    files that differed (added, changed or removed), as ``folder/file``. Regenerate with
    ``python -c "from explorer.data.catalog import sync_package_scenarios as s; s()"``.
    """
    source_root = _checkout_scenarios().parent
    target_root = _package_scenarios().parent
    if not source_root.is_dir():
        raise ValueError(f"the data source {source_root} does not exist (not a source "
                         "checkout?).")
    differing = []
    for folder, pattern in PACKAGE_COPIES:
        source, target = source_root / folder, target_root / folder
        wanted = {p.name: p.read_bytes() for p in source.glob(pattern)}
        present = {p.name: p.read_bytes() for p in target.glob(pattern)} \
            if target.is_dir() else {}
        changed = sorted(n for n in set(wanted) | set(present)
                         if wanted.get(n) != present.get(n))
        if not check and changed:
            target.mkdir(exist_ok=True)
            for file_name in changed:
                if file_name in wanted:
                    (target / file_name).write_bytes(wanted[file_name])
                else:
                    (target / file_name).unlink()
        differing += [f"{folder}/{name}" for name in changed]
    return differing
