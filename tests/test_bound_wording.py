"""One wording for a bound (issue 40, item 1): the estimator's message, the widget's tooltip and
the link's refusal say a range in the words of ``explorer.parameters.describe_range``."""

from __future__ import annotations

import param
import pytest

from explorer.models import MTBoost
from explorer.models.constraints import Integral, Interval, Real, from_constraint
from explorer.parameters import describe_range, expectation, parse_value


@pytest.mark.parametrize("interval, words", [
    (Interval(Integral, 1, None), "an integer >= 1"),
    (Interval(Integral, 1, 9), "an integer in [1, 9]"),
    (Interval(Real, 0, None, closed="neither"), "a finite number > 0"),
    (Interval(Real, None, 1.0, closed="left"), "a finite number < 1"),
    (Interval(Real, 0.001, 1.0, closed="right"), "a finite number in (0.001, 1]"),
    (Interval(Real, None, None), "a finite number"),
])
def test_an_interval_and_its_declaration_say_the_same(interval, words):
    assert interval.describe() == words
    kind = param.Integer if interval.kind is Integral else param.Number
    limits = tuple(None if b is None else (b if kind is param.Integer else float(b))
                   for b in (interval.low, interval.high))
    declared = kind(default=None, allow_None=True, bounds=limits,
                    inclusive_bounds=(interval.low_inclusive, interval.high_inclusive))
    assert expectation(declared) == words       # 1.0 and 1 are worded alike


def test_estimator_message_tooltip_and_link_refusal_word_a_bound_alike():
    from explorer.app.widgets import widget_for

    class Settings(param.Parameterized):
        n_inner = from_constraint(MTBoost, "n_inner", default=5, label="Inner steps",
                                  doc="Alternations in each round.")
        data_seed = param.Integer(0, bounds=(0, 2**32 - 1), label="Data seed")

    words = describe_range(True, 1, None)
    assert words == "an integer >= 1"
    with pytest.raises(ValueError) as estimator:            # the estimator's own check
        MTBoost(n_inner=0).fit([[0.0], [1.0]], [0, 1], [0, 0])
    assert f"MTBoost: n_inner must be {words}; got 0." in str(estimator.value)
    with pytest.raises(ValueError) as link:                  # a link's (or a scenario's) value
        parse_value(Settings, "n_inner", "0", label="mtboost.n_inner")
    assert str(link.value) == f"mtboost.n_inner must be {words}; got '0'."
    settings = Settings()
    field = widget_for(settings, "n_inner")                  # an open range: a field
    assert field.description == "Alternations in each round. An integer >= 1."  # its tooltip
    notices = []
    seed = widget_for(settings, "data_seed", lambda *notice: notices.append(notice))
    seed.refused("-1")                                      # a text the browser refused
    assert notices == [(f"data_seed must be {describe_range(True, 0, 2**32 - 1)}; got '-1'.",
                        "error")]
    assert settings.data_seed == 0
