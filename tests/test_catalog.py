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


def test_preset_copies_agree_and_name_real_pages():
    # data/ (the layout's scenario folder) and the package copy (what an installed wheel has)
    from pathlib import Path

    from explorer.app.pages import PAGES

    root = Path(__file__).resolve().parents[1]
    shipped = sorted((root / "explorer" / "data" / "presets").glob("*.json"))
    assert [p.name for p in shipped] == sorted(p.name for p in (root / "data").glob("*.json"))
    for path in shipped:
        assert path.read_text() == (root / "data" / path.name).read_text(), path.name
        preset = load_preset(path.stem)
        assert preset["dataset"] in CATALOG and preset["page"] in {p.slug for p in PAGES}
        assert preset["title"]
