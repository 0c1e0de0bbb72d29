"""ExplorerState without a browser: building, rebuilding, errors, URL query, CSV upload."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import numpy as np
import param
import pytest

from explorer.app import hidden_pages_rule
from explorer.app.state import UPLOAD_LIMIT_BYTES, UPLOADED, ExplorerState
from explorer.data import MultiTaskDataset
from explorer.data.catalog import CATALOG, make_dataset
from explorer.parameters import parse_value, public_parameters

PAGES = ("tasks", "shared_vs_separate")


def make_state(**params) -> ExplorerState:
    return ExplorerState(pages=PAGES, **params)


def bounded_int_spec(name: str) -> param.Integer:
    """An int parameter of catalog entry ``name`` with a finite upper bound."""
    params = CATALOG[name].params
    for pname in public_parameters(params):
        spec = params.param[pname]
        if isinstance(spec, param.Integer) and spec.bounds and spec.bounds[1] is not None:
            return spec
    raise AssertionError(f"{name} has no bounded int parameter")


def same_data(a: MultiTaskDataset, b: MultiTaskDataset) -> bool:
    return (a.X.shape == b.X.shape and np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
            and np.array_equal(a.task, b.task))


def test_defaults_build_and_split():
    state = make_state()
    assert state.error == ""
    assert state.dataset is not None and state.dataset.n_tasks >= 2
    assert state.train.n_samples + state.test.n_samples == state.dataset.n_samples
    assert state.data_params == CATALOG["task_family"].defaults()
    assert "tasks" in state.summary()


def test_spec_change_rebuilds():
    state = make_state()
    first = state.dataset
    state.data_seed = 5
    assert not same_data(first, state.dataset)
    again = make_state(data_seed=5)
    assert same_data(again.dataset, state.dataset)

    state.dataset_name = "outlier_tasks"
    assert state.error == ""
    assert state.dataset.kind == "regression"
    assert set(state.data_params) == set(CATALOG["outlier_tasks"].defaults())
    expected = make_dataset("outlier_tasks", {}, random_state=5)
    assert same_data(state.dataset, expected)


def test_train_fraction_resplits_without_regenerating():
    state = make_state()
    dataset, n_train = state.dataset, state.train.n_samples
    state.train_fraction = 0.3
    assert state.dataset is dataset
    assert state.train.n_samples < n_train


def test_bad_param_keeps_old_data_and_sets_error():
    state = make_state()
    spec = bounded_int_spec("task_family")
    before = state.dataset
    state.set_data_param(spec.name, spec.bounds[1] + 1)  # out of the spec's bounds
    assert state.dataset is before
    assert spec.name in state.error
    level, message = state.notification
    assert level == "error" and spec.name in message
    assert state.current_params()[spec.name] == spec.default   # the refused value is not kept
    assert state.to_query()["d." + spec.name] == str(spec.default)
    # and it keeps working: a good value builds again and clears the error
    state.set_data_param(spec.name, spec.default + 1)
    assert state.error == ""


def test_query_round_trip_reproduces_data():
    sender = make_state(dataset_name="outlier_tasks", data_seed=11, init_seed=3,
                        train_fraction=0.5, page="shared_vs_separate")
    spec = bounded_int_spec("outlier_tasks")
    sender.set_data_param(spec.name, min(spec.default + 1, spec.bounds[1]))
    assert sender.error == ""
    url = "?" + urlencode(sender.to_query())

    receiver = make_state()
    assert receiver.apply_query_items(parse_qsl(url[1:])) == []
    assert receiver.error == ""
    assert same_data(receiver.dataset, sender.dataset)
    assert same_data(receiver.train, sender.train)
    assert (receiver.init_seed, receiver.page, receiver.train_fraction) == (3, "shared_vs_separate",
                                                                            0.5)
    assert receiver.to_query() == sender.to_query()


def test_tampered_query_reports_and_keeps_working():
    state = make_state()
    before = state.dataset
    spec = bounded_int_spec("task_family")
    problems = state.from_query({
        "data": "../../etc/passwd",
        "data_seed": "-3",
        "init_seed": "__import__('os').system('true')",
        "train": "nan",
        "page": "<script>alert(1)</script>",
        "d.not_a_param": "1",
        "d." + spec.name: "[1, 2]",
        "lam": "0.3",  # no such setting
        "trees.max_depth": "1000",  # a page's setting, out of its bounds
        "trees.criterion": "evil",
    })
    assert len(problems) == 10
    assert state.dataset is before and state.error == ""
    assert state.data_seed == 0 and state.page == "tasks"
    level, message = state.notification
    assert level == "warning" and "could not be used" in message


def test_query_partial_values_apply_the_good_ones():
    state = make_state()
    problems = state.from_query({"data_seed": "7", "init_seed": "x"})
    assert state.data_seed == 7 and state.init_seed == 0
    assert len(problems) == 1 and "init_seed" in problems[0]


def test_page_values_from_a_link_are_checked_and_applied_when_the_page_is_built():
    from explorer.app.pages import PAGES

    state = ExplorerState()
    problems = state.from_query({"trees.max_depth": "3", "trees.criterion": "ig_u",
                                 "outliers.rows": "2.0"})
    assert len(problems) == 1 and "outliers.rows must be a finite number in [0.001, 1]" \
        in problems[0]
    assert state.to_query()["trees.max_depth"] == "3"          # kept for the page to come
    trees = next(p for p in PAGES if p.slug == "trees")
    page = trees.build(state)
    assert (page.params.max_depth, page.params.criterion) == (3, "ig_u")
    page.params.max_depth = 5                                    # a change rewrites the link
    assert state.to_query()["trees.max_depth"] == "5"
    assert "outliers.rows" not in state.to_query()


def test_parse_value_kinds():
    cls = CATALOG["clustered_tasks"].params
    assert parse_value(cls, "informative", "false") is False
    assert parse_value(cls, "spread", "1e-1") == 0.1
    assert parse_value(CATALOG["digits_tasks"].params, "protocol", "pairs") == "pairs"
    with pytest.raises(ValueError, match="spread must be a finite number"):
        parse_value(cls, "spread", "inf")
    with pytest.raises(ValueError, match="protocol must be one of"):
        parse_value(CATALOG["digits_tasks"].params, "protocol", "z")
    with pytest.raises(ValueError, match="n_tasks must be an integer"):
        parse_value(cls, "n_tasks", "1.5")


def _csv_bytes() -> tuple[bytes, MultiTaskDataset]:
    source = make_dataset("task_family", {}, random_state=2)
    return source.to_csv().encode(), source


def test_csv_upload_good():
    state = make_state()
    data, source = _csv_bytes()
    assert state.load_uploaded_csv(data, "C:\\Users\\me\\../my tasks.csv")
    assert state.dataset_name == UPLOADED and state.error == ""
    assert state.uploaded_name == "my tasks.csv"
    assert state.dataset.n_tasks == source.n_tasks
    np.testing.assert_allclose(state.dataset.X, source.X)
    assert state.notification[0] == "success"
    # an uploaded file cannot travel in a link: the receiver is told so
    receiver = make_state()
    problems = receiver.from_query(state.to_query())
    assert any("upload" in p for p in problems)
    assert receiver.dataset_name == "task_family"


@pytest.mark.parametrize("data, filename, expected", [
    (b"a,b\n1,2\n", "x.csv", "task"),                  # no task column
    (b"task,y,x\n0,1,oops\n", "x.csv", "numeric"),     # non-numeric feature
    (b"", "x.csv", "empty"),
    (b"task,y,x0\n" + b"0,1,2\n" * 200_001, "huge.csv", "the limit is 200,000 rows"),
    (b"task,y,x\n0,1,2\n", "evil.exe", ".csv"),
])
def test_csv_upload_bad_keeps_data(data, filename, expected):
    state = make_state()
    before = state.dataset
    assert not state.load_uploaded_csv(data, filename)
    assert state.dataset is before and state.dataset_name == "task_family"
    level, message = state.notification
    assert level == "error" and expected in message


def test_a_one_task_upload_loads_with_a_note_on_what_needs_two_tasks():
    state = make_state()
    rows = "".join(f"0,{i % 2},{i * 0.1}\n" for i in range(40))
    assert state.load_uploaded_csv(("task,y,x0\n" + rows).encode(), "one.csv")
    assert state.dataset_name == UPLOADED and state.dataset.n_tasks == 1
    level, message = state.notification
    assert level == "success" and "one task" in message and "two or more" in message


def test_csv_upload_oversize_refused_before_parsing():
    state = make_state()
    assert not state.load_uploaded_csv(b"x" * (UPLOAD_LIMIT_BYTES + 1), "big.csv")
    assert "limit" in state.notification[1]
    assert state.dataset_name == "task_family"


def test_notify_levels():
    state = make_state()
    state.notify("hello", "info")
    state.notify("hello", "info")  # the same notice twice still reaches watchers
    assert list(state.notices)[-2:] == [("info", "hello"), ("info", "hello")]
    with pytest.raises(ValueError, match="level must be one of"):
        state.notify("x", "loud")


# ---------------------------------------------------------------------- the shell, no browser
def _shell(pages):
    import panel as pn

    from explorer.app import ExplorerApp

    state = ExplorerState(pages=[p.slug for p in pages])
    return ExplorerApp(state=state, pages=pages), pn


def test_shell_builds_pages_lazily_and_caches_them():
    from explorer.app.pages import Page

    built = []

    def build(state):
        import panel as pn
        built.append(state)
        return pn.pane.Markdown("page a")

    pages = [Page("a", "A", build), Page("b", "B", build)]
    app, pn = _shell(pages)
    assert len(built) == 1                      # only the shown page was built
    first = app.shown
    app.state.page = "b"
    frames = app.main.objects[1:]
    assert app.shown is not first and len(frames) == 2
    assert app.main.stylesheets == [hidden_pages_rule("b")]
    app.state.page = "a"
    assert len(built) == 2 and app.shown is first   # cached per session
    # a switch is one style rule: the frames stay in place, marked by their slug
    assert app.main.objects[1:] == frames and all(frame.visible for frame in frames)
    assert app.main.stylesheets == [hidden_pages_rule("a")]
    assert [f"explorer-page-{slug}" in frame.css_classes
            for slug, frame in zip("ab", frames, strict=True)] == [True, True]
    assert ":not(.explorer-page-a)" in hidden_pages_rule("a")


def test_closing_the_session_closes_every_page_even_after_one_fails():
    from explorer.app.pages import Page

    closed = []

    class View:
        def __init__(self, slug):
            self.slug = slug

        def __panel__(self):
            import panel as pn
            return pn.pane.Markdown(self.slug)

        def close(self):
            closed.append(self.slug)
            if self.slug == "a":
                raise RuntimeError("a's clean-up failed")

    pages = [Page("a", "A", lambda state: View("a")), Page("b", "B", lambda state: View("b"))]
    app, _ = _shell(pages)
    app.state.page = "b"
    app.close()
    assert closed == ["a", "b"]


def test_model_page_says_politely_when_the_data_do_not_suit_it():
    from explorer.app.pages import PAGES

    state = ExplorerState()
    outliers = next(p for p in PAGES if p.slug == "outliers")
    page = outliers.build(state)           # classification data: a note, no crash
    assert page.note.visible and "works with regression data" in page.note.object
    state.dataset_name = "outlier_tasks"
    state.data_params = {**state.current_params(), "n_tasks": 1, "n_outliers": 0}
    assert state.error == "" and not page.note.visible        # one task is enough for rMTFL
    state.data_params = {**state.current_params(), "n_samples_per_task": 2}
    assert page.note.visible and "training examples per task" in page.note.object


def test_shell_page_error_becomes_a_notice():
    import panel as pn

    from explorer.app.pages import Page

    def broken(state):
        raise RuntimeError("boom <b>")

    pages = [Page("a", "A", lambda s: pn.pane.Markdown("x")), Page("bad", "Bad", broken)]
    app, _ = _shell(pages)
    app.state.page = "bad"
    assert app.state.notification[0] == "error" and "boom" in app.state.notification[1]
    assert "&lt;b&gt;" in app.shown.object            # shown escaped
    app.state.page = "a"                         # and the app keeps working
    assert app.shown.object == "x" and not app._page_error.visible


def test_param_form_round_trip():
    from explorer.app import DataParamsForm

    state = make_state()
    form = DataParamsForm(state)
    spec = bounded_int_spec("task_family")
    widget = form._form.widgets[spec.name]
    new_value = spec.default + 1
    throttled = {"value_throttled": new_value} if "value_throttled" in widget.param else {}
    with param.edit_constant(widget):  # what the browser does on release of a slider
        widget.param.update(value=new_value, **throttled)
    assert state.current_params()[spec.name] == new_value
    state.from_query({"d." + spec.name: str(spec.default)})
    assert widget.value == spec.default


def test_presets_switch_data_seed_and_page_and_refuse_unknown_names():
    from explorer.app.state import ExplorerState

    state = ExplorerState()
    assert state.apply_preset("outlier_tasks")
    assert state.dataset_name == "outlier_tasks" and state.page == "outliers"
    assert state.dataset.kind == "regression" and state.dataset.n_tasks == 10
    assert state.apply_preset("negated_task")
    assert state.page == "shared_vs_separate" and state.dataset.n_tasks == 3
    before = state.dataset
    assert not state.apply_preset("../../etc/passwd")     # a name, never a path
    assert state.dataset is before and "preset must be one of" in state.notices[-1][1]


def test_a_refused_widget_value_gets_one_message_and_goes_back():
    from explorer.app import DataParamsForm

    state = make_state()
    form = DataParamsForm(state)
    relations = form.widgets["relations"]
    # the field checks a typed text with the declaration's pattern in the browser
    assert relations.pattern == CATALOG["task_family"].params.param.relations.regex
    before, seen = state.dataset, len(state.notices)
    relations.refused("related,siblings")      # what the browser sends for a text it refused
    assert state.dataset is before
    new = list(state.notices)[seen:]
    assert len(new) == 1 and new[0][0] == "error"
    assert "relations" in new[0][1] and "siblings" in new[0][1]
    # the value in force stays (the browser shows it again)
    assert relations.value == CATALOG["task_family"].defaults()["relations"]


def test_a_cleared_or_bad_seed_field_is_refused_with_a_message():
    import panel as pn

    from explorer.app import ExplorerApp

    app = ExplorerApp(state=make_state())
    seed_box = next(w for w in app.sidebar if isinstance(w, pn.viewable.Viewer)
                    and "data_seed" in getattr(w, "widgets", {})).widgets["data_seed"]
    # the browser knows the declaration's bounds: nothing outside them becomes the value
    bounds = app.state.param.data_seed.bounds
    assert (seed_box.kind, seed_box.start, seed_box.end) == ("integer", *bounds)
    assert f"An integer in [0, {bounds[1]}]" in seed_box.description      # the tooltip
    seen = len(app.state.notices)
    seed_box.refused("")                       # an emptied field
    seed_box.refused("-4")
    assert app.state.data_seed == 0 and seed_box.value == 0
    messages = [m for _, m in list(app.state.notices)[seen:]]
    assert messages == ["data_seed needs a value; the field is empty.",
                        f"data_seed must be an integer in [0, {bounds[1]}]; got '-4'."]
    # a value no browser of ours sends: the declaration refuses it in Panel's link, and Panel
    # puts the value in force back
    with pytest.raises(ValueError, match="data_seed"):
        seed_box.value = -4
    assert app.state.data_seed == 0 and seed_box.value == 0
    seed_box.value = 3                         # a value the browser accepted
    assert app.state.data_seed == 3


# ---------------------------------------------------------------------- the link is the state
def test_hide_truth_is_in_the_link_both_ways():
    state = make_state()
    changes = []
    state.param.watch(lambda event: changes.append(event.name), "query_changed")
    state.hide_truth = True
    assert changes == ["query_changed"]                  # ticking it rewrites the address bar
    assert state.to_query()["hide_truth"] == "true"
    receiver = make_state()
    assert receiver.from_query(state.to_query()) == [] and receiver.hide_truth
    state.hide_truth = False
    assert receiver.from_query(state.to_query()) == [] and not receiver.hide_truth


def test_every_declared_setting_has_a_url_key():
    from explorer.app.link import url_keys
    from explorer.app.pages import PAGES

    state = ExplorerState()
    own = url_keys(state)
    not_in_link = {"data_params", "notification", "query_changed"}   # data_params: d.<name>
    settings = {name for name in public_parameters(state)
                if not state.param[name].constant and name not in not_in_link}
    assert settings <= set(own) and "hide_truth" in own and "scenario" in own
    for dataset_name, entry in CATALOG.items():
        fields = state.url_fields(dataset_name)
        assert {f"d.{name}" for name in public_parameters(entry.params)} <= set(fields)
    fields = state.url_fields()
    for page in PAGES:
        if getattr(page, "params", None) is not None:
            assert {f"{page.slug}.{name}" for name in public_parameters(page.params)} \
                <= set(fields)
    for key, field in fields.items():   # each key is judged by the declaration it names
        assert field.name in field.owner.param
        assert key.endswith(field.name) or field.group == "state"


def test_a_refused_value_never_stays_in_the_link_even_without_a_data_key():
    from panel.io.location import Location

    from explorer.app import bind_url

    link = "?page=tasks&d.n_features=1000000000"
    state = make_state()
    location = Location(search=link)
    notices = bind_url(state, location)
    assert len(notices) == 1 and "d.n_features must be an integer in [1, 200]" in notices[0][1]
    query = dict(parse_qsl(location.search[1:]))
    assert query == state.to_query() and "data" in query   # written whole: a complete link
    assert query["d.n_features"] == str(CATALOG["task_family"].defaults()["n_features"])
    location.search = link                 # the browser reports the address it was opened at
    assert dict(parse_qsl(location.search[1:])) == state.to_query()
    state.hide_truth = True                # and every later change is written
    assert dict(parse_qsl(location.search[1:]))["hide_truth"] == "true"


def test_a_refused_value_is_dropped_from_the_query():
    state = make_state()
    problems = state.from_query({"page": "tasks", "d.n_features": "1000000000"})
    assert len(problems) == 1 and problems[0].startswith("d.n_features must be")
    assert state.to_query()["d.n_features"] != "1000000000"


def test_figure_names_say_truth_once():
    from bokeh.plotting import figure

    from explorer.app.access import figure_name, name_figures

    fig = figure(title="coefficients")
    name_figures(fig, truth=True)
    assert fig.html_attributes == {"role": "img", "aria-label": "Truth: coefficients"}
    fig.title.text = "True W"
    name_figures(fig, truth=True)
    assert fig.html_attributes["aria-label"] == "True W"
    assert figure_name(figure(title="Learned W")) == "Learned W"
