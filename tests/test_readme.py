"""The README's library example runs as printed; every reference to the design document
names a file that is in the repository."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

#: Where the project's prose, code and messages live (and what they may cite).
SEARCHED = ("README.md", "pyproject.toml", "explorer", "notebooks", "tests", "benchmarks",
            "apps", "examples", "docs")
TEXT_SUFFIXES = {".py", ".md", ".ipynb", ".sh", ".toml", ".txt", ".cfg", ".json", ".rst"}
#: A path-like word that names a design document: ``docs/DESIGN.md``, ``DESIGN.md``, ...
DESIGN_REFERENCE = re.compile(r"[\w./-]*DESIGN[\w.-]*")


def test_library_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "the README has no python example"
    for block in blocks:
        exec(compile(block, str(README), "exec"), {})  # noqa: S102 -- our own README
    out = capsys.readouterr().out
    assert "[" in out   # it printed the per-task scores and the matrices


def _searched_files():
    for name in SEARCHED:
        path = ROOT / name
        candidates = [path] if path.is_file() else sorted(path.rglob("*"))
        for candidate in candidates:
            if (candidate.is_file() and candidate.suffix in TEXT_SUFFIXES
                    and "__pycache__" not in candidate.parts
                    and candidate != Path(__file__).resolve()):
                yield candidate


def test_every_reference_to_the_design_document_names_a_file_in_the_repository():
    references, broken = 0, []
    for path in _searched_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for match in DESIGN_REFERENCE.finditer(line):
                references += 1
                target = match.group().rstrip(".")   # a sentence's full stop
                if target.startswith("/") or not (ROOT / target).is_file():
                    broken.append(f"{path.relative_to(ROOT)}:{number}: {match.group()}")
    assert (ROOT / "docs" / "DESIGN.md").is_file()
    assert references, "nothing refers to the design document"
    assert not broken, "references to a design document that is not in the repository:\n" + \
        "\n".join(broken)
