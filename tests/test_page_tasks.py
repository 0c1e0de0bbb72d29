"""The Tasks page: corrected truth beside the true cosine, no Bokeh warnings, escaped text."""

import numpy as np
import param
import pytest
from bokeh.core.validation import check_integrity
from bokeh.document import Document

from explorer.app.work import WorkService
from explorer.data import MultiTaskDataset, make_clustered_tasks, make_task_family
from explorer.viz.tasks import task_scatter_grid, truth_matrices


class _State(param.Parameterized):
    dataset = param.Parameter()
    work = WorkService()   # the session's work service: synchronous, no loop here


def _issues(viewable):
    import panel as pn

    doc = Document()
    doc.add_root(pn.panel(viewable).get_root(doc))
    return check_integrity(list(doc.models))


def test_truth_matrices_relation_beside_cosine_on_one_scale():
    ds = make_task_family(("related", "negated", "unrelated"), random_state=0)
    items = {item["key"]: item for item in truth_matrices(ds)}
    keys = [item["key"] for item in truth_matrices(ds)]
    assert keys[:2] == ["task_relation", "task_similarity"]
    rel, sim = items["task_relation"], items["task_similarity"]
    assert rel["limit"] == sim["limit"] == 1.0
    np.testing.assert_array_equal(np.diagonal(rel["matrix"]), 1.0)
    assert rel["matrix"][0, 3] == 0.0 and abs(sim["matrix"][0, 3]) < 1e-12
    assert sim["matrix"][0, 2] == pytest.approx(-1.0)
    # coefficients drawn tasks x features, like every task matrix of the app
    assert items["coef"]["matrix"].shape == (ds.n_tasks, ds.n_features)
    assert items["coef"]["row_names"] == ds.task_names


def test_scatter_grid_has_no_bokeh_validation_warning():
    ds = make_task_family(random_state=0)
    from bokeh.layouts import column

    assert not _issues(column(task_scatter_grid(ds))).warning


def test_page_renders_without_w1005_and_redraws(caplog):
    from explorer.app.pages.tasks import TasksPage

    state = _State(dataset=make_task_family(random_state=0))
    page = TasksPage(state)
    issues = _issues(page)
    assert not issues.warning and not issues.error
    state.dataset = make_clustered_tasks(n_tasks=4, n_clusters=2, random_state=0)
    issues = _issues(page)
    assert not issues.warning and not issues.error
    assert "W-1005" not in caplog.text


def test_page_shows_relation_and_similarity_and_escapes_names():
    from explorer.app.pages.tasks import TasksPage

    names = ["<script>alert(1)</script>", "[x](javascript:alert(1))"]
    ds = MultiTaskDataset(np.arange(8.0).reshape(4, 2), [0, 1, 0, 1], [0, 0, 1, 1],
                          task_names=names, truth={"clusters": [0, 1]})
    page = TasksPage(_State(dataset=ds))
    text = " ".join(str(getattr(obj, "object", "")) for obj in page.__panel__().select()
                    if obj.__class__.__name__ == "Markdown")
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "](javascript" not in text

    family = TasksPage(_State(dataset=make_task_family(random_state=0)))
    titles = [fig.title.text for fig in _figures(family)]
    assert "True task relation" in titles
    assert "True similarity (cosine of coefficients)" in titles


def _figures(page):
    from bokeh.plotting import figure

    return [obj.object for obj in page.__panel__().select()
            if isinstance(getattr(obj, "object", None), figure)]


def test_show_code_makes_the_data_shown_and_the_downloads_hold_it():
    from explorer.app.pages.tasks import TasksPage
    from explorer.app.state import ExplorerState

    state = ExplorerState(pages=("tasks",), dataset_name="outlier_tasks", data_seed=4)
    page = TasksPage(state)
    namespace: dict = {}
    exec(compile(page.code(), "<tasks show code>", "exec"), namespace)  # noqa: S102
    again = namespace["dataset"]
    np.testing.assert_array_equal(again.X, state.dataset.X)
    np.testing.assert_array_equal(again.truth["coef"], state.dataset.truth["coef"])
    assert page._data_csv() == state.dataset.to_csv()
    figures = page.tools._figures_file().getvalue()
    titles = [fig.title.text for fig in page._figures() if fig.visible and fig.title.text]
    assert figures.startswith("<!DOCTYPE html>") and len(titles) >= 4
    assert all(title in figures for title in titles)      # every drawn figure is in the file
    assert all(any(type(t).__name__ == "SaveTool" for t in fig.tools) for fig in page._figures())


def test_more_than_two_features_are_drawn_where_each_tasks_classes_fall_apart():
    """The opening data (12 features): on the plane of the tasks' label directions a line
    separates most of every task's examples, the related tasks along the first direction
    and the unrelated one along the second; a PCA of the examples separates far fewer."""
    from sklearn.linear_model import LogisticRegression

    from explorer.app.state import ExplorerState
    from explorer.viz.tasks import project_2d, scatter_frame

    data = ExplorerState().dataset
    assert data.n_features > 2
    relation = data.truth["task_relation"][0]
    Z, labels = project_2d(data.X, data.feature_names, data.y, data.task)
    plain, _ = project_2d(data.X, data.feature_names)
    assert labels[0].startswith("Direction 1 of the tasks' labels")

    def separated(points, t, axes):
        rows = data.task == t
        return LogisticRegression().fit(points[rows][:, axes], data.y[rows]).score(
            points[rows][:, axes], data.y[rows])

    tasks = range(data.n_tasks)
    assert min(separated(Z, t, [0, 1]) for t in tasks) >= 0.8
    assert np.mean([separated(Z, t, [0, 1]) for t in tasks]) \
        > np.mean([separated(plain, t, [0, 1]) for t in tasks]) + 0.15
    for t in tasks:
        along, across = separated(Z, t, [0]), separated(Z, t, [1])
        assert along > across if relation[t] == 1 else across > along, t
    frame = scatter_frame(data)                           # what the page draws
    np.testing.assert_allclose(frame["panels"][0]["x"], Z[data.task == 0, 0])
    assert frame["x_label"] == labels[0]


def test_the_page_makes_its_bokeh_models_on_the_event_loop_only(monkeypatch):
    """The work service computes the frame (projection, colours, the truth's matrices) on a
    worker; every Bokeh model, a heatmap of a kind of truth seen first included, is made on
    the loop (here: this thread, which runs the callbacks the service schedules)."""
    import queue
    import threading

    from bokeh.model import Model

    from explorer.app.pages.tasks import TasksPage

    made_on: set[int] = set()
    init = Model.__init__

    def recording(self, *args, **kwargs):
        made_on.add(threading.get_ident())
        init(self, *args, **kwargs)

    monkeypatch.setattr(Model, "__init__", recording)
    callbacks: queue.Queue = queue.Queue()

    def run_loop(expected: int) -> None:   # the session's loop: two hops a job
        for _ in range(expected):
            callbacks.get(timeout=20)()

    state = _State(dataset=make_task_family(("related", "negated"), random_state=0))
    state.work = WorkService(callbacks.put)   # off the loop, as when served
    page = TasksPage(state)
    assert page._truth == {}                 # nothing computed yet: the loop has not run
    run_loop(2)
    assert "task_relation" in page._truth
    state.dataset = make_clustered_tasks(n_tasks=4, n_clusters=2, random_state=0)
    run_loop(2)
    assert "clusters" in page._truth         # a kind of truth seen first: a new heatmap
    assert made_on == {threading.get_ident()}
