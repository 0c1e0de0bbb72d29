"""Plain-Bokeh live views: shapes, fixed colour limits, distinct zeros, names on axes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from explorer.viz.live import ZERO_COLOR, BarView, CurveView, MatrixHeatmap


def test_heatmap_shapes_names_and_fixed_limits():
    view = MatrixHeatmap(["T0", "T1", "T2"], ["f0", "f1"], limit=2.0, title="W")
    assert view.shape == (3, 2) and view.source.data["image"][0].shape == (3, 2)
    assert list(view.figure.x_range.factors) == ["f0", "f1"]
    assert set(view.figure.y_range.factors) == {"T0", "T1", "T2"}
    source = view.source
    rng = np.random.default_rng(0)
    for scale in (0.01, 1.0, 100.0):
        view.update(scale * rng.normal(size=(3, 2)))
        assert (view.color_mapper.low, view.color_mapper.high) == (-2.0, 2.0)
    assert view.source is source
    view.set_limit(0.5)
    assert (view.color_mapper.low, view.color_mapper.high) == (-0.5, 0.5)
    # the image is stored bottom row first: its last row is the first task
    m = np.arange(1.0, 7.0).reshape(3, 2)
    view.update(m)
    np.testing.assert_array_equal(view.source.data["image"][0], m[::-1])
    assert view.source.data["image"][0].dtype == np.float32     # half the bytes a frame
    np.testing.assert_array_equal(view.values, m)
    assert view.figure.y_range.factors[0] == "T2"   # drawn at the bottom, like image row 0


def test_heatmap_zero_cells_are_distinct():
    view = MatrixHeatmap(["a", "b"], ["a", "b"])
    view.update(np.array([[0.0, 1e-9], [-0.3, 0.0]]))
    assert view.is_zero.tolist() == [[True, False], [False, True]]
    # exact zeros travel as NaN, which the colour mapper paints grey (bottom row first);
    # 1e-9 keeps its (near-white) colour
    np.testing.assert_array_equal(np.isnan(view.source.data["image"][0]),
                                  [[False, True], [True, False]])
    assert view.color_mapper.nan_color == ZERO_COLOR


def test_heatmap_bad_input():
    view = MatrixHeatmap(["a"], ["x", "y"])
    with pytest.raises(ValueError, match="shape"):
        view.update(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="limit"):
        view.set_limit(0)
    with pytest.raises(ValueError, match="row_names"):
        MatrixHeatmap([], ["x"])


def test_curve_streams_with_rollover():
    view = CurveView(rollover=5)
    for i in range(12):
        view.update(i, 1.0 / (i + 1))
    assert view.source.data["x"] == [7, 8, 9, 10, 11]
    view.reset([0, 1], [3, 2])
    assert view.source.data["y"] == [3.0, 2.0]


def test_bars_grouped_highlight_threshold():
    view = BarView(["T0", "T1", "T2"], ["shared", "separate"], threshold=0.5)
    assert len(view.source.data["x"]) == 6 and view.threshold.visible
    view.update({"shared": [0.1, 0.2, 0.3]}, highlight=[2])
    assert view.source.data["value"] == [0.1, 0.0, 0.2, 0.0, 0.3, 0.0]
    assert view.source.data["alpha"][4] == 1.0 and view.source.data["alpha"][0] < 1.0
    view.set_threshold(None)
    assert not view.threshold.visible
    with pytest.raises(ValueError, match="shape"):
        view.update({"shared": [0.1]})
    with pytest.raises(ValueError, match="unknown series"):
        view.update({"nope": [0, 0, 0]})


def _columns(diagram) -> dict:
    return {name: {k: np.asarray(v).tolist() for k, v in source.data.items()}
            for name, source in (("nodes", diagram.nodes), ("edges", diagram.edges),
                                 ("bars", diagram.bars), ("leaves", diagram.leaves))}


def _close(a: dict, b: dict) -> None:
    for name in a:
        assert sorted(a[name]) == sorted(b[name]), name
        for key, values in a[name].items():
            if values and isinstance(values[0], float):
                np.testing.assert_allclose(values, b[name][key], err_msg=f"{name}.{key}")
            else:
                assert values == b[name][key], f"{name}.{key}"


def test_the_tree_diagram_streams_new_nodes_and_draws_what_a_fresh_diagram_draws():
    """Patched frame by frame (new rows streamed, pending nodes patched, positions replaced),
    the diagram equals one drawn at once; a scrub back draws afresh; class bars and hover
    text are capped at the first tasks, so a 30-task tree stays a readable, small frame."""
    from explorer.data import make_clustered_tasks
    from explorer.models import MTDecisionTree
    from explorer.viz.tree import TreeDiagram

    data = make_clustered_tasks(n_tasks=30, n_clusters=3, n_features=4, random_state=0)
    tree = MTDecisionTree(max_depth=4, random_state=0)
    snapshots = list(tree.fit_iter(data.X, data.y, data.task))
    classes = [np.unique(data.y[data.task == t]) for t in range(data.n_tasks)]
    args = (data.task_names, classes, data.feature_names)
    live = TreeDiagram(*args)
    texts = []
    for snap in snapshots:
        live.update(snap.info["tree"], highlight=snap.info["node"]["node"])
        texts.append(list(live.nodes.data["text"]))
    for before, after in zip(texts, texts[1:], strict=False):
        # rows only ever come at the end; a row's text changes only pending -> processed
        assert all(a == b or a == "pending" for a, b in zip(before, after, strict=False))
    last = snapshots[-1].info
    fresh = TreeDiagram(*args)
    fresh.update(last["tree"], highlight=last["node"]["node"])
    _close(_columns(live), _columns(fresh))
    assert len(live.bars.data["top"]) > 0
    rows_per_node: dict[int, set] = {}
    for node, top in zip(live.bars.data["node"], live.bars.data["top"], strict=True):
        rows_per_node.setdefault(node, set()).add(round(top, 6))
    assert max(len(rows) for rows in rows_per_node.values()) == TreeDiagram.max_bar_tasks
    assert any("more tasks" in text for text in live.nodes.data["counts"])
    middle = snapshots[len(snapshots) // 2].info      # a scrub back: drawn afresh
    live.update(middle["tree"], highlight=middle["node"]["node"])
    again = TreeDiagram(*args)
    again.update(middle["tree"], highlight=middle["node"]["node"])
    _close(_columns(live), _columns(again))


def test_a_large_matrix_travels_at_display_resolution_and_keeps_its_zero_pattern():
    rows, cols = [f"T{i}" for i in range(100)], [f"f{j}" for j in range(500)]
    view = MatrixHeatmap(rows, cols, width=480, height=300)
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(100, 500))
    matrix[:, 300:] = 0.0                      # features nobody uses: exactly zero
    matrix[7, 123] = -50.0                     # one large entry is never averaged away
    view.update(matrix)
    image = view.source.data["image"][0]
    assert image.shape[1] <= (480 - 130) // 2 < 500 and image.dtype == np.float32
    drawn = image[::-1]                        # first task first
    pool_r, pool_c = view.pool
    assert np.isnan(drawn[:, -(-300 // pool_c):]).all()          # zero blocks stay grey
    assert drawn[7 // pool_r, 123 // pool_c] == -50.0
    np.testing.assert_array_equal(view.values, matrix)           # full resolution kept
    assert any(name == "cell" for name, _ in view._hover.tooltips)
    small = MatrixHeatmap(["a", "b"], ["c", "d"])
    assert small.pool == (1, 1) and len(small._hover.tooltips) == 3


def test_crowded_category_axes_label_every_kth_name_and_get_them_all_back():
    """Past the labels an axis holds apart (15 px each, at most MAX_CATEGORY_LABELS), every
    k-th name is labelled (27 features in a 220 px frame were one smear of 27 labels; 139
    school names had none); a data set with few names labels each again."""
    from bokeh.models import CategoricalTicker, CustomJSTicker

    from explorer.viz.style import MAX_CATEGORY_LABELS

    many = [f"feature {j}" for j in range(MAX_CATEGORY_LABELS + 1)]
    view = MatrixHeatmap(["T0", "T1"], many, limit=1.0)
    assert isinstance(view.figure.xaxis[0].ticker, CustomJSTicker)
    every = int(re.search(r"i % (\d+) === 0", view.figure.xaxis[0].ticker.major_code)[1])
    assert every >= 2 and -(-len(many) // every) * 15 <= view.figure.width - 170 + 15
    assert isinstance(view.figure.yaxis[0].ticker, CategoricalTicker)
    view.set_names(many, ["a", "b"])
    assert isinstance(view.figure.xaxis[0].ticker, CategoricalTicker)
    assert isinstance(view.figure.yaxis[0].ticker, CustomJSTicker)
    features = [f"x{j}" for j in range(27)]     # School's W: 27 features in a 220 px frame
    school = MatrixHeatmap([f"school {t}" for t in range(139)], features, limit=1.0)
    school.figure.frame_width = school.figure.frame_height = 220
    school.set_names(school.row_names, features)
    for axis, n in ((school.figure.xaxis[0], 27), (school.figure.yaxis[0], 139)):
        every = int(re.search(r"i % (\d+) === 0", axis.ticker.major_code)[1])
        assert -(-n // every) <= 220 // 15, (n, every)   # the labels drawn fit apart
    bars = BarView([f"T{t}" for t in range(MAX_CATEGORY_LABELS + 1)], ["model", "single-task"])
    assert isinstance(bars.figure.xaxis[0].ticker, CustomJSTicker)
    bars.set_categories(["T0", "T1"])
    assert isinstance(bars.figure.xaxis[0].ticker, CategoricalTicker)


def test_a_small_matrix_writes_its_values_in_its_cells_in_a_readable_ink():
    view = MatrixHeatmap(["a", "b"], ["a", "b"], limit=1.0, width=400, height=300)
    view.update(np.array([[1.0, -0.25], [0.0, -0.9]]))
    white, dark = (view._labels[ink].data for ink in ("white", "#222222"))
    assert white["text"] == ["1.00", "-0.90"]          # deep colours: white text
    assert dark["text"] == ["-0.25", "0"]               # pale ones: dark text
    assert (white["x"], white["y"]) == ([0.5, 1.5], [1.5, 0.5])   # row 0 drawn on top
    view.clear()
    assert all(not view._labels[ink].data["text"] for ink in view._labels)
    view.set_names([f"T{i}" for i in range(13)], [f"T{i}" for i in range(13)])
    view.update(np.eye(13))                              # past 12 x 12: colour and hover only
    assert all(not view._labels[ink].data["text"] for ink in view._labels)


def test_a_horizontal_bar_chart_keeps_its_legend_to_one_line_when_it_fits():
    # three short series (Outliers: model, lasso, ridge; Transfer: model, STL, TL-MC) in one
    # line above the bars, which keeps 40 tasks' bars on screen; long names go a line each
    short = BarView(["T0", "T1"], ["model", "lasso", "ridge"], width=300, horizontal=True)
    assert short.figure.legend[0].orientation == "horizontal"
    long = BarView(["T0", "T1"], ["model", "per-task kNN", "pooled kNN", "per-task kernel"],
                   width=300, horizontal=True)
    assert long.figure.legend[0].orientation == "vertical"


def test_rows_appended_to_an_emptied_source_set_it_whole_in_the_same_message():
    """A reset and a stream held in one message lost the reset in the browser (the curve
    was drawn back from its last step to its first after a reveal): into an empty source,
    append_rows sets the data whole; otherwise it streams."""
    from bokeh.document import Document
    from bokeh.document.events import ColumnsStreamedEvent
    from bokeh.models import ColumnDataSource

    from explorer.viz.live import append_rows

    doc = Document()
    source = ColumnDataSource({"x": [1, 2], "y": [0.5, 0.4]})
    doc.add_root(source)
    doc.hold("combine")
    source.data = {"x": [], "y": []}                 # the reset (a replay, a scrub back)
    append_rows(source, {"x": [1, 2, 3], "y": [0.5, 0.4, 0.3]})
    held = list(doc.callbacks._held_events)
    doc.unhold()
    assert not any(isinstance(event, ColumnsStreamedEvent) for event in held)
    assert source.data == {"x": [1, 2, 3], "y": [0.5, 0.4, 0.3]}
    append_rows(source, {"x": [4], "y": [0.2]})      # a live frame: streamed
    assert source.data["x"] == [1, 2, 3, 4]
