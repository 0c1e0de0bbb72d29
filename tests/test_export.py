"""The page's "Figures (HTML)" export, whatever document Bokeh holds current."""

from bokeh.document import Document
from bokeh.io.doc import patch_curdoc
from bokeh.plotting import figure

from explorer.app.export import figures_html


def test_figures_export_works_while_a_destroyed_document_is_current():
    # A served session's callback runs with its document patched in as Bokeh's curdoc(); an
    # expired session's destroyed document there once broke the export (the UI tour saw
    # "'DocumentCallbackManager' object has no attribute '_js_event_callbacks'").
    session = Document()
    shown, other = figure(title="shown"), figure(title="other")
    session.add_root(shown)
    session.add_root(other)     # exporting some of a document's roots: Bokeh makes a temp doc
    expired = Document()
    watcher = lambda event: None   # noqa: E731 (what a server session registers)
    expired.on_change(watcher)
    expired.destroy(watcher)       # what Bokeh does to an expired session's document
    with patch_curdoc(expired):
        page = figures_html([shown], "a page")
    assert '"shown"' in page and '"other"' not in page
    assert shown.document is session   # the session's document keeps its figure


def test_a_themed_figure_exports_without_the_servers_style_sheets():
    # A figure of a served page carries the template's theme as style sheets linked relative
    # to the server; the saved file would ask for them (the UI tour's offline viewer failed
    # on static/extensions/panel/.../bootstrap.css).
    from bokeh.models import ImportedStyleSheet

    themed = figure(title="themed")
    themed.stylesheets = [ImportedStyleSheet(url="static/extensions/panel/css/loading.css?v=1")]
    page = figures_html([themed], "a page")
    assert "static/extensions" not in page and "data:text/css," in page
    assert themed.stylesheets[0].url.startswith("static/")   # the live figure keeps its own


def _docs(page: str) -> list[dict]:
    """The figures (Bokeh's serialised roots) of an exported page."""
    import json
    import re

    text = re.search(r"const docs_json = '(.*?)';\n", page).group(1)
    docs = json.loads(text.encode().decode("unicode_escape"))
    return [root for doc in docs.values() for root in doc["roots"]]


def _references(node, found: dict) -> dict:
    """Every serialised model under ``node``, by id (a reference elsewhere is {"id": ...})."""
    if isinstance(node, dict):
        if node.get("type") == "object" and "attributes" in node:
            found[node["id"]] = node
        for value in node.values():
            _references(value, found)
    elif isinstance(node, list):
        for value in node:
            _references(value, found)
    return found


def test_the_truth_has_row_labels_and_the_agreement_its_text_in_the_file():
    """On the page the truth sits level with the estimate, whose task names label both, and
    the agreement is a caption beside them; in the file, figures one under another, the
    truth carries its own row labels and the agreement text follows the pair. The live
    figures (and the session that holds them) are not changed by the export."""
    from bokeh.layouts import row

    from explorer.data import make_task_family
    from explorer.models.base import Snapshot
    from explorer.viz.live import EstimateTruthView

    data = make_task_family(("related", "negated", "unrelated"), random_state=0)
    names = [str(n) for n in data.task_names]
    view = EstimateTruthView("similarity", "Learned similarity", "task_relation",
                             "True task relation")
    view.set_data(data)
    estimate = 0.8 * data.truth["task_relation"] + 0.05
    view.update(Snapshot(step=1, matrices={"similarity": estimate}))
    caption = view.caption.text
    assert caption.startswith("<b>Agreement with the truth</b>: sign right on")
    session = Document()
    session.add_root(row(*view.figures))
    changes = []
    session.on_change(changes.append)
    truth_axis = view.truth.heatmap.figure.yaxis[0]
    assert truth_axis.visible is False                    # on the page: labelled beside

    page = figures_html([view, figure(title="errors")], "a page")

    roots = _docs(page)
    titles = [_references(r, {})[r["attributes"]["title"]["id"]]["attributes"]["text"]
              for r in roots]
    assert titles == ["Learned similarity", "True task relation", "errors"]
    truth = roots[1]
    models = _references(truth, {})
    left = truth["attributes"]["left"][0]
    axis = models[left["id"]]["attributes"]
    assert axis.get("visible", True) is True               # the truth's rows are labelled
    y_range = models[truth["attributes"]["y_range"]["id"]]["attributes"]
    assert sorted(y_range["factors"]) == sorted(names)
    body = page.rsplit("</head>\n<body>", 1)[1]
    assert f'<p class="caption">{caption}</p>' in body     # the agreement, as on the page
    assert body.index('<p class="caption">') < body.rindex('<div class="figure">')  # errors
    assert truth_axis.visible is False and changes == []   # the live page untouched
    assert truth_axis.document is session
