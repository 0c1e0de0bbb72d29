"""The link is the state: every setting of a session as URL query items, and back.

One mapping, derived from the ``param`` declarations, names every setting in the link
(:func:`url_fields`): the state's own parameters that declare ``metadata={"url": key}``
(``data``, ``data_seed``, ``init_seed``, ``train``, ``page``, ``hide_truth``, ``scenario``),
the chosen data generator's parameters as ``d.<name>`` and each page's as ``<slug>.<name>``.
:func:`to_query` writes them all; :func:`from_query` reads them back, each value judged by
the declaration it names (refused with a message, never evaluated, never kept).

This module and ``bind_url`` (:mod:`explorer.app.serving`: read the query once, write the
address bar on every ``query_changed``) are the link's one layer over Panel's
``pn.state.location``, instead of ``pn.state.location.sync``: ``sync`` ties one parameter of
one object to one query key, applies the query with param's own deserialisation in a single
update (a failure is reported as one dict of values, not per key) and merges into the address
(a refused or unknown key stays in it). The link needs dotted keys of pages not built yet
(kept for the page to come), the generator's values held in one dict (``d.<name>``), a
scenario applied before the link's other values, one message per refused key and an address
rewritten whole.

Functions of a session's :class:`~explorer.app.state.ExplorerState`, through its public
face only (its parameters, ``current_params``, ``page_settings``, ``page_value``,
``set_page_values``, ``apply_preset``, ``notify``); the state imports this module, never the
other way round.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from explorer.data.catalog import CATALOG, UPLOADED, list_presets
from explorer.parameters import MAX_TEXT, describe, encode_value, parse_value, public_parameters

__all__ = ["DATA_PREFIX", "UrlField", "from_query", "owns_query_key", "page_query_key",
           "to_query", "url_fields", "url_keys"]

#: URL key prefix of the data generator's parameters (``d.n_tasks``).
DATA_PREFIX = "d."
_UNSET = object()


def page_query_key(slug: str, name: str) -> str:
    """The URL key of hyper-parameter ``name`` of page ``slug`` (e.g. ``trees.max_depth``)."""
    return f"{slug}.{name}"


@dataclass(frozen=True)
class UrlField:
    """One setting in the link: URL ``key`` of parameter ``name`` of ``owner`` (the
    ``param`` class or instance whose declaration judges a value from a link); ``group`` is
    ``"state"``, ``"data"`` or the page's slug."""

    key: str
    owner: Any
    name: str
    group: str


def url_keys(owner) -> dict[str, str]:
    """Parameter name -> URL key of the parameters of ``owner`` that declare
    ``metadata={"url": key}``."""
    return {name: parameter.metadata["url"] for name, parameter in owner.param.objects().items()
            if parameter.metadata and "url" in parameter.metadata}


def url_fields(state, dataset_name: str | None = None) -> dict[str, UrlField]:
    """Every setting of the link of ``state`` (an :class:`~explorer.app.state.ExplorerState`),
    by URL key, derived from the declarations: the state's
    own (``metadata={"url": ...}``), the generator parameters of ``dataset_name``
    (default: the chosen data set) as ``d.<name>``, and each page's as
    ``<slug>.<name>`` (a built page's instance, else the page's declaration)."""
    fields = {key: UrlField(key, state, name, "state") for name, key in url_keys(state).items()}
    entry = CATALOG.get(state.dataset_name if dataset_name is None else dataset_name)
    if entry is not None:
        for name in public_parameters(entry.params):
            fields[DATA_PREFIX + name] = UrlField(DATA_PREFIX + name, entry.params, name,
                                                  "data")
    for slug, owner in state.page_settings().items():
        for name in public_parameters(owner) if owner is not None else ():
            key = page_query_key(slug, name)
            fields[key] = UrlField(key, owner, name, slug)
    return fields


def _link_value(state, field: UrlField) -> Any:
    """The value ``field`` has in the link (``_UNSET``: it is left out: an empty text, or
    a page not built whose link carried no value for it)."""
    if field.group == "state":
        value = getattr(state, field.name)
        return _UNSET if value == "" else value
    if field.group == "data":
        return state.current_params()[field.name]
    return state.page_value(field.group, field.name, _UNSET)


def to_query(state) -> dict[str, str]:
    """The link: every setting of :func:`url_fields` in force, as text.

    >>> from explorer.app.state import ExplorerState
    >>> q = to_query(ExplorerState(pages=("tasks",)))
    >>> q["data"], q["data_seed"], q["hide_truth"]
    ('task_family', '0', 'false')
    """
    query = {}
    for key, field in url_fields(state).items():
        value = _link_value(state, field)
        if value is not _UNSET:
            query[key] = encode_value(field.owner.param[field.name], value)
    return query


def owns_query_key(state, key: str) -> bool:
    """True for the query keys :func:`to_query` writes (any data set's or page's)."""
    return (key in url_keys(state).values() or key.startswith(DATA_PREFIX)
            or key.split(".", 1)[0] in state.page_settings())


def from_query(state, query: Mapping[str, Any]) -> list[str]:
    """Apply a link read from a URL query; bad values are reported, never raised.

    Every value is checked by the declaration of its :func:`url_fields` entry and refused
    with a message naming the key, the expectation and what came; the rest is applied
    (a scenario first, the link's other values on top of it).

    Returns
    -------
    list of str
        One message per value that could not be used (empty when all were applied);
        when not empty, a warning notice lists them.
    """
    problems: list[str] = []
    if not isinstance(query, Mapping):
        problems.append(f"the query must be a mapping; got {type(query).__name__}")
        query = {}
    keys = url_keys(state)
    _apply_scenario(state, query.get(keys["scenario"]), keys["scenario"], problems)
    name = _dataset_name(state, query.get(keys["dataset_name"]), keys["dataset_name"],
                         problems)
    target = name or state.dataset_name
    updates, data_values, page_values = _checked_values(
        state, {k: v for k, v in query.items()
                if k not in (keys["scenario"], keys["dataset_name"])}, target, problems)
    if name is not None and name != state.dataset_name:
        updates["dataset_name"] = name
        if CATALOG.get(name) is not None:
            updates["data_params"] = {**CATALOG[name].defaults(), **data_values}
    elif data_values:
        updates["data_params"] = {**state.current_params(), **data_values}
    state.set_page_values(page_values)
    try:
        state.param.update(**updates)
    except ValueError as exc:  # defensive: every value was checked above
        problems.append(str(exc))
    if problems:
        state.notify("Some values in the link could not be used: "
                     + "; ".join(problems) + ".", "warning")
    return problems


def _apply_scenario(state, raw, key: str, problems: list[str]) -> None:
    """The link's scenario (``raw``, under ``key``), applied first unless it is in force."""
    if raw is None:
        return
    raw = str(raw)[:MAX_TEXT]
    if raw not in list_presets():
        problems.append(f"{key} must be one of {list_presets()}; got {describe(raw)}")
    elif raw != state.scenario or state.scenario_edited:
        state.apply_preset(raw)


def _dataset_name(state, raw, key: str, problems: list[str]) -> str | None:
    """The link's data set (``raw``, under ``key``), checked; None when none or refused."""
    if raw is not None and str(raw) == UPLOADED and not state.uploaded_name:
        problems.append("an uploaded file cannot travel in a link; upload it again")
    elif raw is not None:
        try:
            return parse_value(state, "dataset_name", raw, label=key)
        except ValueError as exc:
            problems.append(str(exc).rstrip("."))
    return None


def _checked_values(state, query: Mapping[str, Any], dataset_name: str,
                    problems: list[str]) -> tuple[dict, dict, dict]:
    """The link's other values, each checked by its declaration (for data set
    ``dataset_name``): ``(the state's, the generator's, page slug -> the page's)``."""
    fields = url_fields(state, dataset_name)
    updates: dict[str, Any] = {}
    data_values: dict[str, Any] = {}
    page_values: dict[str, dict[str, Any]] = {}
    for key, raw in query.items():
        field = fields.get(key) if isinstance(key, str) else None
        if field is None:
            problems.append(_unknown_key(state, key, dataset_name))
            continue
        try:
            value = parse_value(field.owner, field.name, raw, label=key)
        except ValueError as exc:
            problems.append(str(exc).rstrip("."))
            continue
        if field.group == "state":
            updates[field.name] = value
        elif field.group == "data":
            data_values[field.name] = value
        else:
            page_values.setdefault(field.group, {})[field.name] = value
    return updates, data_values, page_values


def _unknown_key(state, key: Any, dataset_name: str) -> str:
    """Why ``key`` is not a setting of the link."""
    text = str(key)
    if text.startswith(DATA_PREFIX):
        if CATALOG.get(dataset_name) is None:
            return f"{describe(key)}: the uploaded data has no parameters"
        return f"{describe(key)} is not a parameter of data {dataset_name!r}"
    slug = text.split(".", 1)[0]
    if "." in text and slug in state.page_settings():
        return f"{describe(key)} is not a setting of page {slug!r}"
    return f"{describe(key)} is not a setting of this app"
