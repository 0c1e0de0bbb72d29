"""``panel serve apps/explorer.py``: the MTL Explorer app (see :func:`explorer.app.build_app`)."""

import os
import sys

# Panel runs this file with its own folder first on sys.path, where this very file
# ("explorer.py") would shadow the ``explorer`` package; Panel restores sys.path afterwards.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _HERE]

from explorer.app import build_app, configure_process, warm_up_kernels  # noqa: E402

configure_process()  # once per process: BLAS threads, warnings routed
warm_up_kernels()  # once per process: compiled kernels are ready before the first click
build_app().servable(title="MTL Explorer")
