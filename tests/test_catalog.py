import numpy as np
import param
import pytest

from explorer.data import CATALOG, list_presets, load_preset, make_dataset
from explorer.data.catalog import MAX_ROWS, MAX_TASKS, MAX_VALUES
from explorer.parameters import public_parameters


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_entry_builds_and_seeds(name):
    a = make_dataset(name, random_state=1)
    b = make_dataset(name, random_state=1)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.task_names and len(a.task_names) == a.n_tasks


def _bad_value(parameter):
    if isinstance(parameter, param.Boolean):
        return "maybe"
    if isinstance(parameter, param.Number):      # Integer too
        return "abc"
    if isinstance(parameter, param.Selector):
        return "nope"
    return "<img src=x onerror=alert(1)>"


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_entry_rejects_bad_values_naming_the_parameter(name):
    params = CATALOG[name].params
    for pname in public_parameters(params):
        bad = _bad_value(params.param[pname])
        with pytest.raises(ValueError, match=rf"^{pname} must be .*; got "):
            make_dataset(name, {pname: bad})


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_entry_out_of_bounds_is_refused(name):
    params = CATALOG[name].params
    for pname in public_parameters(params):
        bounds = getattr(params.param[pname], "bounds", None)
        if bounds and bounds[1] is not None:
            with pytest.raises(ValueError, match=rf"{pname} must be .* in \["):
                make_dataset(name, {pname: str(bounds[1] * 10 + 1)})


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_entry_at_its_maxima_is_refused_by_the_budget_or_builds_within_it(name):
    entry = CATALOG[name]
    maxima = {}
    for pname in public_parameters(entry.params):
        bounds = getattr(entry.params.param[pname], "bounds", None)
        if bounds and bounds[1] is not None:
            maxima[pname] = bounds[1]
    try:
        data = make_dataset(name, maxima, random_state=0)
    except ValueError as exc:
        # the message names the limit that was hit, with its number
        limits = [f"the limit is {MAX_VALUES:,} values", f"the limit is {MAX_ROWS:,} rows",
                  f"the limit is {MAX_TASKS:,} tasks"]
        assert any(limit in str(exc) for limit in limits), str(exc)
        return
    assert data.n_samples * data.n_features <= MAX_VALUES
    assert data.n_samples <= MAX_ROWS and data.n_tasks <= MAX_TASKS
    rows, features, tasks = entry.size(entry.values(maxima))
    assert data.n_samples <= rows and data.n_features <= features   # an upper bound


def test_unknown_name_and_param():
    with pytest.raises(ValueError, match="name"):
        make_dataset("nope")
    with pytest.raises(ValueError, match="bogus"):
        make_dataset("task_family", {"bogus": 1})


def test_seeded_entries_change_with_seed():
    a = make_dataset("task_family", random_state=1)
    b = make_dataset("task_family", random_state=2)
    assert not np.array_equal(a.X, b.X)


def test_presets():
    names = list_presets()
    assert names
    for n in names:
        p = load_preset(n)
        make_dataset(p["dataset"], p["params"], random_state=p["data_seed"])
    with pytest.raises(ValueError, match="name"):
        load_preset("does-not-exist")


def test_scenarios_live_in_data_scenarios_and_the_package_copy_is_generated():
    # data/scenarios is the one source; the package's copy (what a wheel ships) is written by
    # sync_package_scenarios and must equal it byte for byte
    from pathlib import Path

    from explorer.app.pages import PAGES
    from explorer.data.catalog import _scenario_dir, sync_package_scenarios

    root = Path(__file__).resolve().parents[1]
    assert _scenario_dir() == root / "data" / "scenarios"
    assert not list((root / "data").glob("*.json"))           # no scenario left at the old place
    assert not (root / "explorer" / "data" / "presets").exists()
    assert sync_package_scenarios(check=True) == [], (
        "explorer/data/scenarios differs from data/scenarios; run: python -c \"from "
        "explorer.data.catalog import sync_package_scenarios as s; s()\"")
    for name in list_presets():
        preset = load_preset(name)
        assert preset["dataset"] in CATALOG and preset["page"] in {p.slug for p in PAGES}
        assert preset["title"] and preset["story"]
