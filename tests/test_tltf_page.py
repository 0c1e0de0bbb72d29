"""The "Transfer (TL-TF)" page in-process: phi beside the truth, Psi's scale, the gate's sliders
(no fit on a move), the held-out table against a direct computation, Figure 1 off the loop."""

from __future__ import annotations

import numpy as np

from explorer.compare.transfer import held_out_tasks, zero_shot_table
from explorer.models import TLTF
from explorer.viz.tltf import PhiView, PsiScaleView, match_clusters
from tests.test_model_pages import build, panel_of, run


def test_transfer_page_shows_phi_psi_gate_table_and_figure1(monkeypatch):
    page = build("transfer")
    transfer = panel_of(page, "TransferPanel")
    assert transfer.layout in page._layout.objects   # a section under the page
    assert len(transfer.gate_row) == 1              # the gate's figures come with a fit
    model = run(page)
    assert isinstance(model, TLTF) and model.gate_ == "task_features"
    assert len(transfer.gate_row) == 1 + len(transfer.gate.figures)
    phi_view = next(v for v in page.views if isinstance(v, PhiView))
    truth = page.state.train.truth["clusters"]
    order = match_clusters(model.phi_, truth)
    np.testing.assert_allclose(phi_view.phi.values, model.phi_[:, order])
    np.testing.assert_array_equal(phi_view.truth.values, np.eye(truth.max() + 1)[truth])
    assert "adjusted Rand index **1.00**" in page.summary_text()
    psi = next(v for v in page.views if isinstance(v, PsiScaleView)).curve.source.data
    assert psi["x"] == list(range(1, model.n_iter_ + 1))
    assert psi["y"][-1] < psi["y"][0]           # the bound shrinks Psi (see the module doc)

    # the table is the direct computation on the same data, seed and H
    direct = zero_shot_table(page.state.dataset, n_clusters=3, random_state=0)
    for name, row in direct.items():
        assert f"| {name} | {row['mean AP']:.3f} | {row['P@10']:.3f} |" in transfer.table.object

    # a slider move evaluates the fitted gate, and never fits
    def no_fit(*args, **kwargs):
        raise AssertionError("a slider move must not fit")

    monkeypatch.setattr(TLTF, "fit", no_fit)
    sliders = transfer.sliders.objects
    assert len(sliders) == page.state.train.task_features.shape[1]
    held = held_out_tasks(page.state.train.n_tasks)[1]
    for slider, value in zip(sliders, page.state.dataset.task_features[held[1]], strict=True):
        slider.value = float(np.clip(value, slider.start, slider.end))
    shown = transfer.gate.bar_source.data["p"]
    expected = model.gate_probabilities([s.value for s in sliders])
    np.testing.assert_allclose(shown, expected)
    image = transfer.gate.image_source.data["image"][0]
    assert image.shape == (transfer.gate.GRID, transfer.gate.GRID)
    assert np.nanmin(image) >= 0 and np.nanmax(image) <= 1
    monkeypatch.undo()

    # Figure 1 (without a loop, computed at once after the fit)
    assert type(transfer.figure1[0]).__name__ == "Bokeh"
    page.runner.reset()                  # cleared in place, never hidden
    assert transfer.layout.visible and transfer.table.object == ""
    assert transfer.gate.model is None and "Run the fit" in transfer.sliders.objects[0].object


def test_transfer_page_without_task_features_says_so():
    page = build("transfer", dataset="task_family")
    page.params.n_clusters = 2
    model = run(page)
    assert model.gate_ == "constant"
    transfer = panel_of(page, "TransferPanel")
    assert "needs task features" in transfer.table.object
    assert "constant" in transfer.sliders.objects[0].object


def test_served_figure1_is_shown_from_the_work_service_and_stops_on_reset():
    from explorer.app.work import WorkService
    from tests.test_work import FakeLoop

    page = build("transfer")
    loop = FakeLoop()
    page.state.work = WorkService(loop.schedule)
    transfer = panel_of(page, "TransferPanel")
    run(page)
    assert "fitting TL-TF and TL-MC" in transfer.figure1[0].object   # said at once
    assert loop.run(2, timeout=120) == 2            # computed off the loop, shown on it
    assert type(transfer.figure1[0]).__name__ == "Bokeh"
    page.runner.reset()
    transfer._figure1_cache.clear()
    run(page)
    loop.run(1)                                     # started on a work thread ...
    page.runner.reset()                             # ... and its fit's inputs are gone
    loop.run(1, timeout=120)
    assert transfer.figure1[0].object == "" and not page.state.work.pending(
        "transfer.TransferPanel")
