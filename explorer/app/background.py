"""Slow static results computed off the event loop and shown when ready (Figure 1 of TL-TF).

The live-fit runner covers fits; this covers a page's one-off computation that should not
delay the fit's summary: a daemon thread computes, a periodic check *on the event loop* (with
the session's document current, or a notebook kernel's loop) shows the result. Without
either (an in-process test, a script) the caller joins the returned thread and shows the
result itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import panel as pn

from explorer.app.runner import can_poll

__all__ = ["compute_off_loop"]


def compute_off_loop(compute: Callable[[], Any], show: Callable[[Any], None], *,
                     name: str = "page-background", period_ms: int = 300,
                     timeout_s: float = 120.0) -> threading.Thread:
    """Run ``compute()`` on a daemon thread; ``show(result)`` on the event loop when done.

    Returns the started thread. An exception in ``compute`` is shown as ``show(exc)``'s
    caller would not see it otherwise: the result is then the exception object.
    """
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["result"] = compute()
        except Exception as exc:   # handed to show() so the page can say what failed
            box["result"] = exc

    thread = threading.Thread(target=work, name=name, daemon=True)
    thread.start()
    if not can_poll():   # no server session and no notebook kernel: the caller shows it
        return thread
    callback = None

    def check() -> None:
        if "result" in box:
            callback.stop()
            show(box["result"])

    callback = pn.state.add_periodic_callback(check, period=period_ms,
                                              count=int(timeout_s * 1000 / period_ms))
    return thread
