"""The Trees page's views read on a projector: depth-6 trees drawn from their sources have
no overlapping boxes or early-leaf squares, labels inside their boxes, a legend for every
colour that means something (tasks, classes: never the same colours), a note when the
drawing is cut, and no IG_J line left on the gain chart at a leaf. All patched in place."""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np
import pytest

from explorer.data import MultiTaskDataset
from explorer.data.catalog import make_dataset
from explorer.models import MTDecisionTree
from explorer.viz.tree import GainBarsView, PartitionLiveView, TreeDiagram, TreeDiagramView
from explorer.viz.tree_layout import class_palette, tidy_x

CHAR_EM = 0.6            # an estimate of a character's width, in font sizes (the brief's)


def _lab(color: str) -> np.ndarray:
    """Plain CIE76 Lab (independent of the module's weighted distance)."""
    rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    rgb = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ rgb / np.array([0.9505, 1.0, 1.089])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _grow(name: str, criterion: str = "ig_m", depth: int = 6, seed: int = 0, params=None):
    """A depth-``depth`` MT-DT on ``name`` grown node by node through the page's views."""
    data = make_dataset(name, params or {}, random_state=seed)
    train, _ = data.split(0.7, random_state=seed)
    tree_view, gain_view = TreeDiagramView(), GainBarsView()
    tree_view.set_data(train)
    gain_view.set_data(train)
    snapshots = list(MTDecisionTree(max_depth=depth, criterion=criterion, random_state=seed)
                     .fit_iter(train.X, train.y, train.task))
    return train, tree_view, gain_view, snapshots


def _boxes(diagram: TreeDiagram) -> np.ndarray:
    """(left, right, bottom, top) of every node box, from the nodes source."""
    d = diagram.nodes.data
    x, y, w, h = (np.asarray(d[c], dtype=float) for c in ("x", "y", "w", "h"))
    return np.column_stack([x - w / 2, x + w / 2, y - h / 2, y + h / 2])


def _squares(diagram: TreeDiagram) -> np.ndarray:
    d = diagram.leaves.data
    x, y, w = (np.asarray(d[c], dtype=float) for c in ("x", "y", "w"))
    half = diagram.item_px / 2
    return np.column_stack([x - w / 2, x + w / 2, y - half, y + half])


def _overlapping(rects: np.ndarray) -> list[tuple[int, int]]:
    return [(i, j) for i, j in combinations(range(len(rects)), 2)
            if min(rects[i, 1], rects[j, 1]) - max(rects[i, 0], rects[j, 0]) > 1e-6
            and min(rects[i, 3], rects[j, 3]) - max(rects[i, 2], rects[j, 2]) > 1e-6]


def _check_readable(diagram: TreeDiagram) -> None:
    boxes, squares = _boxes(diagram), _squares(diagram)
    assert len(boxes) > 10 and len(squares) > 5
    assert _overlapping(boxes) == []                      # no two node boxes overlap
    assert _overlapping(squares) == []                    # nor two early-leaf squares
    # every square sits inside the box of its node, so it overlaps no other box
    for (l0, r0, b0, t0), node_x in zip(squares, diagram.leaves.data["x"], strict=True):
        inside = [(l0 >= l - 1e-6) and (r0 <= r + 1e-6) and (b0 >= b - 1e-6)
                  and (t0 <= t + 1e-6) for l, r, b, t in boxes]
        assert sum(inside) == 1, node_x
    # labels fit: ~0.6 x font px per character across, one line height per line down
    d = diagram.nodes.data
    for text, w, h, y, ty in zip(d["text"], d["w"], d["h"], d["y"], d["ty"], strict=True):
        lines = text.split("\n")
        assert CHAR_EM * diagram.font_px * max(map(len, lines)) <= w - 4, text
        block = len(lines) * diagram.line_px
        assert y + h / 2 >= ty + block / 2 and ty - block / 2 >= y - h / 2, text
    for text, w in zip(diagram.leaves.data["text"], diagram.leaves.data["w"], strict=True):
        assert CHAR_EM * diagram.item_font_px * len(text) <= w - 2, text
    # the extent the browser fits to the frame holds every box
    lo, hi, height = (diagram.extent.data[k][0] for k in ("lo", "hi", "height"))
    assert lo <= boxes[:, 0].min() and boxes[:, 1].max() <= hi
    assert -height <= boxes[:, 2].min() and boxes[:, 3].max() <= 0
    # and the root's x, where a tree wider than the frame opens (_FIT_JS)
    root_row = list(diagram.nodes.data["node"]).index(0)
    assert diagram.extent.data["root"][0] == pytest.approx(diagram.nodes.data["x"][root_row])


def test_a_growing_tree_keeps_the_height_of_its_depth_bound_and_a_complete_one_fits():
    """While the fit may still go deeper, the extent asks for the height of the deepest tree
    it may grow (the browser sets the frame once, not at every new depth); a complete tree
    asks for nothing more than its drawing."""
    _, view, _, snapshots = _grow("local_relatedness", depth=4,
                                  params={"label_noise": 0.05})
    diagram = view.diagram
    bound = diagram._height_at_depth(4)
    for snapshot in snapshots:
        view.update(snapshot)
        extent = {k: v[0] for k, v in diagram.extent.data.items()}
        if snapshot.info["n_pending"] > 0:
            assert snapshot.info["max_depth"] == 4
            assert extent["reserve"] == bound and extent["height"] <= bound
        else:
            assert extent["reserve"] == 0.0
    deepest = max(node["depth"] for node in snapshots[-1].info["tree"])
    assert extent["height"] == pytest.approx(diagram._height_at_depth(deepest))
    assert deepest == 4 and extent["height"] == pytest.approx(bound)
    view.clear()
    assert diagram.extent.data["reserve"] == [0.0]


def _legend(diagram: TreeDiagram, legend) -> dict[str, str]:
    """{label: swatch colour} of a legend's items (the row's name has no swatch)."""
    items = {}
    for item in legend.items[1:]:
        source = item.renderers[0].data_source
        items[item.label.value] = source.data["color"][item.index]
    return items


@pytest.mark.parametrize(("name", "criterion", "params"), [
    ("local_relatedness", "ig_m", {"label_noise": 0.05}),   # noise: it grows to depth 6
    ("digits_tasks", "ig_m", {}),
    ("digits_tasks", "ig_j", {})])
def test_a_depth_6_tree_is_drawn_without_overlaps_and_with_labels_in_their_boxes(
        name, criterion, params):
    train, view, _, snapshots = _grow(name, criterion, params=params)
    diagram = view.diagram
    figure, sources = diagram.figure, (diagram.nodes, diagram.leaves, diagram.bars)
    assert max(node["depth"] for node in snapshots[-1].info["tree"]) == 6
    for k, snapshot in enumerate(snapshots):
        view.update(snapshot)
        if k in (len(snapshots) // 3, 2 * len(snapshots) // 3):
            _check_readable(diagram)          # also while growing, pending nodes included
    _check_readable(diagram)
    # patched in place: the same figure and sources the whole run
    assert diagram.figure is figure and (diagram.nodes, diagram.leaves, diagram.bars) == sources
    # every node of the record is drawn once, every early leaf is one square
    nodes = snapshots[-1].info["tree"]
    assert sorted(diagram.nodes.data["node"]) == sorted(n["node"] for n in nodes)
    assert len(diagram.leaves.data["x"]) == sum(len(n["early_leaves"]) for n in nodes)
    assert "pending" not in diagram.nodes.data["text"]


def test_labels_are_short_on_screen_and_whole_on_hover():
    names = ["mean concave points of the cell", "x1"]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    task = np.repeat([0, 1], 100)
    y = np.where(X[:, 0] > 0.123456, "malignant", "benign")
    data = MultiTaskDataset(X, y, task, feature_names=names)
    view = TreeDiagramView()
    view.set_data(data)
    for snapshot in MTDecisionTree(max_depth=2).fit_iter(data.X, data.y, data.task):
        view.update(snapshot)
    d = view.diagram.nodes.data
    root = d["node"].index(0)
    assert d["text"][root].split("\n")[0] == "mean conc…"
    assert d["full"][root].startswith("mean concave points of the cell <= ")
    labels = view.diagram.leaves.data
    assert set(labels["text"]) <= {"ma…", "be…"}
    assert set(labels["label"]) <= {"malignant", "benign"}
    fits = [CHAR_EM * view.diagram.item_font_px * len(t) <= w - 2
                   for t, w in zip(labels["text"], labels["w"], strict=True)]
    assert all(fits)


@pytest.mark.parametrize("name", ["local_relatedness", "digits_tasks"])
def test_legends_name_every_task_and_class_colour_and_never_share_a_colour(name):
    train, view, _, snapshots = _grow(name, depth=3)
    for snapshot in snapshots:
        view.update(snapshot)
    diagram = view.diagram
    tasks = _legend(diagram, diagram.task_legend)
    classes = _legend(diagram, diagram.class_legend)
    assert diagram.task_legend.items[0].label.value == "Tasks:"
    assert list(tasks) == [str(n) for n in train.task_names]
    assert list(classes) == [str(c) for c in np.unique(train.y)]
    assert len(set(tasks.values())) == len(tasks)
    assert len(set(classes.values())) == len(classes)
    # no class colour near a task colour (orange once meant both class 1 and task T1:
    # CIE76 14 apart)
    assert min(np.linalg.norm(_lab(a) - _lab(b))
               for a in tasks.values() for b in classes.values()) > 30
    # what is drawn uses exactly these colours: outlines and squares tasks', bars classes'
    assert set(diagram.bars.data["color"]) <= set(classes.values())
    assert set(diagram.leaves.data["color"]) <= set(tasks.values())
    outlines = {c for c, t in zip(diagram.nodes.data["line"], diagram.nodes.data["text"],
                                  strict=True) if "≤" in t}
    assert outlines and outlines <= set(tasks.values())
    # the figures beside the tree agree: gain bars in task colours, regions in class colours
    gains = GainBarsView()
    gains.set_data(train)
    assert list(gains.bars.source.data["color"]) == list(tasks.values())
    if train.n_features == 2:
        partition = PartitionLiveView()
        partition.set_data(train)
        partition.update(snapshots[-1])
        assert set(partition.view.sources[0].data["color"]) <= set(classes.values())


def test_class_colours_avoid_every_task_colour_in_use():
    from explorer.viz.style import task_colors

    for n_tasks in (1, 2, 5, 8):
        for n_classes in (2, 4, 10):
            colors = class_palette(n_classes, task_colors(n_tasks))
            assert len(set(colors)) == n_classes
            if n_tasks <= 5 and n_classes <= 4:
                assert min(np.linalg.norm(_lab(a) - _lab(b)) for a in task_colors(n_tasks)
                           for b in colors) > 30


def test_the_gain_chart_shows_the_last_split_after_the_fit():
    """At a leaf the chart keeps the newest split on screen (its gains, its IG_J line, the
    title saying so): after a fit it is not empty."""
    _, _, gains, snapshots = _grow("local_relatedness")
    bars = gains.bars
    last_split = max(k for k, s in enumerate(snapshots) if s.info["node"]["gains"] is not None)
    for snapshot in snapshots[:last_split + 1]:
        gains.update(snapshot)
    node = snapshots[last_split].info["node"]
    assert bars.ig_j_line.visible and bars.ig_j_line.location == pytest.approx(
        node["gains"]["ig_j"])
    assert bars.figure.y_range.end >= node["gains"]["ig_j"]    # the line is on the chart
    assert bars.figure.title.text.startswith(f"node {node['node']}: IG_M")
    for snapshot in snapshots[last_split + 1:]:
        gains.update(snapshot)
    assert snapshots[-1].info["node"]["gains"] is None         # the fit ended on a leaf
    np.testing.assert_allclose(bars.source.data["gain"],
                               np.nan_to_num(node["gains"]["task"]), rtol=1e-6)
    assert max(bars.source.data["gain"]) > 0
    assert bars.ig_j_line.visible and bars.ig_j_line.location == pytest.approx(
        node["gains"]["ig_j"])
    assert bars.figure.title.text.startswith(f"last split, node {node['node']}: IG_M")
    # a leaf with no split before it (a tree that is one leaf): nothing to show
    bars.update({**snapshots[-1].info["node"], "node": 0}, None)
    assert not bars.ig_j_line.visible and max(bars.source.data["gain"]) == 0
    assert bars.figure.title.text == "node 0: a leaf, no split"
    gains.update(snapshots[last_split])                       # scrubbed back to a split
    assert bars.ig_j_line.visible
    gains.clear()
    assert not bars.ig_j_line.visible


@pytest.mark.parametrize("depth", [4, 5, 6])
def test_a_full_tree_of_depth_4_to_6_has_no_overlapping_labels(depth):
    """Noisy labels grow (nearly) every node to the depth limit: the widest trees of that
    depth. No two boxes (nor two early-leaf squares) overlap and each label fits its box at
    the font drawn; deep split nodes show their feature only."""
    train, view, _, snapshots = _grow("local_relatedness", depth=depth,
                                      params={"label_noise": 0.5, "n_samples_per_task": 2000})
    nodes = snapshots[-1].info["tree"]
    assert len(nodes) >= 0.8 * (2 ** (depth + 1) - 1)          # (nearly) full
    for snapshot in snapshots:
        view.update(snapshot)
    diagram = view.diagram
    _check_readable(diagram)
    d = diagram.nodes.data
    depth_of = {n["node"]: n["depth"] for n in nodes}
    for node_id, text, full in zip(d["node"], d["text"], d["full"], strict=True):
        if " <= " in full:
            deep = depth_of[node_id] >= diagram.compact_depth
            assert ("\n" not in text and "≤" not in text) if deep else "≤" in text, text


def test_every_text_of_the_tree_and_the_gain_chart_is_at_least_12_px():
    """The browser's scale never takes a label below 12 px (a wider tree is panned), and
    every other text of the figures is at least 12 px (9 pt) at scale 1."""
    from test_figure_fonts import font_px, texts_of

    view, gains = TreeDiagramView(), GainBarsView()
    diagram = view.diagram
    assert diagram.min_scale * min(diagram.font_px, diagram.item_font_px) >= 12
    assert diagram.legend_font_px >= 12
    for fig in (diagram.figure, gains.bars.figure):
        for where, size in texts_of(fig):
            assert font_px(size) >= 12, (where, size)


def test_a_tree_past_the_node_limit_says_it_is_cut_and_how_much_is_drawn():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(4000, 2))
    task = np.repeat([0, 1], 2000)
    # 32 labels along x0 for T0, along x1 for T1: a full depth-8 tree (511 nodes)
    y = np.where(task == 0, np.floor(X[:, 0] * 32), np.floor(X[:, 1] * 32)).astype(int)
    data = MultiTaskDataset(X, y, task)
    snapshots = list(MTDecisionTree(max_depth=8, random_state=0).fit_iter(X, y, task))
    n_total = len(snapshots[-1].info["tree"])
    assert n_total > TreeDiagramView.max_nodes
    view = TreeDiagramView()
    view.set_data(data)
    diagram = view.diagram
    limit = TreeDiagramView.max_nodes
    before = next(s for s in snapshots if len(s.info["tree"]) == limit)
    view.update(before)
    assert not diagram.note.visible and "drawn" not in diagram.figure.title.text
    first_cut = next(s for s in snapshots if len(s.info["tree"]) > limit)
    view.update(first_cut)                 # the frame that cuts it says so at once
    assert f"first {limit} of {len(first_cut.info['tree'])} nodes" in diagram.note.text
    start = time.perf_counter()
    for snapshot in snapshots:
        view.update(snapshot)
    per_frame = (time.perf_counter() - start) / len(snapshots)
    assert per_frame < 0.02                # the runner sends up to 15 frames a second
    assert diagram.note.visible
    assert f"first {limit} of {n_total} nodes" in diagram.note.text
    assert f"{n_total} nodes, the first {limit} drawn" in diagram.figure.title.text
    drawn = diagram.nodes.data
    assert len([t for t in drawn["text"] if t not in ("pending", "not drawn")]) == limit
    assert "not drawn" in drawn["text"] and "pending" not in drawn["text"]
    _check_readable(diagram)
    view.update(before)                       # scrubbed back under the limit: no note
    assert not diagram.note.visible and "not drawn" not in diagram.nodes.data["text"]


def test_a_new_data_set_retargets_the_same_figure_and_empties_it():
    _, view, _, snapshots = _grow("digits_tasks", depth=3)
    for snapshot in snapshots:
        view.update(snapshot)
    figure, legend = view.diagram.figure, view.diagram.task_legend
    other = make_dataset("local_relatedness", {}, random_state=0)
    view.set_data(other)
    assert view.figures[0] is figure and view.diagram.task_legend is legend
    assert len(legend.items) == 1 + other.n_tasks and not view.diagram.nodes.data["x"]
    assert not view.diagram.note.visible


def test_a_data_set_of_the_same_size_relabels_the_legends_without_new_models():
    _, view, _, _ = _grow("local_relatedness", depth=2)
    legend = view.diagram.task_legend
    items = list(legend.items)
    other = make_dataset("local_relatedness", {}, random_state=1)
    renamed = other.relabel(task_names=[f"task {t}" for t in range(other.n_tasks)])
    view.set_data(renamed)
    assert list(legend.items) == items   # the same LegendItem models
    assert [item.label.value for item in legend.items[1:]][:other.n_tasks] == \
        [f"task {t}" for t in range(other.n_tasks)][:len(items) - 1]


def test_tidy_layout_packs_a_narrow_subtree_under_a_wide_neighbours_short_branch():
    # 0 -> (1, 2); 1 -> (3, 4) wide leaves; 2 -> (5, 6); 6 -> (7, 8)
    children = {0: (1, 2), 1: (3, 4), 2: (5, 6), 6: (7, 8)}
    extent = {n: (-10.0, 10.0) for n in range(9)}
    extent[1] = (-60.0, 60.0)                  # a wide box over narrow children
    x = tidy_x(children, extent, gap=4)
    by_depth = {0: [0], 1: [1, 2], 2: [3, 4, 5, 6], 3: [7, 8]}
    for nodes in by_depth.values():
        spans = sorted((x[n] + extent[n][0], x[n] + extent[n][1]) for n in nodes)
        assert all(b[0] - a[1] >= 4 - 1e-9 for a, b in zip(spans, spans[1:], strict=False))
    assert x[0] == pytest.approx((x[1] + x[2]) / 2)
    # the wide box forces its subtree apart only at its own depth
    assert x[2] - x[1] == pytest.approx(60 + 4 + 10)
