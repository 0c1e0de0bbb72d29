"""The import graph of explorer/: no circle, and no import from a layer above the importer's.

Every ``import`` and ``from ... import`` of every module under explorer/ counts: at module
level, inside functions and methods, under ``if`` (read with :mod:`ast`, relative imports
resolved; ``from package import name`` is an import of the submodule ``package.name`` when
there is one, else of the package). Python also runs a package's ``__init__`` before any of
its submodules; that edge is not drawn (every package whose ``__init__`` gathers its
submodules would be a circle). ``importlib.import_module`` in explorer/app/custom.py and
explorer/compare/code.py loads a user's estimator and the module a class already came from,
never a module of its own choosing here.

The layers, bottom to top, are those of docs/DESIGN.md ("Layers"): :data:`LAYERS` for the
packages, :data:`APP_LAYERS` inside explorer/app. A module may import its own layer (no
circle) and the layers below it; a module that is in no layer fails
:func:`test_every_module_has_a_layer` until it is placed.

``python tests/test_imports.py [ROOT]`` prints the circles and upward imports of the tree
at ROOT (a checkout of another commit, say: ``git worktree add /tmp/old <commit>``).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _package(name: str) -> tuple[str, str]:
    """A package and everything under it."""
    return name, name + ".*"


#: The packages, bottom to top. The declarations (explorer/parameters.py: text <-> value for
#: ``param`` declarations, the one parser of untrusted input) and the compatibility layer
#: (explorer/_compat.py) import nothing of the project: every layer may use them.
LAYERS: tuple[tuple[str, Sequence[str]], ...] = (
    ("declarations", ("explorer", "explorer.parameters", "explorer._compat")),
    ("solvers", _package("explorer.solvers")),
    ("data", _package("explorer.data")),
    ("models", _package("explorer.models")),
    # the classroom's store and scoring (explorer/classroom.py) sit beside compare: they
    # score guesses with its agreement
    ("compare", (*_package("explorer.compare"), "explorer.classroom")),
    ("viz", _package("explorer.viz")),
    ("app", _package("explorer.app")),
    ("entry points", ("explorer.__main__", "explorer.notebook")),
)

#: Inside explorer/app, bottom to top.
APP_LAYERS: tuple[tuple[str, Sequence[str]], ...] = (
    ("off the loop, no Panel", ("explorer.app.work", "explorer.app.process",
                                "explorer.app.fit_session")),
    ("building blocks", ("explorer.app.access", "explorer.app.components",
                         "explorer.app.export", "explorer.app.widgets",
                         "explorer.app.scenarios", "explorer.app.class_link")),
    ("the live fit, a page's panels", ("explorer.app.runner", "explorer.app.page_panel")),
    ("parts every page shows", ("explorer.app.matrix_upload", "explorer.app.sweep_panel",
                                "explorer.app.comparison", "explorer.app.guess")),
    ("the kit's parts", ("explorer.app.page_fit", "explorer.app.page_flow",
                         "explorer.app.page_summary", "explorer.app.page_exports")),
    ("the kit", ("explorer.app.kit",)),
    ("the pages", ("explorer.app.custom", "explorer.app.pages.*")),
    ("the page registry", ("explorer.app.pages",)),
    ("the link", ("explorer.app.link",)),
    ("the session's state", ("explorer.app.state",)),
    ("the sidebar", ("explorer.app.sidebar",)),
    ("the shell", ("explorer.app.shell",)),
    ("serving", ("explorer.app.serving",)),
    ("the app's face", ("explorer.app",)),
)


# ---------------------------------------------------------------------- the graph
def modules(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file, of every module under ``root``/explorer."""
    found = {}
    for path in sorted((Path(root) / "explorer").rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool
              ) -> list[str]:
    """The dotted names an import statement of ``module`` loads."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        anchor = package[:len(package) - node.level + 1]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


def _loaded(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
            files: Mapping[str, Path]) -> list[str]:
    """The project's modules an import statement of ``module`` loads."""
    names = _imported(node, module, is_package)
    if isinstance(node, ast.ImportFrom):   # a submodule where there is one, else the package
        base, *members = names
        names = [n for n in members if n in files]
        if len(names) < len(members):
            names.append(base)
    loaded = []
    for name in names:
        while name and name not in files:   # import a.b.c: the module a.b.c is in
            name = name.rpartition(".")[0]
        if name and name != module:
            loaded.append(name)
    return loaded


def import_graph(root: Path = ROOT) -> dict[str, dict[str, int]]:
    """Importer -> {imported module of the project: line of the first such import}."""
    files = modules(root)
    graph: dict[str, dict[str, int]] = {}
    for module, path in files.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            for name in _loaded(node, module, path.name == "__init__.py", files):
                edges.setdefault(name, node.lineno)
        graph[module] = edges
    return graph


def circles(graph: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """Each set of modules that import each other in a circle (strongly connected, two or
    more), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(start: str) -> None:   # Tarjan's algorithm, iterative
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(components)


def one_way_round(graph: Mapping[str, Mapping[str, int]], component: list[str]) -> str:
    """A shortest circle from the first module of ``component`` back to it, as text."""
    members, start = set(component), component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node]):
                if child == start:
                    return " -> ".join([*paths[node], start])
                if child in members and child not in paths:
                    paths[child] = [*paths[node], child]
                    following.append(child)
        frontier = following
    raise AssertionError(f"{component} is no circle")   # pragma: no cover


def layer_of(module: str, layers=LAYERS) -> int | None:
    """Index of the layer that lists ``module`` (``name`` itself, or ``package.*`` for what
    is under a package), None when none does."""
    for position, (_, members) in enumerate(layers):
        for member in members:
            if member == module or (member.endswith(".*")
                                    and module.startswith(member[:-1])):
                return position
    return None


def _in_app(module: str) -> bool:
    return module == "explorer.app" or module.startswith("explorer.app.")


def upward_imports(graph: Mapping[str, Mapping[str, int]]) -> list[str]:
    """Every import of a module from a layer above the importer's (inside explorer/app: of
    :data:`APP_LAYERS`), as ``'importer (line) -> imported: layer -> higher layer'``."""
    found = []
    for importer, edges in sorted(graph.items()):
        for imported, line in sorted(edges.items()):
            layers = APP_LAYERS if _in_app(importer) and _in_app(imported) else LAYERS
            own, other = layer_of(importer, layers), layer_of(imported, layers)
            if own is not None and other is not None and other > own:
                found.append(f"{importer} (line {line}) -> {imported}: {layers[own][0]!r} "
                             f"imports {layers[other][0]!r}")
    return found


# ---------------------------------------------------------------------- the tests
def test_every_module_has_a_layer():
    found = modules()
    unplaced = [m for m in found if layer_of(m) is None
                or (_in_app(m) and layer_of(m, APP_LAYERS) is None)]
    assert not unplaced, ("place these modules in LAYERS / APP_LAYERS of tests/test_imports.py "
                          f"(and docs/DESIGN.md, 'Layers'): {unplaced}")
    listed = [member for _, members in (*LAYERS, *APP_LAYERS) for member in members
              if not member.endswith(".*")]
    assert not [m for m in listed if m not in found], "a layer lists a module that is gone"


def _described(graph, component: list[str]) -> str:
    return f"{len(component)} modules {component}, e.g. {one_way_round(graph, component)}"


def test_the_imports_of_explorer_run_in_no_circle():
    graph = import_graph()
    found = circles(graph)
    assert not found, "imports in a circle:\n" + "\n".join(_described(graph, c) for c in found)


def test_no_module_imports_from_a_layer_above_its_own():
    found = upward_imports(import_graph())
    assert not found, "imports from a layer above:\n" + "\n".join(found)


def test_the_graph_sees_imports_inside_functions_and_relative_ones(tmp_path):
    package = tmp_path / "explorer"
    (package / "app").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "app" / "__init__.py").write_text("from . import work\n")
    (package / "app" / "work.py").write_text("def later():\n    from .kit import x\n")
    (package / "app" / "kit.py").write_text("from explorer.app.work import later\n"
                                            "import explorer.models\n")
    (package / "models").mkdir()
    (package / "models" / "__init__.py").write_text("")
    (package / "models" / "base.py").write_text("from ..app import kit\n")
    graph = import_graph(tmp_path)
    assert graph["explorer.app"] == {"explorer.app.work": 1}
    assert graph["explorer.app.work"] == {"explorer.app.kit": 2}
    assert graph["explorer.app.kit"] == {"explorer.app.work": 1, "explorer.models": 2}
    assert circles(graph) == [["explorer.app.kit", "explorer.app.work"]]
    assert one_way_round(graph, ["explorer.app.kit", "explorer.app.work"]) == (
        "explorer.app.kit -> explorer.app.work -> explorer.app.kit")
    assert [line.split(":")[0] for line in upward_imports(graph)] == [
        "explorer.app.work (line 2) -> explorer.app.kit",
        "explorer.models.base (line 1) -> explorer.app.kit"]


if __name__ == "__main__":
    tree = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT
    graph = import_graph(tree)
    print(f"{len(graph)} modules, {sum(map(len, graph.values()))} imports under {tree}")
    for component in circles(graph):
        print("circle:", _described(graph, component))
    for line in upward_imports(graph):
        print("upward:", line)
