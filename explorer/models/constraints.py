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

:func:`validate_parameters` is the one check; the app derives its widgets (type, bounds,
choices) from the same declaration (:func:`explorer.parameters.from_constraint`).

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

import math
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np

__all__ = ["BOOLEAN", "COUNT", "NON_NEGATIVE", "POSITIVE", "RANDOM_STATE", "InstanceOf",
           "Integral", "Interval", "Options", "Real", "accepts", "describe_constraints",
           "describe_value", "validate_parameters"]

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
        what = "an integer" if self.kind is Integral else "a finite number"
        low, high = self.low, self.high
        if low is None and high is None:
            return what
        if high is None:
            return f"{what} {'>=' if self.low_inclusive else '>'} {low}"
        if low is None:
            return f"{what} {'<=' if self.high_inclusive else '<'} {high}"
        return (f"{what} in {'[' if self.low_inclusive else '('}{low}, "
                f"{high}{']' if self.high_inclusive else ')'}")

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
