import numpy as np
import pytest

from explorer.data import CATALOG, list_presets, load_preset, make_dataset


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_entry_builds_and_seeds(name):
    a = make_dataset(name, random_state=1)
    b = make_dataset(name, random_state=1)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.task_names and len(a.task_names) == a.n_tasks


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_entry_rejects_bad_values(name):
    spec = CATALOG[name].params[0]
    bad = {"int": "abc", "float": "abc", "choice": "nope", "bool": "maybe", "text": 3}[spec.kind]
    with pytest.raises(ValueError, match=spec.name):
        make_dataset(name, {spec.name: bad})


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
