"""`ExplorerState`: the session's scenario (dataset spec, seeds, page) and the data built from it.

The state is a plain :class:`param.Parameterized`, testable without a browser; the views in
:mod:`explorer.app` and every page read it and never build data themselves.

* The *spec* is ``dataset_name`` + ``data_params`` + ``data_seed`` + ``train_fraction``.
  Whenever it changes, the derived parameters ``dataset``, ``train`` and ``test`` are
  rebuilt. A value the generator refuses never raises into the UI: the previous data
  stays, ``error`` holds the reason and a notification says so.
* ``init_seed`` is the seed pages give their estimators (``random_state``); it is kept apart
  from the data seed so the same data can be refitted from other starting points.
* The scenario round-trips through a URL query (:meth:`ExplorerState.to_query` /
  :meth:`ExplorerState.from_query`). Values from a URL are untrusted: each one is checked
  against its declared type and bounds; a bad one is reported and skipped, never evaluated.

>>> state = ExplorerState(pages=("tasks",))
>>> state.dataset.n_tasks >= 2 and state.error == ""
True
"""

from __future__ import annotations

import logging
import math
import re
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import param

from explorer.data import MAX_CSV_BYTES, MultiTaskDataset, read_csv
from explorer.data.catalog import CATALOG, DatasetEntry, ParamSpec, make_dataset

__all__ = ["ExplorerState", "UPLOADED", "coerce_param_value", "encode_param_value"]

log = logging.getLogger(__name__)

#: ``dataset_name`` of a dataset read from an uploaded CSV file.
UPLOADED = "uploaded"

#: Query keys of the scenario (the data parameters use ``DATA_PREFIX + name``).
QUERY_KEYS = {
    "dataset_name": "data",
    "data_seed": "data_seed",
    "init_seed": "init_seed",
    "train_fraction": "train",
    "page": "page",
}
DATA_PREFIX = "d."
LEVELS = ("info", "success", "warning", "error")

_MAX_QUERY_VALUE = 200
_INT_RE = re.compile(r"^[+-]?\d{1,15}$")
_SEED_MAX = 2**32 - 1


# ---------------------------------------------------------------------- value coercion
def _describe(raw: Any) -> str:
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_bounds(spec: ParamSpec, value: float) -> None:
    if spec.bounds is None:
        return
    low, high = spec.bounds
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{spec.name} must be in [{low}, {high}]; got {value!r}.")


def coerce_param_value(spec: ParamSpec, raw: Any) -> Any:
    """Turn an untrusted value (a URL string or a widget value) into a value of ``spec``.

    Raises ``ValueError`` naming the parameter when the value has the wrong type, is out of
    bounds or is not one of the choices. Nothing is evaluated: strings are parsed by
    ``int``/``float`` after a format check.

    >>> from explorer.data.catalog import ParamSpec
    >>> coerce_param_value(ParamSpec("n", 3, "int", bounds=(1, 9)), "4")
    4
    >>> coerce_param_value(ParamSpec("n", 3, "int", bounds=(1, 9)), "40")
    Traceback (most recent call last):
    ...
    ValueError: n must be in [1, 9]; got 40.
    """
    if isinstance(raw, str) and len(raw) > _MAX_QUERY_VALUE:
        raise ValueError(f"{spec.name}: value too long ({len(raw)} characters).")
    kind = spec.kind
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "1", "yes", "on"):
            return True
        if text in ("false", "0", "no", "off"):
            return False
        raise ValueError(f"{spec.name} must be true or false; got {_describe(raw)}.")
    if kind == "int":
        if isinstance(raw, bool):
            raise ValueError(f"{spec.name} must be an integer; got {_describe(raw)}.")
        if isinstance(raw, int):
            value = raw
        elif isinstance(raw, float) and math.isfinite(raw) and raw == int(raw):
            value = int(raw)
        elif isinstance(raw, str) and _INT_RE.match(raw.strip()):
            value = int(raw.strip())
        else:
            raise ValueError(f"{spec.name} must be an integer; got {_describe(raw)}.")
        _check_bounds(spec, value)
        return value
    if kind == "float":
        if isinstance(raw, bool):
            raise ValueError(f"{spec.name} must be a number; got {_describe(raw)}.")
        try:
            value = float(raw.strip() if isinstance(raw, str) else raw)
        except (TypeError, ValueError):
            raise ValueError(f"{spec.name} must be a number; got {_describe(raw)}.") from None
        if not math.isfinite(value):
            raise ValueError(f"{spec.name} must be a finite number; got {_describe(raw)}.")
        _check_bounds(spec, value)
        return value
    if kind == "choice":
        for choice in spec.choices:
            if raw == choice or str(raw) == str(choice):
                return choice
        raise ValueError(
            f"{spec.name} must be one of {list(spec.choices)}; got {_describe(raw)}."
        )
    if kind == "text":
        if not isinstance(raw, str) or not raw.isprintable():
            raise ValueError(f"{spec.name} must be printable text; got {_describe(raw)}.")
        return raw
    raise ValueError(f"{spec.name} has an unknown kind {kind!r}.")


def encode_param_value(spec: ParamSpec, value: Any) -> str:
    """The URL form of ``value`` (the inverse of :func:`coerce_param_value`).

    >>> from explorer.data.catalog import ParamSpec
    >>> encode_param_value(ParamSpec("noise", 0.1, "float"), 0.25)
    '0.25'
    """
    if spec.kind == "bool":
        return "true" if value else "false"
    if spec.kind == "int":
        return str(int(value))
    if spec.kind == "float":
        return repr(float(value))
    return str(value)


def _coerce_int(name: str, raw: Any, low: int, high: int) -> int:
    spec = ParamSpec(name=name, default=low, kind="int", bounds=(low, high))
    return coerce_param_value(spec, raw)


def _coerce_float(name: str, raw: Any, low: float, high: float) -> float:
    spec = ParamSpec(name=name, default=low, kind="float", bounds=(low, high))
    return coerce_param_value(spec, raw)


def _safe_filename(filename: Any) -> str:
    """A display-only name: last path component, printable, at most 60 characters."""
    text = str(filename or "upload.csv").replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(ch for ch in text if ch.isprintable())
    return (text or "upload.csv")[:60]


# ---------------------------------------------------------------------- the state
class ExplorerState(param.Parameterized):
    """Scenario of one session: which data, which seeds, which page; and the built data.

    Parameters
    ----------
    pages : sequence of str, optional
        Slugs allowed for ``page`` (default: the slugs of the page registry
        :data:`explorer.app.pages.PAGES`).
    **params
        Initial parameter values.

    Notes
    -----
    Pages watch ``train`` / ``test`` (or ``dataset``) and ``init_seed``; they never modify
    the data themselves. ``notification`` carries ``(level, message)`` of the latest
    notice; the app turns it into a toast.
    """

    dataset_name = param.Selector(
        default="task_family", objects=list(CATALOG), doc="Key of the dataset in the catalog.")
    data_params = param.Dict(
        default={}, doc="Generator parameters of the chosen dataset (missing ones: defaults).")
    data_seed = param.Integer(
        default=0, bounds=(0, _SEED_MAX), doc="Seed of the data generator and of the split.")
    init_seed = param.Integer(
        default=0, bounds=(0, _SEED_MAX), doc="Seed the pages give their estimators.")
    train_fraction = param.Number(
        default=0.7, bounds=(0.1, 0.9), step=0.05, doc="Fraction of each task used to train.")
    page = param.Selector(default="tasks", objects=["tasks"], doc="Slug of the page shown.")

    dataset = param.ClassSelector(
        class_=MultiTaskDataset, default=None, constant=True, doc="The whole dataset (derived).")
    train = param.ClassSelector(
        class_=MultiTaskDataset, default=None, constant=True, doc="Training part (derived).")
    test = param.ClassSelector(
        class_=MultiTaskDataset, default=None, constant=True, doc="Test part (derived).")
    error = param.String(
        default="", constant=True, doc="Why the last spec change could not be built ('' if ok).")
    notification = param.Tuple(
        default=("info", ""), length=2, doc="(level, message) of the latest notice.")

    def __init__(self, *, pages: Sequence[str] | None = None, **params):
        if pages is None:
            from explorer.app.pages import PAGES  # lazy: the pages import this module

            pages = [page.slug for page in PAGES]
        pages = list(pages)
        if not pages:
            raise ValueError("pages must name at least one page slug; got an empty list.")
        self._uploaded: MultiTaskDataset | None = None
        self._uploaded_name = ""
        self._busy = False
        self.notices: deque[tuple[str, str]] = deque(maxlen=50)
        page = params.pop("page", None)
        super().__init__(**params)
        self.param.page.objects = pages
        self.page = pages[0] if page is None else page
        self.param.watch(self._on_spec_change,
                         ["dataset_name", "data_params", "data_seed", "train_fraction"])
        self._rebuild(self._entry_params(self.dataset_name, self.data_params, fill=True),
                      regenerate=True)

    # ------------------------------------------------------------------ spec helpers
    @property
    def entry(self) -> DatasetEntry | None:
        """Catalog entry of the chosen dataset (None for an uploaded file)."""
        return CATALOG.get(self.dataset_name)

    @property
    def uploaded_name(self) -> str:
        """Display name of the uploaded file ('' when none)."""
        return self._uploaded_name

    def current_params(self) -> dict:
        """Every parameter of the chosen entry: ``data_params`` over the defaults."""
        return self._entry_params(self.dataset_name, self.data_params, fill=True)

    def set_data_param(self, name: str, value: Any) -> None:
        """Change one generator parameter (the form's widgets call this)."""
        self.data_params = {**self.current_params(), name: value}

    @staticmethod
    def _entry_params(name: str, params: Mapping, *, fill: bool) -> dict:
        entry = CATALOG.get(name)
        if entry is None:
            return {}
        known = {spec.name: spec.default for spec in entry.params}
        chosen = {key: value for key, value in params.items() if key in known}
        return {**known, **chosen} if fill else chosen

    @staticmethod
    def _checked(name: str, params: Mapping) -> dict:
        """``params`` checked against the entry's specs (the catalog checks again)."""
        specs = {spec.name: spec for spec in CATALOG[name].params}
        unknown = sorted(set(params) - set(specs))
        if unknown:
            raise ValueError(f"{unknown} are not parameters of {name!r}; "
                             f"expected some of {sorted(specs)}.")
        return {key: coerce_param_value(specs[key], value) for key, value in params.items()}

    # ------------------------------------------------------------------ rebuild
    def _on_spec_change(self, *events: param.parameterized.Event) -> None:
        if self._busy:
            return
        changed = {event.name for event in events}
        name_changed = "dataset_name" in changed
        if name_changed and "data_params" not in changed:
            params = self._entry_params(self.dataset_name, {}, fill=True)
        elif name_changed:
            params = self._entry_params(self.dataset_name, self.data_params, fill=True)
        else:
            params = dict(self.data_params)
        entry = self.entry
        regenerate = bool(changed & {"dataset_name", "data_params"}) or (
            "data_seed" in changed and (entry is None or entry.seeded))
        self._rebuild(params, regenerate=regenerate)

    def _rebuild(self, params: dict, *, regenerate: bool) -> bool:
        name = self.dataset_name
        try:
            if name == UPLOADED:
                if self._uploaded is None:
                    raise ValueError("no CSV file has been uploaded in this session.")
                dataset = self._uploaded
            elif regenerate or self.dataset is None:
                params = self._checked(name, params)
                dataset = make_dataset(name, params, random_state=self.data_seed)
            else:
                dataset = self.dataset
            train, test = dataset.split(self.train_fraction, random_state=self.data_seed)
        except Exception as exc:  # a bad value must never take the UI down
            if not isinstance(exc, ValueError):
                log.exception("building dataset %r failed", name)
            message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
            with param.edit_constant(self):
                self.error = message
            kept = " The data shown is still the previous one." if self.dataset is not None else ""
            self.notify(f"Could not build {name!r}: {message}{kept}", "error")
            return False
        with param.edit_constant(self):
            self.param.update(dataset=dataset, train=train, test=test, error="")
        if name != UPLOADED and params != self.data_params:
            self._busy = True
            try:
                self.data_params = params
            finally:
                self._busy = False
        return True

    # ------------------------------------------------------------------ presets
    def apply_preset(self, name: str) -> bool:
        """Switch to scenario preset ``name`` (``data/*.json``): data set, parameters, seed, page.

        The preset is read from the package's own files only (``name`` must be one of
        :func:`~explorer.data.catalog.list_presets`; it never becomes a path). Returns False,
        with a notice, when it cannot be applied; the current data then stays.
        """
        from explorer.data.catalog import list_presets, load_preset

        if name not in list_presets():
            self.notify(f"preset must be one of {list_presets()}; got {name!r}.", "error")
            return False
        preset = load_preset(name)
        dataset = preset.get("dataset")
        if dataset not in self.param.dataset_name.objects:
            self.notify(f"preset {name!r} names an unknown data set {dataset!r}.", "error")
            return False
        params = self._entry_params(dataset, preset.get("params", {}), fill=True)
        self.param.update(dataset_name=dataset, data_params=params,
                          data_seed=int(preset.get("data_seed", self.data_seed)))
        if preset.get("page") in self.param.page.objects:
            self.page = preset["page"]
        return self.error == ""

    # ------------------------------------------------------------------ notices
    def notify(self, message: str, level: str = "info") -> None:
        """Record a notice for the user; the app shows it as a toast.

        Parameters
        ----------
        message : str
        level : {"info", "success", "warning", "error"}
        """
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}; got {level!r}.")
        message = str(message)
        self.notices.append((level, message))
        if self.notification == (level, message):
            self.param.trigger("notification")
        else:
            self.notification = (level, message)

    # ------------------------------------------------------------------ upload
    def load_uploaded_csv(self, data: bytes, filename: str = "upload.csv") -> bool:
        """Use an uploaded CSV file as the dataset.

        The bytes go through :func:`explorer.data.read_csv` (size limit
        :data:`explorer.data.MAX_CSV_BYTES`, clear errors on malformed files); nothing is
        written to disk and ``filename`` is only displayed. Format: one row per example,
        numeric feature columns, a ``task`` column (ids or names) and a ``y`` column.

        Returns
        -------
        bool
            True when the file was loaded; otherwise a notice says why and the data stays.
        """
        shown = _safe_filename(filename)
        try:
            if not isinstance(data, (bytes, bytearray)):
                raise ValueError(f"the upload must be bytes; got {type(data).__name__}.")
            if not shown.lower().endswith(".csv"):
                raise ValueError(f"expected a .csv file; got {shown!r}.")
            if len(data) > MAX_CSV_BYTES:
                raise ValueError(
                    f"the file is {len(data)} bytes; the limit is {MAX_CSV_BYTES} bytes."
                )
            dataset = read_csv(bytes(data))
            dataset.split(self.train_fraction, random_state=self.data_seed)  # fail early
        except ValueError as exc:
            self.notify(f"Could not use {shown!r}: {exc}", "error")
            return False
        self._uploaded, self._uploaded_name = dataset, shown
        objects = list(self.param.dataset_name.objects)
        if UPLOADED not in objects:
            self.param.dataset_name.objects = [*objects, UPLOADED]
        if self.dataset_name == UPLOADED:
            self._rebuild({}, regenerate=True)
        else:
            self.dataset_name = UPLOADED
        if self.dataset_name == UPLOADED and not self.error:
            self.notify(f"Loaded {shown!r}: {self.summary()}", "success")
        return not self.error

    # ------------------------------------------------------------------ summary
    def summary(self) -> str:
        """One line about the data, e.g. '3 tasks · 40 per task · d = 2 · classification'."""
        dataset = self.dataset
        if dataset is None:
            return "no data"
        sizes = dataset.task_sizes
        per_task = (f"{sizes.min()} per task" if sizes.min() == sizes.max()
                    else f"{sizes.min()}-{sizes.max()} per task")
        return (f"{dataset.n_tasks} tasks · {per_task} · d = {dataset.n_features} · "
                f"{dataset.kind}")

    # ------------------------------------------------------------------ URL query
    def to_query(self) -> dict[str, str]:
        """The scenario as URL query items (all strings).

        >>> q = ExplorerState(pages=("tasks",)).to_query()
        >>> q["data"], q["data_seed"]
        ('task_family', '0')
        """
        query = {
            QUERY_KEYS["dataset_name"]: str(self.dataset_name),
            QUERY_KEYS["data_seed"]: str(self.data_seed),
            QUERY_KEYS["init_seed"]: str(self.init_seed),
            QUERY_KEYS["train_fraction"]: repr(float(self.train_fraction)),
            QUERY_KEYS["page"]: str(self.page),
        }
        entry = self.entry
        if entry is not None:
            values = self.current_params()
            for spec in entry.params:
                query[DATA_PREFIX + spec.name] = encode_param_value(spec, values[spec.name])
        return query

    @staticmethod
    def owns_query_key(key: str) -> bool:
        """True for the query keys :meth:`to_query` writes (others belong to the pages)."""
        return key in QUERY_KEYS.values() or key.startswith(DATA_PREFIX)

    def from_query(self, query: Mapping[str, Any]) -> list[str]:
        """Apply a scenario read from a URL query; bad values are reported, never raised.

        Values may be strings (from the URL) or already parsed numbers. Keys this state
        does not own are ignored (pages read their own).

        Returns
        -------
        list of str
            One message per value that could not be used (empty when all were applied);
            when not empty, a warning notice lists them.
        """
        problems: list[str] = []
        updates: dict[str, Any] = {}
        if not isinstance(query, Mapping):
            problems.append(f"the query must be a mapping; got {type(query).__name__}")
            query = {}

        raw_name = query.get(QUERY_KEYS["dataset_name"])
        name = None
        if raw_name is not None:
            raw_name = str(raw_name)[:_MAX_QUERY_VALUE]
            if raw_name == UPLOADED and self._uploaded is None:
                problems.append("an uploaded file cannot travel in a link; upload it again")
            elif raw_name not in self.param.dataset_name.objects:
                problems.append(f"unknown dataset {_describe(raw_name)}")
            else:
                name = raw_name
        target = name or self.dataset_name
        entry = CATALOG.get(target)
        specs = {spec.name: spec for spec in entry.params} if entry is not None else {}
        data_values: dict[str, Any] = {}
        for key, raw in query.items():
            if not isinstance(key, str) or not key.startswith(DATA_PREFIX):
                continue
            pname = key[len(DATA_PREFIX):]
            if pname not in specs:
                problems.append(f"{_describe(pname)} is not a parameter of {target!r}")
                continue
            try:
                data_values[pname] = coerce_param_value(specs[pname], raw)
            except ValueError as exc:
                problems.append(str(exc).rstrip("."))
        if name is not None and name != self.dataset_name:
            updates["dataset_name"] = name
            if entry is not None:
                updates["data_params"] = self._entry_params(name, data_values, fill=True)
        elif data_values:
            updates["data_params"] = {**self.current_params(), **data_values}

        for pname, low, high, coerce in (
            ("data_seed", 0, _SEED_MAX, _coerce_int),
            ("init_seed", 0, _SEED_MAX, _coerce_int),
            ("train_fraction", *self.param.train_fraction.bounds, _coerce_float),
        ):
            raw = query.get(QUERY_KEYS[pname])
            if raw is None:
                continue
            try:
                updates[pname] = coerce(pname, raw, low, high)
            except ValueError as exc:
                problems.append(str(exc).rstrip("."))
        raw_page = query.get(QUERY_KEYS["page"])
        if raw_page is not None:
            if str(raw_page) in self.param.page.objects:
                updates["page"] = str(raw_page)
            else:
                problems.append(f"unknown page {_describe(raw_page)}")

        try:
            self.param.update(**updates)
        except ValueError as exc:  # defensive: every value was checked above
            problems.append(str(exc))
        if problems:
            self.notify("Some values in the link could not be used: "
                        + "; ".join(problems) + ".", "warning")
        return problems

    def apply_query_items(self, items: Iterable[tuple[str, str]]) -> list[str]:
        """:meth:`from_query` for raw ``(key, value)`` pairs (e.g. ``urllib.parse.parse_qsl``)."""
        return self.from_query(dict(items))
