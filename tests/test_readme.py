"""The README is a user's document: its examples run as printed, it is short, and it carries no
commit hashes or load averages (measured figures live in benchmarks/RESULTS.md). The model
page in docs/DESIGN.md is written as the real pages are (derived with ``from_constraint``).
Every reference to the design document names a file that is in the repository."""

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


def test_the_model_page_example_declares_no_bound_by_hand():
    """Every setting of the design document's model page ("Adding a model page") is derived
    from its estimator's ``_parameter_constraints`` (the project's rule), as the shipped
    pages' are; the example runs as printed."""
    from explorer.app.kit import ModelPage
    from explorer.models.constraints import derived_from
    from explorer.parameters import public_parameters

    pages = []
    design = ROOT / "docs" / "DESIGN.md"
    for block in re.findall(r"```python\n(.*?)```", design.read_text(), flags=re.S):
        namespace = {}
        if "ModelPage(" in block:
            exec(compile(block, str(design), "exec"), namespace)  # noqa: S102
            pages += [value for value in namespace.values() if isinstance(value, ModelPage)]
    assert pages, "the design document shows no model page"
    for page in pages:
        names = public_parameters(page.params)
        assert names
        hand_made = [name for name in names if not derived_from(page.params.param[name])]
        assert not hand_made, f"declared by hand in the design document's page: {hand_made}"


def test_the_readme_is_short_and_carries_no_commit_hashes_or_load_averages():
    text = README.read_text()
    lines = text.splitlines()
    assert len(lines) < 250, f"the README has {len(lines)} lines"
    hashes = re.findall(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b", text)
    assert not hashes, f"commit hashes in the README: {hashes}"
    loads = re.findall(r"load[ -]?av(?:erage|g)s?|\bload \d", text, flags=re.I)
    assert not loads, f"load averages in the README: {loads}"
    assert "](benchmarks/RESULTS.md)" in text and (ROOT / "benchmarks" / "RESULTS.md").is_file()


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
