"""The MTL Explorer app: a Panel template with the scenario sidebar and the registered pages.

``panel serve apps/explorer.py`` and ``python -m explorer serve`` both serve
:func:`build_app`; in a notebook, ``ExplorerApp()`` shows the same sidebar and pages.

* :mod:`~explorer.app.state`: the session's settings and the data built from them (no Panel).
* :mod:`~explorer.app.shell`: the sidebar beside the main area, page switching.
* :mod:`~explorer.app.sidebar`: the sidebar's widgets and forms.
* :mod:`~explorer.app.serving`: one session's template, its link, its end; the server.
"""

from explorer.app.process import configure_process, warm_up_kernels
from explorer.app.serving import (
    CHECK_SESSIONS_MS,
    SESSION_LIFETIME_MS,
    TITLE,
    ExplorerTemplate,
    bind_url,
    build_app,
    serve,
)
from explorer.app.shell import ExplorerApp, hidden_pages_rule
from explorer.app.sidebar import DataParamsForm

__all__ = ["CHECK_SESSIONS_MS", "SESSION_LIFETIME_MS", "TITLE", "DataParamsForm",
           "ExplorerApp", "ExplorerTemplate", "bind_url", "build_app", "configure_process",
           "hidden_pages_rule", "serve", "warm_up_kernels"]
