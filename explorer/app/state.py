"""`ExplorerState`: the session's scenario (dataset spec, seeds, page) and the data built from it.

The state is a plain :class:`param.Parameterized`, testable without a browser; the views in
:mod:`explorer.app` and every page read it and never build data themselves.

* The *spec* is ``dataset_name`` + ``data_params`` + ``data_seed`` + ``train_fraction``.
  Whenever it changes, the derived parameters ``dataset``, ``train`` and ``test`` are
  rebuilt. A value the generator refuses never raises into the UI: the previous data
  stays, ``error`` holds the reason and a notification says so.
* ``init_seed`` is the seed pages give their estimators (``random_state``); it is kept apart
  from the data seed so the same data can be refitted from other starting points.
* A *scenario* (``data/scenarios/<name>.json``, :meth:`ExplorerState.apply_preset`) sets the
  spec, the init seed, the page and the page's hyper-parameters at once; ``scenario`` names it
  and ``scenario_edited`` turns True as soon as the spec differs from the scenario's.
* The link is the state (:mod:`explorer.app.link`): one URL key per setting, derived from
  the declarations; :meth:`ExplorerState.to_query` writes them all,
  :meth:`ExplorerState.from_query` reads them back (each value checked by its declaration,
  a bad one reported and skipped, never evaluated) and ``query_changed`` fires on any change.

>>> state = ExplorerState(pages=("tasks",))
>>> state.dataset.n_tasks >= 2 and state.error == ""
True
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import param

from explorer.app import link
from explorer.app.link import UrlField, page_query_key, url_keys
from explorer.app.work import WorkService
from explorer.data import MultiTaskDataset, read_csv
from explorer.data.catalog import CATALOG, UPLOADED, DatasetEntry, check_budget, make_dataset
from explorer.parameters import describe, parse_value, public_parameters

__all__ = ["ExplorerState", "UPLOADED", "UPLOAD_LIMIT_BYTES", "UrlField", "page_query_key"]

log = logging.getLogger(__name__)

#: Largest CSV a user may upload. The browser refuses a larger file before sending it; a file
#: travels as UTF-8 text in one websocket message, and 10 MB stays well inside the Bokeh
#: server's default message limit of 20 MiB (base64, as the stock FileInput sends, would
#: inflate a 15 MB file past it and drop the session).
UPLOAD_LIMIT_BYTES = 10 * 1000 * 1000

#: The data settings a scenario fixes; changing any of them marks the scenario edited.
SPEC = ("dataset_name", "data_params", "data_seed", "init_seed", "train_fraction")
LEVELS = ("info", "success", "warning", "error")
_SEED_MAX = 2**32 - 1


def _safe_filename(filename: Any) -> str:
    """A display-only name: last path component, printable, at most 60 characters."""
    text = str(filename or "upload.csv").replace("\\", "/").rsplit("/", 1)[-1]
    text = "".join(ch for ch in text if ch.isprintable())
    return (text or "upload.csv")[:60]


#: Said when a one-task file is loaded: what it can and cannot show.
ONE_TASK_NOTE = ("It has one task: learning across tasks needs two or more. The model pages "
                 "fit it as a single task (their task-relation figures are 1 x 1); Transfer "
                 "and the task relations on the Tasks page need two or more tasks, as does "
                 "any gain of a multi-task method in Compare.")


def describe_dataset(dataset: MultiTaskDataset | None) -> str:
    """One line about a dataset, e.g. '3 tasks · 40 per task · d = 2 · classification'."""
    if dataset is None:
        return "no data"
    sizes = dataset.task_sizes
    per_task = (f"{sizes.min()} per task" if sizes.min() == sizes.max()
                else f"{sizes.min()}-{sizes.max()} per task")
    return f"{dataset.n_tasks} tasks · {per_task} · d = {dataset.n_features} · {dataset.kind}"


# ---------------------------------------------------------------------- the state's parts
class _DataBuild:
    """How :class:`ExplorerState` builds its data: a change of the spec rebuilds ``dataset``,
    ``train`` and ``test`` through the session's work service (off the event loop when
    served); a refused value leaves the data shown and puts the spec back; "Hide the truth"
    presents the same arrays with neutral names and no truth."""

    def _on_spec_change(self, *events: param.parameterized.Event) -> None:
        if self._busy:
            return
        changed = {event.name for event in events}
        if "dataset_name" in changed and "data_params" not in changed:
            params = self._filled(self.dataset_name, {})
        else:
            params = self.current_params()
        entry = self.entry
        regenerate = bool(changed & {"dataset_name", "data_params"}) or (
            "data_seed" in changed and (entry is None or entry.seeded))
        self._rebuild(params, regenerate=regenerate)

    def _rebuild(self, params: dict, *, regenerate: bool) -> None:
        """Build the data of the current spec (off the event loop when there is one; see
        :mod:`explorer.app.work`) and publish ``dataset`` / ``train`` / ``test``; a value
        the generator refuses leaves the previous data and sets ``error``."""
        name, seed, fraction = self.dataset_name, self.data_seed, self.train_fraction
        previous = self._full[0] if self._full is not None else None
        uploaded = self._uploaded
        regenerate = regenerate or previous is None

        def compute():   # no Panel, no Bokeh, no state writes: this may run on a build thread
            values = dict(params)
            if name == UPLOADED:
                if uploaded is None:
                    raise ValueError("no CSV file has been uploaded in this session.")
                dataset = uploaded
            elif regenerate:
                values = CATALOG[name].values(params)
                dataset = make_dataset(name, values, random_state=seed)
            else:
                dataset = previous
            train, test = dataset.split(fraction, random_state=seed)
            return values, dataset, train, test

        def apply(result) -> None:
            values, dataset, train, test = result
            self._full = (dataset, train, test)
            with param.edit_constant(self):
                self.param.update(**self._presented(), error="", building=False)
            self._good = (name, dict(values), seed, fraction)
            if name != UPLOADED and values != self.data_params:
                self._busy = True
                try:
                    self.data_params = values
                finally:
                    self._busy = False

        def failed(exc: Exception) -> None:   # a bad value must never take the UI down
            if not isinstance(exc, ValueError):
                log.error("building dataset %r failed", name, exc_info=exc)
            message = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"
            with param.edit_constant(self):
                self.param.update(error=message, building=False)
            kept = " The data shown is still the previous one." if self.dataset is not None else ""
            self.notify(f"Could not build {name!r}: {message}{kept}", "error")
            self._restore_last_good()

        if self.work.asynchronous:
            with param.edit_constant(self):
                self.building = True
        self.work.submit("data", compute, apply, failed)

    def _presented(self) -> dict[str, MultiTaskDataset]:
        """``dataset``, ``train``, ``test`` as the views get them: with the truth hidden,
        tasks named T0, T1, ... and no truth (the same arrays: only names and truth differ)."""
        dataset, train, test = self._full
        if not self.hide_truth:
            return {"dataset": dataset, "train": train, "test": test}
        names = [f"T{t}" for t in range(dataset.n_tasks)]
        return {key: part.relabel(task_names=names, truth={})
                for key, part in (("dataset", dataset), ("train", train), ("test", test))}

    def true_dataset(self) -> MultiTaskDataset | None:
        """The whole dataset as built, its truth and task names included whatever
        ``hide_truth`` says: what a student's guess is scored against once the truth is
        revealed (None before the first build)."""
        return None if self._full is None else self._full[0]

    def _hide_truth_changed(self, *_) -> None:
        if self._full is not None:
            with param.edit_constant(self):
                self.param.update(**self._presented())

    def _restore_last_good(self) -> None:
        """Put the spec back to the one that built the data shown (a refused value is not kept,
        neither in the widgets nor in the address bar)."""
        good = getattr(self, "_good", None)
        if good is None:
            return
        name, params, seed, fraction = good
        self._busy = True
        try:
            self.param.update(dataset_name=name, data_params=params, data_seed=seed,
                              train_fraction=fraction)
        finally:
            self._busy = False


class _Scenarios:
    """The scenarios of :class:`ExplorerState` (``data/scenarios/<name>.json``): applied at
    once, the page's values checked by its declaration; ``scenario_edited`` follows the
    spec."""

    def apply_preset(self, name: str) -> bool:
        """Switch to scenario ``name`` (``data/scenarios/<name>.json``): data set, parameters,
        seeds, train fraction, page, and the page's hyper-parameters (``page_params``, the
        rest back to their defaults).

        The scenario is read from the package's own files only (``name`` must be one of
        :func:`~explorer.data.catalog.list_presets`; it never becomes a path). Its page
        values are checked by the page's declaration exactly as a link's ``<page>.<name>``
        values are; a value refused is reported and not applied. Returns False, with a
        notice, when the scenario (or one of its values) cannot be applied; a scenario that
        cannot be read leaves everything as it was.
        """
        from explorer.data.catalog import list_presets, load_preset

        if name not in list_presets():
            self.notify(f"preset must be one of {list_presets()}; got {describe(name)}.",
                        "error")
            return False
        try:
            scenario = load_preset(name)
            dataset = scenario["dataset"]
            if dataset not in self.param.dataset_name.objects:
                raise ValueError(f"scenario {name!r} names an unknown data set "
                                 f"{describe(dataset)}.")
            spec = {
                "dataset_name": dataset,
                "data_params": self._filled(dataset, CATALOG[dataset].values(scenario["params"])),
                "data_seed": parse_value(self, "data_seed", scenario["data_seed"]),
                "init_seed": parse_value(self, "init_seed", scenario.get("init_seed", 0)),
                "train_fraction": parse_value(self, "train_fraction", scenario.get(
                    "train_fraction", self.param.train_fraction.default)),
            }
        except ValueError as exc:
            self.notify(f"Could not use the scenario {name!r}: {exc}", "error")
            return False
        page = scenario["page"]
        page_values, problems = {}, []
        if page in self._page_params:   # (an app without the page shows neither)
            page_values, problems = self._parse_page_values(page,
                                                            scenario.get("page_params", {}))
        self._scenario_spec = spec
        with param.edit_constant(self):
            self.param.update(scenario=name, scenario_edited=False)
        self.param.update(**spec)
        self._check_scenario_edited()
        owner = self._page_params.get(page)
        if owner is not None:   # the scenario's page starts from its defaults
            defaults = {n: owner.param[n].default for n in public_parameters(owner)}
            self.set_page_values({page: {**defaults, **page_values}}, replace=True)
        if page in self.param.page.objects:
            self.page = page
        if problems:
            self.notify(f"Some values of the scenario {name!r} could not be used: "
                        + "; ".join(problems) + ".", "warning")
        return self.error == "" and not problems

    def clear_scenario(self) -> None:
        """Forget the chosen scenario (the data and settings stay as they are)."""
        self._scenario_spec = None
        with param.edit_constant(self):
            self.param.update(scenario="", scenario_edited=False)

    def _check_scenario_edited(self, *events) -> None:
        spec = self._scenario_spec
        edited = spec is not None and not _same(self._spec(), spec)
        if edited != self.scenario_edited:
            with param.edit_constant(self):
                self.scenario_edited = edited


class _Upload:
    """A CSV file of the user's as the data set of :class:`ExplorerState` (read off the event
    loop, within the budget; nothing written to disk)."""

    def load_uploaded_csv(self, data: bytes | str, filename: str = "upload.csv") -> bool:
        """Use an uploaded CSV file as the dataset.

        The content goes through :func:`explorer.data.read_csv` (size limit
        :data:`UPLOAD_LIMIT_BYTES`, clear errors on malformed files) and the data-set budget;
        nothing is written to disk and ``filename`` is only displayed. Format: one row per
        example, numeric feature columns, a ``task`` column (ids or names) and a ``y``
        column.

        Returns
        -------
        bool
            True when the file was loaded (served: when it is being read, off the event
            loop); otherwise a notice says why and the data stays.
        """
        shown = _safe_filename(filename)
        fraction, seed = self.train_fraction, self.data_seed

        def parse() -> MultiTaskDataset:   # off the event loop when there is one
            content = data.encode("utf-8") if isinstance(data, str) else data
            if not isinstance(content, (bytes, bytearray)):
                raise ValueError(f"the upload must be bytes; got {type(content).__name__}.")
            if not shown.lower().endswith(".csv"):
                raise ValueError(f"expected a .csv file; got {shown!r}.")
            if len(content) == 0:
                raise ValueError("the file is empty; expected a header line with a 'task' "
                                 "column, a 'y' column and feature columns, then one row per "
                                 "example.")
            if len(content) > UPLOAD_LIMIT_BYTES:
                raise ValueError(f"the file is {len(content):,} bytes; the limit is "
                                 f"{UPLOAD_LIMIT_BYTES:,} bytes.")
            dataset = read_csv(bytes(content), max_bytes=UPLOAD_LIMIT_BYTES)
            check_budget(dataset.n_samples, dataset.n_features, dataset.n_tasks,
                         what="the file")
            dataset.split(fraction, random_state=seed)  # fail early
            return dataset

        def use(dataset: MultiTaskDataset) -> None:
            self._uploaded, self._uploaded_name = dataset, shown
            objects = list(self.param.dataset_name.objects)
            if UPLOADED not in objects:
                self.param.dataset_name.objects = [*objects, UPLOADED]
            if self.dataset_name == UPLOADED:
                self._rebuild({}, regenerate=True)
            else:
                self.dataset_name = UPLOADED
            if self.dataset_name == UPLOADED:
                self.notify(f"Loaded {shown!r}: {describe_dataset(dataset)}"
                            + (f". {ONE_TASK_NOTE}" if dataset.n_tasks == 1 else ""), "success")

        def refuse(exc: Exception) -> None:
            if not isinstance(exc, ValueError):
                raise exc
            self.notify(f"Could not use {shown!r}: {exc}", "error")

        before = len(self.notices)
        self.work.submit("upload", parse, use, refuse)
        return not any(level == "error" for level, _ in list(self.notices)[before:])


class _PageSettings:
    """The pages' settings in :class:`ExplorerState`: each page's declaration (a link's or a
    scenario's ``<slug>.<name>`` values are checked by it before the page exists), the built
    page's instance, and the link made of them all (:mod:`explorer.app.link`)."""

    def _parse_page_values(self, slug: str, raw_values: Mapping[str, Any]
                           ) -> tuple[dict[str, Any], list[str]]:
        """Values for page ``slug``'s hyper-parameters (text or typed, untrusted) checked by the
        page's declaration: ``(accepted values, one message per refused value)``."""
        owner = self._page_params.get(slug)
        if owner is None and slug in self._page_instances:   # declared by the built page
            owner = type(self._page_instances[slug])
        values: dict[str, Any] = {}
        problems: list[str] = []
        for pname, raw in raw_values.items():
            if owner is None:
                problems.append(f"{describe(page_query_key(slug, str(pname)))} is not a "
                                f"setting of page {slug!r}")
                continue
            try:
                values[pname] = parse_value(owner, pname, raw)
            except ValueError as exc:
                problems.append(f"{slug}.{str(exc).rstrip('.')}")
        return values, problems

    def page_settings(self) -> dict[str, Any]:
        """Each page's settings by slug: the built page's instance, else the page's
        declaration (a ``param`` class; None for a page declared without one)."""
        return {slug: self._page_instances.get(slug, declaration)
                for slug, declaration in self._page_params.items()}

    def page_value(self, slug: str, name: str, default: Any = None) -> Any:
        """The value in force of setting ``name`` of page ``slug``: the built page's, else one
        a link or a scenario left for the page to come (``default`` when none did)."""
        instance = self._page_instances.get(slug)
        if instance is not None:
            return getattr(instance, name)
        return self._pending_page_values.get(slug, {}).get(name, default)

    def set_page_values(self, page_values: Mapping[str, Mapping[str, Any]], *,
                        replace: bool = False) -> None:
        """Apply checked page values (slug -> {name: value}) now (page built) or when the
        page is built; ``replace``: they are all of that page's pending values."""
        for slug, values in page_values.items():
            instance = self._page_instances.get(slug)
            if instance is not None:
                instance.param.update(**values)
            elif replace:
                self._pending_page_values[slug] = dict(values)
            else:
                self._pending_page_values.setdefault(slug, {}).update(values)

    def register_page_params(self, slug: str, instance: param.Parameterized) -> None:
        """A page's hyper-parameters join the scenario: values a link carried for it are
        applied now, the URL gains them and every later change rewrites it
        (``query_changed``)."""
        self._page_instances[slug] = instance
        pending = self._pending_page_values.pop(slug, {})
        if pending:
            instance.param.update(**pending)
        instance.param.watch(lambda *_: self.param.trigger("query_changed"),
                             public_parameters(instance))
        # the link gains the page's keys (a served session builds its first page after the
        # link was first written)
        self.param.trigger("query_changed")

    # ------------------------------------------------------------------ the link
    def url_fields(self, dataset_name: str | None = None) -> dict[str, UrlField]:
        """Every setting of the link by URL key (:func:`explorer.app.link.url_fields`)."""
        return link.url_fields(self, dataset_name)

    def to_query(self) -> dict[str, str]:
        """The link: every setting in force, as text.

        >>> q = ExplorerState(pages=("tasks",)).to_query()
        >>> q["data"], q["data_seed"], q["hide_truth"]
        ('task_family', '0', 'false')
        """
        return link.to_query(self)

    def from_query(self, query: Mapping[str, Any]) -> list[str]:
        """Apply a link read from a URL query (:func:`explorer.app.link.from_query`); returns
        one message per value that could not be used (a warning notice lists them)."""
        return link.from_query(self, query)

    def owns_query_key(self, key: str) -> bool:
        """True for the query keys :meth:`to_query` writes (any data set's or page's)."""
        return link.owns_query_key(self, key)

    def apply_query_items(self, items: Iterable[tuple[str, str]]) -> list[str]:
        """:meth:`from_query` for raw ``(key, value)`` pairs (e.g. ``urllib.parse.parse_qsl``)."""
        return self.from_query(dict(items))


# ---------------------------------------------------------------------- the state
class ExplorerState(_DataBuild, _Scenarios, _Upload, _PageSettings, param.Parameterized):
    """Scenario of one session: which data, which seeds, which page; and the built data.

    Parameters
    ----------
    pages : sequence of str, or mapping of str -> param.Parameterized class, optional
        Slugs allowed for ``page`` (default: the page registry
        :data:`explorer.app.pages.PAGES`). A mapping also gives each page's hyper-parameter
        declaration, so a link's ``<slug>.<name>`` values are checked before the page exists.
    **params
        Initial parameter values.

    Notes
    -----
    Pages watch ``train`` / ``test`` (or ``dataset``) and ``init_seed``; they never modify
    the data themselves. ``notification`` carries ``(level, message)`` of the latest
    notice; the app turns it into a toast (escaped: messages quote untrusted text).
    """

    dataset_name = param.Selector(
        default="task_family", objects=list(CATALOG), label="Dataset", metadata={"url": "data"},
        doc="Key of the dataset in the catalog.")
    data_params = param.Dict(
        default={}, doc="Generator parameters of the chosen dataset (missing ones: defaults).")
    data_seed = param.Integer(
        default=0, bounds=(0, _SEED_MAX), label="Data seed", metadata={"url": "data_seed"},
        doc="Seed of the data generator and of the split.")
    init_seed = param.Integer(
        default=0, bounds=(0, _SEED_MAX), label="Init seed", metadata={"url": "init_seed"},
        doc="Seed the pages give their estimators (random_state).")
    train_fraction = param.Number(
        default=0.7, bounds=(0.1, 0.9), step=0.05, label="Train fraction",
        metadata={"url": "train"}, doc="Fraction of each task used to train.")
    page = param.Selector(default="tasks", objects=["tasks"], metadata={"url": "page"},
                          doc="Slug of the page shown.")
    hide_truth = param.Boolean(
        default=False, label="Hide the truth", metadata={"url": "hide_truth"},
        doc="Neutral task names and no ground truth in any view, so students can guess "
            "before the reveal; switching it off shows the truth without refitting.")
    class_code = param.String(
        default="", label="Class", metadata={"url": "class"},
        doc="Code of the class this session joined ('' for none; explorer.app.class_link).")
    class_key = param.String(
        default="", label="Teacher's key", metadata={"url": "key"},
        doc="The teacher's key of the class (a teacher's link; checked by the class's store).")

    dataset = param.ClassSelector(
        class_=MultiTaskDataset, default=None, constant=True, doc="The whole dataset (derived).")
    train = param.ClassSelector(
        class_=MultiTaskDataset, default=None, constant=True, doc="Training part (derived).")
    test = param.ClassSelector(
        class_=MultiTaskDataset, default=None, constant=True, doc="Test part (derived).")
    error = param.String(
        default="", constant=True, doc="Why the last spec change could not be built ('' if ok).")
    building = param.Boolean(
        default=False, constant=True,
        doc="True while the data of a new spec are being built off the event loop.")
    notification = param.Tuple(
        default=("info", ""), length=2, doc="(level, message) of the latest notice.")
    query_changed = param.Event(doc="A setting of the link changed (the URL follows).")
    scenario = param.String(
        default="", constant=True, metadata={"url": "scenario"},
        doc="Name of the scenario chosen last ('' for none); set by apply_preset.")
    scenario_edited = param.Boolean(
        default=False, constant=True,
        doc="True when the data settings differ from the chosen scenario's (derived).")

    def __init__(self, *, pages: Sequence[str] | Mapping[str, Any] | None = None, **params):
        if pages is None:
            from explorer.app.pages import PAGES  # lazy: importing the pages imports Panel

            pages = {page.slug: page.params for page in PAGES}
        if not isinstance(pages, Mapping):
            pages = {slug: None for slug in pages}
        if not pages:
            raise ValueError("pages must name at least one page slug; got an empty list.")
        self._page_params: dict[str, Any] = dict(pages)
        self._page_instances: dict[str, param.Parameterized] = {}
        self._pending_page_values: dict[str, dict[str, Any]] = {}
        self._uploaded: MultiTaskDataset | None = None
        #: (dataset, train, test) as built, truth included; published as :meth:`_presented`
        self._full: tuple[MultiTaskDataset, MultiTaskDataset, MultiTaskDataset] | None = None
        self._uploaded_name = ""
        self._busy = False
        self._scenario_spec: dict[str, Any] | None = None
        #: Where data are built: synchronously here; the served app swaps in one that
        #: builds off the event loop (:meth:`WorkService.for_document`).
        self.work = WorkService()
        self.notices: deque[tuple[str, str]] = deque(maxlen=50)
        page = params.pop("page", None)
        super().__init__(**params)
        self.param.page.objects = list(pages)
        self.page = list(pages)[0] if page is None else page
        self.param.watch(self._on_spec_change,
                         ["dataset_name", "data_params", "data_seed", "train_fraction"])
        self.param.watch(self._hide_truth_changed, "hide_truth")
        self._rebuild(self.current_params(), regenerate=True)
        self.param.watch(self._check_scenario_edited, list(SPEC))
        self.param.watch(lambda *_: self.param.trigger("query_changed"),
                         [*url_keys(self), "data_params"])

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
        return self._filled(self.dataset_name, self.data_params)

    def _spec(self) -> dict[str, Any]:
        """The data settings a scenario fixes (:data:`SPEC`), parameters filled."""
        return {name: self.current_params() if name == "data_params" else getattr(self, name)
                for name in SPEC}

    def set_data_param(self, name: str, value: Any) -> None:
        """Change one generator parameter (the form's widgets call this)."""
        self.data_params = {**self.current_params(), name: value}

    @staticmethod
    def _filled(name: str, params: Mapping) -> dict:
        entry = CATALOG.get(name)
        if entry is None:
            return {}
        defaults = entry.defaults()
        return {**defaults, **{k: v for k, v in params.items() if k in defaults}}

    # ------------------------------------------------------------------ notices
    def notify(self, message: str, level: str = "info") -> None:
        """Record a notice for the user; the app shows it as a toast.

        Parameters
        ----------
        message : str
            Plain text (it is escaped before it is shown).
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

    # ------------------------------------------------------------------ summary
    def summary(self) -> str:
        """One line about the data, e.g. '3 tasks · 40 per task · d = 2 · classification'."""
        return describe_dataset(self.dataset)



def _same(a: Any, b: Any) -> bool:
    """Equal, numbers up to rounding (a slider's 0.30000000000000004 is the scenario's 0.3)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if (isinstance(a, (int, float)) and isinstance(b, (int, float))
            and not isinstance(a, bool) and not isinstance(b, bool)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b
