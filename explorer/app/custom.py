"""A model page for any estimator class: your own multi-task model in the explorer.

A class with ``fit(X, y, task)``, ``predict(X, task)`` and ``task_relationships()`` (the
estimator contract, docs/DESIGN.md; ``fit_iter`` optional) gets a
:class:`~explorer.app.kit.ModelPage` derived from it (:func:`model_page`):

* its hyper-parameters as widgets, from its ``_parameter_constraints`` when it declares them
  (the project's constraints through :func:`explorer.models.constraints.from_constraint`,
  scikit-learn's ``Interval`` / ``StrOptions`` / ``"boolean"`` read by their public
  attributes), otherwise from the types of its ``get_params()`` defaults (bool, int, float,
  str; ``random_state`` is the page's init seed; ``None`` and objects stay at their default);
* its title and URL slug from the class name (``TaskSimilarityRidge`` ->
  ``task_similarity_ridge``);
* the single-task baseline of the data's kind, as the shipped pages;
* every matrix of ``task_relationships()`` beside the truth of the same key
  (:class:`~explorer.viz.relationships.RelationshipsView`, figures made at the first
  snapshot: the keys are known only after a fit, and no user code runs before Run);
* live when the class has ``fit_iter``, else one ``fit`` on the worker
  (:func:`explorer.app.fit_session.one_fit_snapshots`).

Classes come in three ways (:func:`configured_models`): ``python -m explorer serve --model
pkg.mod:Class`` (or ``MTL_EXPLORER_MODELS="pkg.mod:Class"`` for ``panel serve``), the
entry-point group ``mtl_explorer.models`` of installed packages, and
``explorer.app.serve(models=[...])``. A class that breaks the contract is refused with a
:class:`ContractError` naming it and the missing piece.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
import math
import os
import re
from collections.abc import Iterable, Sequence
from numbers import Integral
from typing import Any

import param

from explorer.app.kit import ModelPage
from explorer.models.constraints import from_constraint
from explorer.parameters import public_parameters
from explorer.viz.live import escape

__all__ = ["ENTRY_POINT_GROUP", "ENV_VAR", "ContractError", "check_contract",
           "configured_models", "discovered_models", "estimator_kinds", "hyper_parameters",
           "load_model", "model_page", "qualified_name", "slug_for"]

log = logging.getLogger(__name__)

#: The entry-point group an installed package declares its estimator classes in.
ENTRY_POINT_GROUP = "mtl_explorer.models"
#: ``panel serve``'s way to name classes: ``MTL_EXPLORER_MODELS="pkg.mod:A,pkg.mod:B"``.
ENV_VAR = "MTL_EXPLORER_MODELS"
#: The methods of the contract, in the order they are checked.
REQUIRED = ("fit", "predict", "task_relationships")
#: Constructor parameters that are not widgets: the seed comes from the sidebar; ``name``,
#: ``param`` and ``log_scale`` would shadow the parameter class's own attributes.
NOT_WIDGETS = ("random_state", "name", "param", "log_scale")
_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class ContractError(ValueError):
    """A class that cannot be served (it breaks the estimator contract, or cannot be
    imported); the message names it and what is missing."""


def qualified_name(obj) -> str:
    """``module:QualName`` of a class (or of an object's class)."""
    cls = obj if isinstance(obj, type) else type(obj)
    return f"{cls.__module__}:{cls.__qualname__}"


def check_contract(candidate, *, who: str | None = None) -> type:
    """``candidate`` if it is a class with the contract's methods; otherwise a
    :class:`ContractError` naming it (``who``, default its qualified name) and the missing
    piece."""
    who = who or (qualified_name(candidate) if isinstance(candidate, type) else repr(candidate))
    if not isinstance(candidate, type):
        raise ContractError(f"{who} cannot be served: it is not a class (it is a "
                            f"{type(candidate).__name__}); give the estimator's class.")
    for method in REQUIRED:
        if not callable(getattr(candidate, method, None)):
            raise ContractError(f"{who} cannot be served: it has no {method}() method (the "
                                "explorer's estimator contract, docs/DESIGN.md)")
    return candidate


def load_model(spec: str) -> type:
    """The class named ``"package.module:ClassName"``, checked by :func:`check_contract`."""
    if not isinstance(spec, str) or not _SPEC.match(spec.strip()):
        raise ContractError(f"a model must be named package.module:ClassName; got {spec!r}.")
    module_name, _, attribute = spec.strip().partition(":")
    try:
        found = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 -- any import failure is the user's to read
        raise ContractError(f"{spec} cannot be served: importing {module_name} failed "
                            f"({type(exc).__name__}: {exc}).") from exc
    for part in attribute.split("."):
        if not hasattr(found, part):
            raise ContractError(f"{spec} cannot be served: {module_name} has no {attribute}.")
        found = getattr(found, part)
    return check_contract(found, who=spec)


def discovered_models() -> list[type]:
    """The classes installed packages declare in the ``mtl_explorer.models`` entry-point
    group. One that fails to load or breaks the contract is left out with a logged error
    (an installed package must not keep the app from starting)."""
    from importlib.metadata import entry_points

    found = []
    for point in entry_points(group=ENTRY_POINT_GROUP):
        try:
            found.append(check_contract(point.load(), who=point.value))
        except Exception as exc:  # noqa: BLE001 -- logged: the other pages go on
            log.error("entry point %r (%s) of group %s is not served: %s", point.name,
                      point.value, ENTRY_POINT_GROUP, exc)
    return found


@functools.lru_cache(maxsize=1)
def _discovered_once() -> tuple[type, ...]:
    return tuple(discovered_models())


def configured_models(models: Iterable = (), *, environ=None) -> list[type]:
    """The classes the app serves besides its own, in order, each once: ``models``
    (classes or ``"pkg.mod:Class"`` names), then the names in ``MTL_EXPLORER_MODELS``
    (comma- or space-separated), then the entry points (found once per process).

    A named class that breaks the contract raises :class:`ContractError`."""
    environ = os.environ if environ is None else environ
    named = [*models, *re.split(r"[,\s]+", environ.get(ENV_VAR, "").strip())]
    classes = [load_model(m) if isinstance(m, str) else check_contract(m)
               for m in named if m != ""]
    classes += _discovered_once()
    return list(dict.fromkeys(classes))


# ---------------------------------------------------------------------- the declaration
def slug_for(cls: type) -> str:
    """The page's URL key: the class name in snake case, only ``[a-z0-9_]``.

    >>> class TaskSimilarityRidge: pass
    >>> class MTLModel2: pass
    >>> slug_for(TaskSimilarityRidge), slug_for(MTLModel2)
    ('task_similarity_ridge', 'mtl_model2')
    """
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", cls.__name__)
    slug = re.sub(r"[^a-z0-9]+", "_", words.lower()).strip("_") or "model"
    return f"model_{slug}" if slug[0].isdigit() else slug


def _defaults(estimator) -> dict[str, Any]:
    """The estimator's hyper-parameters and values (``get_params`` or its signature)."""
    if hasattr(estimator, "get_params"):
        return dict(estimator.get_params(deep=False))
    signature = inspect.signature(type(estimator))
    return {name: getattr(estimator, name, p.default)
            for name, p in signature.parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _instance(cls: type):
    try:
        return cls()
    except Exception as exc:  # noqa: BLE001 -- the user's constructor
        raise ContractError(f"{qualified_name(cls)} cannot be served: {cls.__name__}() "
                            f"failed ({type(exc).__name__}: {exc}); every hyper-parameter "
                            "needs a default (scikit-learn's convention).") from exc


def _display(name: str, value) -> dict:
    return {"label": name, "doc": f"The estimator's {name} (its default: {value!r})."}


def _from_sklearn(constraints, name: str, value) -> param.Parameter | None:
    """A declaration from scikit-learn's constraint objects (``Interval``: ``type``,
    ``left``, ``right``, ``closed``; ``StrOptions``: ``options``; ``"boolean"``), read by
    their attributes; None when none of them describes ``value``."""
    for c in constraints:
        if c == "boolean" and isinstance(value, bool):
            return param.Boolean(value, **_display(name, value))
        options = getattr(c, "options", None)
        if isinstance(options, (set, frozenset, list, tuple)) and value in options:
            return param.Selector(default=value, objects=sorted(options, key=str),
                                  **_display(name, value))
        if all(hasattr(c, a) for a in ("type", "left", "right", "closed")) and \
                isinstance(value, (int, float)) and not isinstance(value, bool):
            integer = isinstance(c.type, type) and issubclass(c.type, Integral)
            kind = param.Integer if integer else param.Number
            if integer and not isinstance(value, Integral):
                continue
            low, high = c.left, c.right
            if not integer:
                low, high = (None if b is None else float(b) for b in (low, high))
            inclusive = (c.closed in ("both", "left"), c.closed in ("both", "right"))
            try:
                return kind(value, bounds=(low, high), inclusive_bounds=inclusive,
                            **_display(name, value))
            except ValueError:   # the default lies outside: the declaration is the user's
                return None
    return None


def _from_default(name: str, value) -> param.Parameter | None:
    """A declaration from the default's type; soft bounds from its size (number fields)."""
    if isinstance(value, bool):
        return param.Boolean(value, **_display(name, value))
    if isinstance(value, Integral):
        value = int(value)
        soft = (0, max(10, 4 * value)) if value >= 0 else None
        return param.Integer(value, softbounds=soft, **_display(name, value))
    if isinstance(value, float) and math.isfinite(value):
        soft = (0.0, max(1.0, 10.0 * value)) if value >= 0 else None
        return param.Number(value, softbounds=soft, **_display(name, value))
    if isinstance(value, str) and value.isprintable():
        return param.String(value, **_display(name, value))
    return None


def hyper_parameters(cls: type, defaults: dict[str, Any] | None = None
                     ) -> type[param.Parameterized]:
    """The page's parameter class for ``cls`` (URL keys ``<slug>.<name>``), one parameter
    per hyper-parameter the widgets can set, with ``defaults`` (default: a default
    instance's values)."""
    defaults = _defaults(_instance(cls)) if defaults is None else defaults
    constraints = getattr(cls, "_parameter_constraints", None) or {}
    attributes: dict[str, Any] = {}
    for name, value in defaults.items():
        if name in NOT_WIDGETS or name.startswith("_") or value is None:
            continue
        declared = constraints.get(name)
        parameter = None
        if declared:
            try:   # the project's own constraint objects
                parameter = from_constraint(cls, name, default=value, **_display(name, value))
            except Exception:  # noqa: BLE001 -- not ours: scikit-learn's, or none
                parameter = _from_sklearn(declared, name, value)
        if parameter is None:
            parameter = _from_default(name, value)
        if parameter is not None:
            attributes[name] = parameter
    attributes["__doc__"] = f"Hyper-parameters of {qualified_name(cls)} (its page's widgets)."
    return type(f"{cls.__name__}Settings", (param.Parameterized,), attributes)


def estimator_kinds(estimator) -> tuple[str, ...]:
    """The data kinds an estimator accepts: its scikit-learn type (classifier, regressor),
    or both when it says neither."""
    from sklearn.base import is_classifier, is_regressor

    try:
        classifier, regressor = is_classifier(estimator), is_regressor(estimator)
    except Exception:  # noqa: BLE001 -- not a scikit-learn estimator
        kind = getattr(estimator, "_estimator_type", None)
        classifier, regressor = kind == "classifier", kind == "regressor"
    if classifier and not regressor:
        return ("classification",)
    if regressor and not classifier:
        return ("regression",)
    return ("classification", "regression")


def _single_task(params, random_state, data):
    from sklearn.linear_model import LogisticRegression, Ridge

    from explorer.models import PerTaskEstimator

    base = LogisticRegression() if data.kind == "classification" else Ridge()
    return PerTaskEstimator(estimator=base, random_state=random_state)


def _intro(cls: type, live: bool) -> str:
    doc = inspect.getdoc(cls) or ""
    summary = " ".join(doc.split("\n\n")[0].split())
    how = ("**live**: each step of its `fit_iter` is drawn" if live else
           "**one fit** off the event loop (it has no `fit_iter`), then its matrices")
    return (f"## {escape(cls.__name__)}\n\n"
            + (f"{escape(summary)}\n\n" if summary else "")
            + f"Your estimator `{escape(qualified_name(cls))}`, fitted {how}. Every matrix of "
            "its `task_relationships()` is drawn beside the data's truth of the same key "
            "(or `task_<key>`) with how close they are; the bars compare its per-task test "
            "error with one single-task model per task.")


def model_page(estimator, *, slug: str | None = None) -> ModelPage:
    """The :class:`~explorer.app.kit.ModelPage` of an estimator class (its defaults) or
    instance (its values become the page's defaults; objects among them are kept).

    Raises :class:`ContractError` when the class breaks the contract.
    """
    from explorer.viz.relationships import RelationshipsView

    cls = check_contract(estimator if isinstance(estimator, type) else type(estimator))
    template = _instance(cls) if isinstance(estimator, type) else estimator
    defaults = _defaults(template)
    settings = hyper_parameters(cls, defaults)
    seeded = "random_state" in defaults
    live = callable(getattr(cls, "fit_iter", None))

    def make(params, random_state, data):
        values = {**defaults, **{n: getattr(params, n) for n in public_parameters(params)}}
        if seeded:
            values["random_state"] = random_state
        if hasattr(template, "set_params"):
            from sklearn.base import clone

            return clone(template).set_params(**values)
        return cls(**values)

    return ModelPage(
        slug=slug or slug_for(cls), title=cls.__name__, params=settings, make=make,
        views=lambda: [RelationshipsView()], baselines={"single-task": _single_task},
        kinds=estimator_kinds(template), min_tasks=1, min_per_task=2,
        intro=_intro(cls, live), objective="Objective" if live else "")


def unique_slugs(classes: Sequence[type], taken: Iterable[str]) -> list[str]:
    """A slug per class, none of them in ``taken`` nor repeated (``_2``, ``_3`` ...)."""
    used, slugs = set(taken), []
    for cls in classes:
        base = slug = slug_for(cls)
        k = 2
        while slug in used:
            slug, k = f"{base}_{k}", k + 1
        used.add(slug)
        slugs.append(slug)
    return slugs
