"""Text <-> value for ``param`` declarations: the one parser and validator of untrusted input.

Every tunable of the project (a catalog entry's generator parameters, a model page's
hyper-parameters, the scenario's seeds) is declared once as a :class:`param.Parameterized`
class: type, bounds, choices, doc, label. This module turns untrusted *text* (a URL query
value, a CLI ``--param key=value``, a number field) into a value of that declaration and
lets the declaration judge it; the error message names the argument, what was expected
(derived from the declaration) and what came.

Nothing is evaluated: text becomes a number only through ``int``/``float`` after a format
check, and a choice only by comparing with the declared objects.

A page's hyper-parameter is not declared again: it is derived from the estimator's
``_parameter_constraints`` (:func:`explorer.models.constraints.from_constraint`). This module
imports nothing of the project: the catalog of data sets, the models' layer above it, the
comparison and the app all use it.

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

A bound is worded once, by :func:`describe_range`: the estimator's message
(:meth:`explorer.models.constraints.Interval.describe`), the widget's tooltip and the link's
refusal (:func:`expectation`) all say "an integer >= 1" or "a finite number in [0.001, 1]".
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any

import param

__all__ = ["describe", "describe_range", "encode_value", "expectation", "parse_value",
           "parse_values", "public_parameters", "MAX_TEXT", "FORMATS"]

#: Longest text accepted for one value (a URL value, a CLI value, a text field).
MAX_TEXT = 200
_INT_RE = re.compile(r"^[+-]?\d{1,15}$")
_FLOAT_RE = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$")
#: The text an integer and a number may be typed as (the patterns are JavaScript's too: the
#: app's number fields check a typed text with them before they send it).
FORMATS = {"integer": _INT_RE.pattern, "number": _FLOAT_RE.pattern}
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")


def public_parameters(parameterized) -> list[str]:
    """Names of the declared parameters of a class or instance (``name`` excluded)."""
    return [name for name in parameterized.param if name != "name"]


def describe(raw: Any) -> str:
    """``repr`` of an untrusted value, cut to 40 characters (for messages)."""
    text = repr(raw)
    return text if len(text) <= 40 else text[:37] + "..."


def _number(bound: float) -> str:
    """A bound as the user reads it: ``1`` for 1 and 1.0 alike, ``0.001``, ``1e-08``."""
    value = float(bound)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def describe_range(integer: bool, low: float | None, high: float | None,
                   inclusive: tuple[bool, bool] = (True, True)) -> str:
    """The one wording of a bound: what an integer (or a finite number) between ``low`` and
    ``high`` is, in words; ``None`` is an open end, ``inclusive`` says which ends belong.

    >>> describe_range(True, 1, None)
    'an integer >= 1'
    >>> describe_range(False, 0.001, 1.0)
    'a finite number in [0.001, 1]'
    >>> describe_range(False, 0, None, (False, True))
    'a finite number > 0'
    >>> describe_range(True, None, None)
    'an integer'
    """
    what = "an integer" if integer else "a finite number"
    low_in, high_in = inclusive
    if low is None and high is None:
        return what
    if high is None:
        return f"{what} {'>=' if low_in else '>'} {_number(low)}"
    if low is None:
        return f"{what} {'<=' if high_in else '<'} {_number(high)}"
    return (f"{what} in {'[' if low_in else '('}{_number(low)}, "
            f"{_number(high)}{']' if high_in else ')'}")


def _range_of(parameter) -> str:
    low, high = getattr(parameter, "bounds", None) or (None, None)
    inclusive = tuple(getattr(parameter, "inclusive_bounds", None) or (True, True))
    return describe_range(isinstance(parameter, param.Integer), low, high, inclusive)


def expectation(parameter: param.Parameter) -> str:
    """What the declaration accepts, in words (e.g. 'an integer in [1, 9]'); a number's
    bound in :func:`describe_range`'s words."""
    if isinstance(parameter, param.Boolean):
        return "true or false"
    if isinstance(parameter, param.Number):   # param.Integer included
        return _range_of(parameter)
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
