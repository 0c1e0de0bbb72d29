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
