"""A hyper-parameter is declared once, in the estimator (``_parameter_constraints``): the pages'
param classes and CompareSettings derive their types, bounds and choices from it
(:func:`explorer.models.constraints.from_constraint`) and only narrow them.

* every page / Compare parameter is derived or is one of the page's own (listed here with
  the reason), and a derived one stays inside every estimator parameter it feeds;
* the factories build from the declarations (:func:`~explorer.models.constraints.
  estimator_from`); what they build is what the declarations say they feed, the pages' own
  transforms included (a fraction of lambda_max, Trees' method, MTBoost's step);
* no page or Compare entry restates an estimator's default (a default is declared once, in
  the estimator's signature), no module under explorer/app or explorer/compare spells out a
  choice list an estimator declares, and ``from_constraint`` refuses a bound equal to the
  estimator's own.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import types
from pathlib import Path

import param
import pytest
from sklearn.base import BaseEstimator

import explorer
import explorer.models as models
from explorer.app.kit import ModelPage
from explorer.app.pages import PAGES
from explorer.compare.methods import METHODS, CompareSettings
from explorer.data import make_outlier_tasks, make_task_family
from explorer.models import MTDecisionTree, MultiTaskEstimator, RegularizedMTL
from explorer.models.constraints import Interval, Options, accepts, derived_from, from_constraint
from explorer.parameters import public_parameters

SETTINGS = {page.slug: page.params for page in PAGES if page.params is not None}
PAGES_DIR = Path(explorer.__file__).parent / "app" / "pages"
MODEL_PAGES = [page for page in PAGES if isinstance(page, ModelPage)]

#: The parameters that are the page's own, not an estimator's, and why.
OWN = {
    ("trees", "method"): "which model the page runs (a tree or MT-Adaboost)",
    ("outliers", "rows"): "a fraction of lambda_max['lambda_rows'] (OutliersParams' docstring)",
    ("outliers", "columns"): "a fraction of lambda_max['lambda_columns']",
    ("compare", "n_trials"): "the comparison's number of splits",
    **{("compare", m.key): "the method's switch" for m in METHODS},
}


def declared_pairs():
    for slug, owner in SETTINGS.items():
        for name in public_parameters(owner):
            yield slug, name, owner.param[name]


def test_every_setting_is_derived_or_the_pages_own():
    missing = [(slug, name) for slug, name, parameter in declared_pairs()
               if not derived_from(parameter) and (slug, name) not in OWN]
    assert not missing, f"settings neither derived from an estimator nor the page's own: {missing}"
    stale = [key for key in OWN if key[0] not in SETTINGS
             or key[1] not in public_parameters(SETTINGS[key[0]])]
    assert not stale, stale
    assert all(not derived_from(SETTINGS[slug].param[name]) for slug, name in OWN)


@pytest.mark.parametrize("slug, name, parameter",
                         [p for p in declared_pairs() if derived_from(p[2])],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_a_derived_setting_lies_inside_every_estimator_parameter_it_feeds(slug, name,
                                                                          parameter):
    for estimator, key in derived_from(parameter):
        constraints = estimator._parameter_constraints[key]
        assert accepts(constraints, parameter.default), (estimator, key, parameter.default)
        if isinstance(parameter, param.Selector):
            assert all(accepts(constraints, v) for v in parameter.objects), (estimator, key)
            options = [c for c in constraints if isinstance(c, Options)]
            assert options and set(parameter.objects) <= set(options[0].values)
        elif isinstance(parameter, param.Number):   # Integer too
            interval = next(c for c in constraints if isinstance(c, Interval))
            for end, inclusive in zip(parameter.bounds, parameter.inclusive_bounds,
                                      strict=True):
                if end is None:
                    continue
                if inclusive:
                    assert accepts(constraints, end), (estimator, key, parameter.bounds)
                else:   # an open end only where the estimator's is open at the same place
                    assert end in (interval.low, interval.high) and not interval.contains(end)
            low, high = parameter.bounds
            assert (low is None) <= (interval.low is None) and (high is None) <= (
                interval.high is None), (estimator, key, parameter.bounds)
        else:
            assert isinstance(parameter, param.Boolean), type(parameter)


def _estimators(root) -> list:
    """The estimator and the estimators among its parameters (a booster's base)."""
    found = [root]
    for value in root.get_params(deep=False).values():
        if isinstance(value, BaseEstimator):
            found += _estimators(value)
    return found


def _other_value(parameter: param.Parameter, default):
    """A valid value of the setting that differs from ``default``."""
    if isinstance(parameter, param.Selector):
        return next(v for v in parameter.objects if v != default)
    if isinstance(parameter, param.Boolean):
        return not default
    low, high = parameter.bounds
    if isinstance(parameter, param.Integer):
        return default + 1 if high is None or default + 1 <= high else default - 1
    return default * 1.5 if high is None or default * 1.5 <= high else default / 1.5


def _fed(build, settings, name) -> set:
    """(class, parameter) pairs of everything ``build(settings)`` makes that take the value
    of setting ``name`` when it changes."""
    current = getattr(settings, name)
    value = _other_value(settings.param[name], current)

    def flat():   # (class, parameter, value) of everything built, in a fixed order
        return [(type(e), k, v) for root in build(settings) for e in _estimators(root)
                for k, v in e.get_params(deep=False).items()]

    before = flat()
    setattr(settings, name, value)
    after = flat()
    setattr(settings, name, current)

    def has(v):
        return type(v) is type(value) and v == value

    if [a[:2] for a in after] != [b[:2] for b in before]:   # a page's own choice of model
        return {(c, k) for c, k, v in after if has(v)} - {(c, k) for c, k, v in before
                                                           if has(v)}
    return {(cls, key) for (cls, key, v), (_, _, old) in zip(after, before, strict=True)
            if has(v) and not has(old)}


def _contexts(owner):
    """Settings objects over every choice of the page's own selectors (e.g. tree/boosting)."""
    own = [n for n in public_parameters(owner) if not derived_from(owner.param[n])
           and isinstance(owner.param[n], param.Selector)]
    yield owner()
    for name in own:
        for choice in owner.param[name].objects:
            yield owner(**{name: choice})


def _data(kind):
    if kind == "classification":
        return make_task_family(("related", "negated"), n_samples_per_task=20, random_state=0)
    return make_outlier_tasks(n_tasks=4, n_outliers=1, n_features=6, n_shared_features=2,
                              n_samples_per_task=20, random_state=0)


def _page_build(page, data, settings) -> list:
    return [make(settings, 0, data) for make in (page.make, *page.baselines.values())]


def _builders(page) -> list:
    """(settings class, build(settings) -> estimators) of a model page, on each data kind it
    takes, or of Compare (its switches choose methods and feed no estimator)."""
    if page == "compare":
        return [(CompareSettings, lambda settings: [m.make(settings) for m in METHODS])]
    return [(page.params, functools.partial(_page_build, page, _data(kind)))
            for kind in page.kinds]


@pytest.mark.parametrize("page", [*MODEL_PAGES, "compare"],
                         ids=lambda p: getattr(p, "slug", p))
def test_the_factories_build_what_the_settings_declare_they_feed(page):
    owner = page.params if page != "compare" else CompareSettings
    seen = {name: set() for name in public_parameters(owner)
            if not (page == "compare" and isinstance(owner.param[name], param.Boolean))}
    for owner, build in _builders(page):
        for settings in _contexts(owner):
            for name in seen:
                seen[name] |= _fed(build, settings, name)
    for name, fed in seen.items():
        declared = set(derived_from(owner.param[name]))
        assert fed == declared, f"{getattr(page, 'slug', page)}.{name} feeds {fed}, declares " \
                                f"{declared}"


def _restated_defaults(path: Path, module) -> list[str]:
    """``from_constraint(C, "p", default=v)``, ``C(p=v)``, ``estimator_from(s, C, p=v)`` and
    ``make_from(C, p=v)`` calls of ``module`` (source ``path``) whose literal ``v`` is the
    estimator's own default for ``p``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
            continue
        call = node.func.id
        where = {"from_constraint": 0, "estimator_from": 1, "make_from": 0}.get(call)
        target = node.args[where] if where is not None and len(node.args) > where else node.func
        cls = getattr(module, target.id, None) if isinstance(target, ast.Name) else None
        if not inspect.isclass(cls) or not issubclass(cls, BaseEstimator):
            continue
        signature = inspect.signature(cls).parameters
        for keyword in node.keywords:
            key = keyword.arg
            if call == "from_constraint":   # its default= is the page's for parameter args[1]
                key = node.args[1].value if keyword.arg == "default" else None
            if key not in signature:
                continue
            try:
                value = ast.literal_eval(keyword.value)
            except ValueError:
                continue
            default = signature[key].default
            if isinstance(value, bool) == isinstance(default, bool) and value == default:
                found.append(f"{path.name}:{node.lineno} {cls.__name__}.{key} = {value!r}")
    return found


def test_no_page_or_compare_entry_restates_an_estimators_default(tmp_path):
    import explorer.compare.methods

    modules = [importlib.import_module(f"explorer.app.pages.{path.stem}")
               for path in sorted(PAGES_DIR.glob("*.py")) if path.stem != "__init__"]
    found = [line for module in [*modules, explorer.compare.methods]
             for line in _restated_defaults(Path(module.__file__), module)]
    assert not found, found
    # the scan bites
    fake = types.SimpleNamespace(RegularizedMTL=RegularizedMTL)
    source = tmp_path / "page.py"
    source.write_text('x = from_constraint(RegularizedMTL, "lambda_deviation", default=0.1)\n'
                      'y = RegularizedMTL(max_iter=500, tol=1e-3)\n')
    assert [line.split(" ", 1)[1] for line in _restated_defaults(source, fake)] == [
        "RegularizedMTL.lambda_deviation = 0.1", "RegularizedMTL.max_iter = 500"]


def _declared_option_sets() -> list[set]:
    sets = []
    for obj in vars(models).values():
        if inspect.isclass(obj) and issubclass(obj, MultiTaskEstimator):
            for constraints in (obj._parameter_constraints or {}).values():
                sets += [set(c.values) for c in constraints
                         if isinstance(c, Options) and len(c.values) > 1]
    return sets


#: Literal lists of declared choices that are not a setting's choices, and why.
NOT_SETTINGS = {
    ("compare/reproduce.py", frozenset({"ig_j", "ig_u", "ig_m"})):
        "the reproduced table's columns, one fit per criterion in the paper's order",
}


def test_no_app_or_compare_module_spells_out_an_estimators_choice_list():
    options = _declared_option_sets()
    root = Path(explorer.__file__).parent
    found = []
    for path in sorted([*root.glob("app/**/*.py"), *root.glob("compare/**/*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
                strings = {e.value for e in node.elts
                           if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                where = (str(path.relative_to(root)), frozenset(strings))
                if len(strings) > 1 and any(strings <= o for o in options) \
                        and where not in NOT_SETTINGS:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {sorted(strings)}")
    assert not found, found


def test_the_scan_and_the_derivation_bite():
    # the scan sees a copied list
    options = _declared_option_sets()
    copied = ast.parse('x = param.Selector(objects=["corrected", "paper"])')
    node = next(n for n in ast.walk(copied) if isinstance(n, ast.List))
    assert any({e.value for e in node.elts} <= o for o in options)
    # a bound is declared once: the estimator's own may not be repeated on a page
    with pytest.raises(ValueError, match="the bound 1 is the estimator's own"):
        from_constraint(MTDecisionTree, "max_depth", bounds=(1, 8))
    with pytest.raises(ValueError, match=r"teaching bounds \[-1\.0\] not accepted"):
        from_constraint(RegularizedMTL, "lambda_deviation", bounds=(-1.0, 10.0))
    with pytest.raises(ValueError, match=r"choices \['gini'\] not accepted"):
        from_constraint(MTDecisionTree, "criterion", objects=["ig_m", "gini"])
    with pytest.raises(ValueError, match="declares"):
        from_constraint(MTDecisionTree, "max_depth", also=[(RegularizedMTL, "lambda_common")])
    # an inherited open end stays open
    common = from_constraint(RegularizedMTL, "lambda_common", bounds=(None, 1.0))
    assert common.bounds == (0.0, 1.0) and common.inclusive_bounds == (False, True)
    with pytest.raises(ValueError):
        type("P", (param.Parameterized,), {"x": common})(x=0.0)
    assert common.default == 0.01   # the estimator's default, when the page gives none
