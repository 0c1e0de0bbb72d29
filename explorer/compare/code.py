"""The Python source of a ``compare(...)`` call that reproduces a result ("Show code").

>>> from explorer.models import MultiTaskRidge
>>> estimator_code(MultiTaskRidge(lambda_ridge=0.5), set())
'MultiTaskRidge(lambda_ridge=0.5)'
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping

import numpy as np

__all__ = ["estimator_code", "comparison_code", "merged_imports", "plain_value"]


def plain_value(value):
    """NumPy scalars and arrays -> Python numbers and lists (for readable, exact repr)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return type(value)(plain_value(v) for v in value)
    if isinstance(value, dict):
        return {k: plain_value(v) for k, v in value.items()}
    return value


def _public_module(cls) -> str:
    """The shortest module path that exports ``cls`` (``sklearn.linear_model``, not
    ``sklearn.linear_model._ridge``)."""
    parts = cls.__module__.split(".")
    for end in range(1, len(parts) + 1):
        path = ".".join(parts[:end])
        try:
            module = importlib.import_module(path)
        except ImportError:   # pragma: no cover - a parent that cannot import alone
            continue
        if getattr(module, cls.__name__, None) is cls:
            return path
    return cls.__module__


def estimator_code(estimator, imports: set[str],
                   expressions: Mapping[str, str] | None = None) -> str:
    """``ClassName(param=value, ...)`` with the parameters that differ from the defaults;
    the import lines it needs are added to ``imports``. ``expressions`` (parameter name ->
    Python text) writes those parameters as the given expressions instead of their values
    (e.g. ``0.2 * lambda_max['lambda_rows']`` where the page's slider is a fraction)."""
    expressions = expressions or {}
    cls = type(estimator)
    imports.add(f"from {_public_module(cls)} import {cls.__name__}")
    defaults = {name: p.default for name, p in inspect.signature(cls.__init__).parameters.items()
                if p.default is not inspect.Parameter.empty}
    arguments = []
    # a user's class without get_params: the constructor's parameters it stores as given
    given = (estimator.get_params(deep=False) if hasattr(estimator, "get_params") else
             {name: getattr(estimator, name) for name in defaults if hasattr(estimator, name)})
    for name, value in given.items():
        if name in expressions:
            arguments.append(f"{name}={expressions[name]}")
            continue
        if name in defaults and _same(defaults[name], value):
            continue
        if hasattr(value, "get_params") and not isinstance(value, type):
            text = estimator_code(value, imports)
        else:
            text = repr(plain_value(value))
        arguments.append(f"{name}={text}")
    return f"{cls.__name__}({', '.join(arguments)})"


def _same(default, value) -> bool:
    try:
        return bool(default is value or (type(default) is type(value) and default == value))
    except (TypeError, ValueError):   # arrays and the like
        return False


def merged_imports(lines) -> list[str]:
    """``from m import a`` and ``from m import b`` -> ``from m import a, b``; sorted."""
    names: dict[str, set[str]] = {}
    other = []
    for line in lines:
        module, sep, name = line.partition(" import ")
        if line.startswith("from ") and sep and "," not in name and " as " not in name:
            names.setdefault(module, set()).add(name.strip())
        else:
            other.append(line)
    merged = [f"{module} import {', '.join(sorted(found))}" for module, found in names.items()]
    return sorted(merged + other)


def comparison_code(estimators: dict, settings: dict, *, dataset: str = "dataset",
                    imports=()) -> str:
    """Source of ``estimators = {...}; result = compare(estimators, <dataset>, ...)``.

    Parameters
    ----------
    estimators : dict of str -> estimator
    settings : dict
        ``n_trials, train_fraction, metric, param_grid, cv, random_state`` as recorded.
    dataset : str
        A Python expression that builds the data set (the caller knows where it came from).
    imports : iterable of str
        Import lines that expression needs.
    """
    lines_import = {"from explorer.compare import compare", *imports}
    entries = [f"    {name!r}: {estimator_code(est, lines_import)},"
               for name, est in estimators.items()]
    metric = settings.get("metric", "auto")
    if isinstance(metric, list) and len(metric) == 1:
        metric = metric[0]
    arguments = [f"n_trials={settings.get('n_trials', 10)!r}",
                 f"train_fraction={settings.get('train_fraction', 0.2)!r}",
                 f"metric={plain_value(metric)!r}"]
    if settings.get("param_grid"):
        arguments += [f"param_grid={plain_value(settings['param_grid'])!r}",
                      f"cv={settings.get('cv', 5)!r}"]
    arguments.append(f"random_state={settings.get('random_state', 0)!r}")
    call = ",\n                 ".join(["estimators", dataset, *arguments])
    return "\n".join([*merged_imports(lines_import), "", "estimators = {", *entries, "}",
                      f"result = compare({call})", "print(result.to_markdown())", ""])
