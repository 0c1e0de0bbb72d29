"""Parts small enough to read in one sitting: no class in explorer/app over 200 lines, no
function (or method) over 60 (issue 40, "Must hold").

Sizes are measured with :mod:`ast` on the source, from the ``class`` / ``def`` line to the
last line of the body (``end_lineno - lineno + 1``: docstrings and comments count, the
decorators above do not), for every class and function, nested ones included.

``python tests/test_app_sizes.py [ROOT]`` prints the sizes over the limits of the tree at
ROOT (default: this checkout) and the largest class and function.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLASS_LIMIT, FUNCTION_LIMIT = 200, 60


def sizes(root: Path = ROOT) -> list[tuple[int, str, str]]:
    """(lines, "class" or "function", "path:line name") of every class and function under
    ``root``/explorer/app, largest first."""
    found = []
    for path in sorted((Path(root) / "explorer" / "app").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                where = f"{path.relative_to(root)}:{node.lineno} {node.name}"
                found.append((node.end_lineno - node.lineno + 1, kind, where))
    return sorted(found, reverse=True)


def over_the_limits(root: Path = ROOT) -> list[str]:
    """"lines kind path:line name" of each class over 200 lines and function over 60."""
    limit = {"class": CLASS_LIMIT, "function": FUNCTION_LIMIT}
    return [f"{lines} {kind} {where}" for lines, kind, where in sizes(root)
            if lines > limit[kind]]


def test_no_class_in_the_app_over_200_lines_and_no_function_over_60():
    offenders = over_the_limits()
    assert not offenders, ("split these (no class in explorer/app over "
                           f"{CLASS_LIMIT} lines, no function over {FUNCTION_LIMIT}): "
                           + "; ".join(offenders))


def test_the_measure_sees_classes_functions_and_methods(tmp_path):
    app = tmp_path / "explorer" / "app"
    app.mkdir(parents=True)
    body = "\n".join(f"        x{i} = {i}" for i in range(60))
    (app / "big.py").write_text(f"class Big:\n    @staticmethod\n    def long():\n{body}\n"
                                + "\n".join(f"    y{i} = {i}" for i in range(140)) + "\n")
    assert over_the_limits(tmp_path) == ["203 class explorer/app/big.py:1 Big",
                                         "61 function explorer/app/big.py:3 long"]


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    print("\n".join(over_the_limits(root)) or "none over the limits")
    found = sizes(root)
    for kind in ("class", "function"):
        lines, _, where = next(s for s in found if s[1] == kind)
        print(f"largest {kind}: {where} ({lines} lines)")
