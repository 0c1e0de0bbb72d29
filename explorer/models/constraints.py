"""Hyper-parameter constraints, declared once per estimator and checked at the start of a fit.

Every estimator of :mod:`explorer.models` has a class attribute ``_parameter_constraints``:
constructor parameter name -> list of constraints, any one of which accepts a value
(scikit-learn's convention; its own validator, ``sklearn.utils._param_validation``, is
private, so this small one stands in). A constraint is one of

* :class:`Interval` ``(Integral or Real, low, high, closed=...)``: a number in a range
  (``None`` is an open end; a Real interval accepts only finite numbers, never ``bool``);
* :class:`Options` ``(*values)``: one of the listed values (compared with ``==``);
* :class:`InstanceOf` ``(*types, description=..., check=...)``: an object of a type, with an
  optional extra test (e.g. "its ``fit`` takes ``sample_weight``");
* ``None``: the value ``None``; ``"boolean"``: ``True``/``False`` (also NumPy's).

:func:`validate_parameters` is the one check; a page's or the Compare page's setting is a
``param`` declaration derived from the same constraints (:func:`from_constraint`: type,
bounds, choices), so the app's widgets and links accept what the estimator accepts.

>>> class Demo:
...     _parameter_constraints = {"n": [Interval(Integral, 1, None)],
...                               "kind": [Options("a", "b")], "seed": [None, Interval(
...                                   Integral, 0, None)]}
...     def __init__(self, n=3, kind="a", seed=None):
...         self.n, self.kind, self.seed = n, kind, seed
...     def get_params(self, deep=True):
...         return {"n": self.n, "kind": self.kind, "seed": self.seed}
>>> validate_parameters(Demo(n=2))
>>> validate_parameters(Demo(n=0))
Traceback (most recent call last):
...
ValueError: Demo: n must be an integer >= 1; got 0.
>>> validate_parameters(Demo(kind="c"))
Traceback (most recent call last):
...
ValueError: Demo: kind must be 'a' or 'b'; got 'c'.
>>> describe_constraints([None, Interval(Integral, 0, None)])
'None or an integer >= 0'
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
import param

from explorer.parameters import describe_range

__all__ = ["BOOLEAN", "COUNT", "NON_NEGATIVE", "POSITIVE", "RANDOM_STATE", "InstanceOf",
           "Integral", "Interval", "Options", "Real", "accepts", "derived_from",
           "describe_constraints", "describe_value", "estimator_from", "from_constraint",
           "validate_parameters"]

#: The constraint of a ``True``/``False`` parameter.
BOOLEAN = "boolean"
_CLOSED = ("both", "left", "right", "neither")


class Interval:
    """A number of type ``kind`` (``Integral`` or ``Real``) between ``low`` and ``high``.

    ``closed``: which ends belong to the interval ("both", "left", "right", "neither");
    ``None`` ends are unbounded. Booleans are never numbers here; a Real must be finite.
    """

    def __init__(self, kind: type, low: float | None, high: float | None, *,
                 closed: str = "both"):
        if kind not in (Integral, Real):
            raise ValueError(f"kind must be Integral or Real; got {kind!r}.")
        if closed not in _CLOSED:
            raise ValueError(f"closed must be one of {_CLOSED}; got {closed!r}.")
        if low is not None and high is not None and low > high:
            raise ValueError(f"low must be <= high; got [{low}, {high}].")
        self.kind, self.low, self.high, self.closed = kind, low, high, closed

    @property
    def low_inclusive(self) -> bool:
        return self.closed in ("both", "left")

    @property
    def high_inclusive(self) -> bool:
        return self.closed in ("both", "right")

    def contains(self, number: float) -> bool:
        """Whether ``number`` lies in the range (its type is not checked)."""
        low_ok = self.low is None or (number >= self.low if self.low_inclusive
                                      else number > self.low)
        high_ok = self.high is None or (number <= self.high if self.high_inclusive
                                        else number < self.high)
        return bool(low_ok and high_ok)

    def is_satisfied_by(self, value: Any) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            return False
        if self.kind is Real and not math.isfinite(value):
            return False
        return self.contains(value)

    def describe(self) -> str:
        """The range in words, as the app's widgets and links word it
        (:func:`explorer.parameters.describe_range`)."""
        return describe_range(self.kind is Integral, self.low, self.high,
                              (self.low_inclusive, self.high_inclusive))

    def __repr__(self) -> str:
        return (f"Interval({self.kind.__name__}, {self.low!r}, {self.high!r}, "
                f"closed={self.closed!r})")


class Options:
    """One of the listed ``values`` (compared with ``==``; ``True`` is not ``1`` here)."""

    def __init__(self, *values: Any):
        if not values:
            raise ValueError("Options needs at least one value.")
        self.values = tuple(values)

    def is_satisfied_by(self, value: Any) -> bool:
        return any(_same(value, option) for option in self.values)

    def describe(self) -> str:
        shown = [repr(v) for v in self.values]
        return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]

    def __repr__(self) -> str:
        return f"Options{self.values!r}"


class InstanceOf:
    """An instance of one of ``types`` for which ``check(value)`` (if given) is true.

    ``description`` says it in words for the message (default: the types' names).
    """

    def __init__(self, *types: type, description: str | None = None,
                 check: Callable[[Any], bool] | None = None):
        self.types, self.check = types, check
        self.description = description or "an instance of " + " or ".join(
            t.__name__ for t in types)

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, self.types) and (self.check is None or bool(self.check(value)))

    def describe(self) -> str:
        return self.description

    def __repr__(self) -> str:
        return f"InstanceOf({', '.join(t.__name__ for t in self.types)})"


def _same(value: Any, option: Any) -> bool:
    """``value == option`` for a value of the option's type (``True`` is not ``1`` here)."""
    is_bool = isinstance(value, (bool, np.bool_))
    if is_bool != isinstance(option, (bool, np.bool_)) or not isinstance(value, type(option)):
        return False
    return bool(value == option)


#: The usual ranges: an integer >= 1 (counts, iterations), a number >= 0, a number > 0.
COUNT = Interval(Integral, 1, None)
NON_NEGATIVE = Interval(Real, 0, None)
POSITIVE = Interval(Real, 0, None, closed="neither")

#: ``random_state``: what ``numpy.random.default_rng`` takes (None, a seed >= 0, a generator).
RANDOM_STATE = [None, Interval(Integral, 0, None),
                InstanceOf(np.random.Generator, np.random.RandomState, np.random.SeedSequence,
                           np.random.BitGenerator,
                           description="a NumPy Generator, RandomState, SeedSequence or "
                                       "BitGenerator")]


def _satisfies(constraint, value: Any) -> bool:
    if constraint is None:
        return value is None
    if constraint == BOOLEAN:
        return isinstance(value, (bool, np.bool_))
    return constraint.is_satisfied_by(value)


def _describe_one(constraint) -> str:
    if constraint is None:
        return "None"
    if constraint == BOOLEAN:
        return "True or False"
    return constraint.describe()


def accepts(constraints: list, value: Any) -> bool:
    """Whether any of ``constraints`` accepts ``value``."""
    return any(_satisfies(c, value) for c in constraints)


def describe_constraints(constraints: list) -> str:
    """What ``constraints`` accept, in words: "a finite number >= 0 or 'auto'"."""
    parts = [_describe_one(c) for c in constraints]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " or " + parts[-1]


def describe_value(value: Any) -> str:
    """``repr`` of a value for a message, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate_parameters(estimator) -> None:
    """Check every constructor parameter against ``type(estimator)._parameter_constraints``.

    Raises ``ValueError`` naming the class, the parameter, what was expected and what came
    (``"MTBoost: n_rounds must be an integer >= 1; got 0."``) for the first refused value.
    A class without ``_parameter_constraints`` (None: a user's estimator) and a parameter
    without a declaration are not checked, as in scikit-learn; every shipped estimator
    declares all its parameters (the contract test compares them with ``get_params()``).
    """
    who = type(estimator).__name__
    declared = getattr(type(estimator), "_parameter_constraints", None) or {}
    for name, value in estimator.get_params(deep=False).items():
        if name in declared and not accepts(declared[name], value):
            raise ValueError(f"{who}: {name} must be {describe_constraints(declared[name])}; "
                             f"got {describe_value(value)}.")


# ------------------------------------------------- a page's setting, derived from them
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


def estimator_from(settings, estimator: type, /, random_state: Any = None, **transforms):
    """``estimator(...)`` built from a page's (or Compare's) ``settings``, as they declare.

    Each setting a :func:`from_constraint` declaration says feeds a parameter of
    ``estimator`` (:func:`derived_from`: the class itself, not a relative) gives it its
    value; a setting derived from no estimator gives its value to the parameter of its own
    name, when ``estimator`` has one. ``random_state`` (the init seed) is passed when given;
    ``transforms`` (parameter -> value) come last and win: what the settings do not say as
    they are (a fraction of ``lambda_max``, a page's choice of model, a base estimator). The
    rest keep the estimator's defaults, written nowhere else.

    >>> import param
    >>> from explorer.models import MTDecisionTree
    >>> class Settings(param.Parameterized):
    ...     depth = from_constraint(MTDecisionTree, "max_depth", default=4)
    ...     criterion = from_constraint(MTDecisionTree, "criterion")
    >>> estimator_from(Settings(), MTDecisionTree, random_state=0)
    MTDecisionTree(max_depth=4, random_state=0)
    >>> estimator_from(Settings(), MTDecisionTree, criterion="ig_j")
    MTDecisionTree(criterion='ig_j', max_depth=4)
    """
    accepted = inspect.signature(estimator).parameters
    values: dict[str, Any] = {}
    for name in settings.param:
        if name == "name":
            continue
        fed = derived_from(settings.param[name])
        keys = [key for owner, key in fed if owner is estimator] if fed else [name]
        values.update({key: getattr(settings, name) for key in keys if key in accepted})
    if random_state is not None:
        values["random_state"] = random_state
    return estimator(**{**values, **transforms})
