"""Print ``name==version`` for every direct dependency of pyproject.toml at its lower bound.

pip has no "lowest" resolution; these pins, given to pip as constraints, install the oldest
versions the project declares, so CI can check that the declared range is a tested range.
A dependency without a ``>=`` bound is an error: an untested floor would not be a floor.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    sys.exit("lowest_pins.py needs Python >= 3.11 (tomllib)")

_LOWER = re.compile(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$")


def lowest_pins(pyproject: Path) -> list[str]:
    """``["numpy==1.24", ...]``: each of ``[project].dependencies`` at its ``>=`` bound."""
    dependencies = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    pins = []
    for requirement in dependencies:
        name, _, spec = _LOWER.match(requirement).groups()
        floor = [part.strip()[2:] for part in spec.split(",") if part.strip().startswith(">=")]
        if not floor:
            raise SystemExit(f"{requirement!r} has no lower bound (>=)")
        pins.append(f"{name}=={floor[0]}")
    return pins


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    print("\n".join(lowest_pins(root / "pyproject.toml")))
