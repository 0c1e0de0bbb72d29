"""One self-contained HTML document of Bokeh figures and HTML fragments: Bokeh's JavaScript
inline and nothing else to fetch, so it opens offline, from a file or an e-mail.

Not ``bokeh.embed.file_html(..., resources=INLINE)``: Bokeh's resources list the
``__javascript__`` and ``__css__`` of every model class imported in the process, and once
Panel is imported that adds Panel's extension files as relative ``static/extensions/panel/...``
links, which a saved file cannot load. The figures here are Bokeh's own models; they need
Bokeh's inline code (``Resources.js_raw``) and their ``components`` only. A figure drawn in
a served page also carries the template's theme as style sheets linked relative to the
server (``static/extensions/panel/...``); in the file they point at an empty ``data:`` style
sheet (:func:`_offline_style_sheets`): the figure draws the same, and nothing is fetched.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

__all__ = ["standalone_html"]

#: An imported style sheet's URL in Bokeh's serialised document, unless it is absolute or
#: already data: what a saved file cannot fetch.
_RELATIVE_STYLE_SHEET = re.compile(
    r'("name":"ImportedStyleSheet","id":"[^"]+","attributes":\{"url":")'
    r'(?!data:|https?:|file:)[^"]*(")')


def _offline_style_sheets(script: str) -> str:
    """``script`` (Bokeh's ``components``) with every relative style sheet URL replaced by
    an empty ``data:`` style sheet.

    >>> _offline_style_sheets('{"name":"ImportedStyleSheet","id":"p1","attributes":'
    ...                       '{"url":"static/a.css?v=1"}}')
    '{"name":"ImportedStyleSheet","id":"p1","attributes":{"url":"data:text/css,"}}'
    """
    return _RELATIVE_STYLE_SHEET.sub(r"\1data:text/css,\2", script)


def standalone_html(blocks: Sequence, title: str, css: str = "") -> str:
    """The document of ``blocks`` in order: each a trusted (already escaped) HTML string or
    a Bokeh model, drawn by Bokeh's JavaScript inline. ``css`` goes into the head.

    >>> from bokeh.plotting import figure
    >>> page = standalone_html(["<h1>Hi</h1>", figure()], "a <title>")
    >>> "<title>a &lt;title&gt;</title>" in page, "static/" in page, "<script src" in page
    (True, False, False)
    """
    from bokeh.embed import components
    from bokeh.resources import Resources

    figures = [block for block in blocks if not isinstance(block, str)]
    resources = Resources(mode="inline", components=["bokeh"])
    scripts = "\n".join(f"<script>{code}</script>" for code in resources.js_raw)
    styles = "\n".join(f"<style>{code}</style>" for code in resources.css_raw)
    script, divs = components(figures) if figures else ("", [])
    script = _offline_style_sheets(script)
    divs = iter(divs)
    body = "\n".join(block if isinstance(block, str) else f'<div class="figure">{next(divs)}</div>'
                     for block in blocks)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>{css}</style>
{styles}
{scripts}
</head>
<body>
{body}
{script}
</body>
</html>
"""
