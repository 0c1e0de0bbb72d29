"""Text <-> value for ``param`` declarations: the one parser and validator of untrusted input.

Every tunable of the project (a catalog entry's generator parameters, a model page's
hyper-parameters, the scenario's seeds) is declared once as a :class:`param.Parameterized`
class: type, bounds, choices, doc, label. This module turns untrusted *text* (a URL query
value, a CLI ``--param key=value``, a number field) into a value of that declaration and
lets the declaration judge it; the error message names the argument, what was expected
(derived from the declaration) and what came.

Nothing is evaluated: text becomes a number only through ``int``/``float`` after a format
check, and a choice only by comparing with the declared objects.

A page's hyper-parameter is not declared again: :func:`from_constraint` derives its type,
bounds and choices from the estimator's ``_parameter_constraints``
(:mod:`explorer.models.constraints`); the page adds only what is about display (label,
doc, the subset of choices it shows, a narrower teaching range).

>>> import param
>>> class Demo(param.Parameterized):
...     n = param.Integer(3, bounds=(1, 9), doc="How many.")
...     kind = param.Selector(default="a", objects=["a", "b"])
>>> parse_values(Demo, {"n": "4", "kind": "b"})
{'n': 4, 'kind': 'b'}
>>> parse_values(Demo, {"n": "40"})
Traceback (most recent call last):
...
ValueError: n must be an integer in [1, 9]; got '40'.
>>> encode_value(Demo.param.n, 4)
'4'
"""

from __future__ import annotations

import copy
import inspect
import math
import re
from collections.abc import Mapping
from typing import Any

import param

__all__ = ["derived_from", "describe", "encode_value", "expectation", "from_constraint",
           "parse_value", "parse_values", "public_parameters", "MAX_TEXT"]

#: Longest text accepted for one value (a URL value, a CLI value, a text field).
MAX_TEXT = 200
_INT_RE = re.compile(r"^[+-]?\d{1,15}$")
_FLOAT_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$")
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def public_parameters(parameterized) -> list[str]:
    """Names of the declared parameters of a class or instance (``name`` excluded)."""
    return [name for name in parameterized.param if name != "name"]


def describe(raw: Any) -> str:
    """``repr`` of an untrusted value, cut to 40 characters (for messages)."""
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."


def _bounds_text(parameter) -> str:
    low, high = getattr(parameter, "bounds", None) or (None, None)
    if low is None and high is None:
        return ""
    return f" in [{'-inf' if low is None else low}, {'inf' if high is None else high}]"


def expectation(parameter: param.Parameter) -> str:
    """What the declaration accepts, in words (e.g. 'an integer in [1, 9]')."""
    if isinstance(parameter, param.Boolean):
        return "true or false"
    if isinstance(parameter, param.Integer):
        return "an integer" + _bounds_text(parameter)
    if isinstance(parameter, param.Number):
        return "a finite number" + _bounds_text(parameter)
    if isinstance(parameter, param.Selector):
        return f"one of {[str(o) for o in parameter.objects]}"
    if isinstance(parameter, param.String):
        doc = " ".join((parameter.doc or "").split())
        return f"text ({doc.rstrip('.')})" if doc else "text"
    return type(parameter).__name__


def _fail(name: str, parameter, raw: Any) -> ValueError:
    return ValueError(f"{name} must be {expectation(parameter)}; got {describe(raw)}.")


def _convert(name: str, parameter: param.Parameter, raw: Any) -> Any:
    """Text (or an already typed value) -> a value of the parameter's type; no bounds yet."""
    if isinstance(raw, str):
        if len(raw) > MAX_TEXT:
            raise ValueError(f"{name} must be at most {MAX_TEXT} characters; got "
                             f"{len(raw)}.")
        text = raw.strip()
    else:
        text = None
    if isinstance(parameter, param.Boolean):
        if isinstance(raw, bool):
            return raw
        if text is not None and text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise _fail(name, parameter, raw)
    if isinstance(parameter, param.Integer):
        if isinstance(raw, bool):
            raise _fail(name, parameter, raw)
        if isinstance(raw, int):
            return raw
        if isinstance(raw, float) and math.isfinite(raw) and raw == int(raw):
            return int(raw)
        if text is not None and _INT_RE.match(text):
            return int(text)
        raise _fail(name, parameter, raw)
    if isinstance(parameter, param.Number):
        if isinstance(raw, bool):
            raise _fail(name, parameter, raw)
        if isinstance(raw, (int, float)):
            value = float(raw)
        elif text is not None and _FLOAT_RE.match(text):
            value = float(text)
        else:
            raise _fail(name, parameter, raw)
        if not math.isfinite(value):
            raise _fail(name, parameter, raw)
        return value
    if isinstance(parameter, param.Selector):
        for choice in parameter.objects:
            if raw == choice or (text is not None and text == str(choice)):
                return choice
        raise _fail(name, parameter, raw)
    if isinstance(parameter, param.String):
        if text is None or not raw.isprintable():
            raise _fail(name, parameter, raw)
        return raw
    raise ValueError(f"{name}: parameters of type {type(parameter).__name__} cannot be set "
                     "from text.")


def parse_value(owner, name: str, raw: Any, *, label: str | None = None) -> Any:
    """Parse ``raw`` for parameter ``name`` of ``owner`` (class or instance) and validate it.

    The declaration is the judge: after the text is converted to the parameter's type, the
    parameter's own validation (bounds, choices, regex) decides. Raises ``ValueError``
    naming ``label`` (default ``name``; e.g. the URL key), the expectation and what came.
    """
    if name not in public_parameters(owner):
        cls = owner if isinstance(owner, type) else type(owner)
        raise ValueError(f"{describe(name)} is not a parameter here; expected one of "
                         f"{public_parameters(cls)}.")
    parameter = owner.param[name]
    label = label or name
    value = _convert(label, parameter, raw)
    try:
        _validate(parameter, name, value)
    except ValueError:
        raise _fail(label, parameter, raw) from None
    return value


def _validate(parameter: param.Parameter, name: str, value: Any) -> None:
    """Raise ``ValueError`` unless the declaration accepts ``value``.

    param validates on assignment only (it has no public ``validate``, holoviz/param#300),
    so the value is assigned to a copy of the parameter on a throwaway class: the
    declaration judges, and nothing the user sees is touched.
    """
    probe = type("Probe", (param.Parameterized,), {name: copy.copy(parameter)})
    setattr(probe, name, value)


def parse_values(owner, values: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`parse_value` for each item; the first bad one raises."""
    return {name: parse_value(owner, name, raw) for name, raw in values.items()}


def encode_value(parameter: param.Parameter, value: Any) -> str:
    """The text form of ``value`` that :func:`parse_value` reads back."""
    if isinstance(parameter, param.Boolean):
        return "true" if value else "false"
    if isinstance(parameter, param.Integer):
        return str(int(value))
    if isinstance(parameter, param.Number):
        return repr(float(value))
    return str(value)


# ---------------------------------------------------------------- from the estimator
#: ``metadata`` key of a derived parameter: the ((estimator class, parameter name), ...) it
#: feeds (see :func:`derived_from`).
DERIVED_FROM = "derived_from"


def derived_from(parameter: param.Parameter) -> tuple[tuple[type, str], ...]:
    """The (estimator class, parameter name) pairs a :func:`from_constraint` parameter feeds
    (empty for a parameter of the page's own)."""
    return tuple((parameter.metadata or {}).get(DERIVED_FROM, ()))


def from_constraint(estimator: type, name: str, *, also: tuple = (), default: Any = None,
                    bounds: tuple | None = None, objects: list | None = None,
                    **display) -> param.Parameter:
    """A ``param`` declaration for ``estimator``'s parameter ``name``, derived from its
    ``_parameter_constraints``: ``param.Integer`` / ``param.Number`` for an interval,
    ``param.Selector`` for options, ``param.Boolean`` for a flag.

    Parameters
    ----------
    estimator, name : the estimator class and the constructor parameter the setting feeds
    also : sequence of (estimator class, name)
        Further parameters the same setting feeds (e.g. a baseline's); the derived range is
        checked against each.
    default : the page's default (default: the estimator's constructor default)
    bounds : (low, high) or None
        A narrower teaching range; ``None`` at an end keeps the estimator's bound there. A
        bound equal to the estimator's own is refused: it is declared once, there.
    objects : list or None
        The subset of the declared choices the page shows (default: all of them).
    **display : label, doc, precedence ... passed to the ``param`` constructor.

    >>> from explorer.models import MTDecisionTree
    >>> depth = from_constraint(MTDecisionTree, "max_depth", default=4, bounds=(None, 8))
    >>> type(depth).__name__, depth.bounds, derived_from(depth)[0][1]
    ('Integer', (1, 8), 'max_depth')
    >>> from_constraint(MTDecisionTree, "criterion").objects
    ['ig_m', 'ig_j', 'ig_u']
    """
    from .models.constraints import BOOLEAN, Integral, Interval, Options, accepts

    targets = ((estimator, name), *also)
    declared = [owner._parameter_constraints[key] for owner, key in targets]
    who = f"{estimator.__name__}.{name}"
    if default is None:
        default = inspect.signature(estimator).parameters[name].default
    metadata = {**display.pop("metadata", {}), DERIVED_FROM: targets}
    intervals = [c for c in declared[0] if isinstance(c, Interval)]
    options = [c for c in declared[0] if isinstance(c, Options)]

    def check_accepted(values, what):
        for (owner, key), constraints in zip(targets, declared, strict=True):
            refused = [v for v in values if not accepts(constraints, v)]
            if refused:
                raise ValueError(f"{who}: {what} {refused} not accepted by "
                                 f"{owner.__name__}.{key}.")

    if objects is not None or (options and not intervals):
        choices = list(objects if objects is not None else options[0].values)
        check_accepted(choices, "choices")
        return param.Selector(default=default, objects=choices, metadata=metadata, **display)
    if BOOLEAN in declared[0]:
        return param.Boolean(default, metadata=metadata, **display)
    if len(intervals) != 1:
        raise ValueError(f"{who}: cannot derive a parameter from {declared[0]}.")
    interval = intervals[0]
    low, high = bounds or (None, None)
    for given, own in ((low, interval.low), (high, interval.high)):
        if given is not None and own is not None and given == own:
            raise ValueError(f"{who}: the bound {given} is the estimator's own; pass None "
                             "there (a bound is declared once, in the estimator).")
    check_accepted([b for b in (low, high) if b is not None], "teaching bounds")
    for (owner, key), constraints in zip(targets[1:], declared[1:], strict=True):
        other = next((c for c in constraints if isinstance(c, Interval)), None)
        same_low = other is not None and (other.low, other.low_inclusive) == (
            interval.low, interval.low_inclusive)
        same_high = other is not None and (other.high, other.high_inclusive) == (
            interval.high, interval.high_inclusive)
        if other is None or other.kind is not interval.kind or (low is None and not same_low) \
                or (high is None and not same_high):
            raise ValueError(f"{who}: {owner.__name__}.{key} declares {constraints}; give "
                             "the bounds where the two differ.")
    inclusive = (interval.low_inclusive if low is None else True,
                 interval.high_inclusive if high is None else True)
    limits = (interval.low if low is None else low, interval.high if high is None else high)
    kind = param.Integer if interval.kind is Integral else param.Number
    if kind is param.Number:   # a float slider's ends: floats
        limits = tuple(None if b is None else float(b) for b in limits)
    return kind(default, bounds=limits, inclusive_bounds=inclusive, metadata=metadata,
                **display)
