"""Imports point one way (issue 13): no import cycle, and no import against the layers.

The layers are the import-linter contract in ``pyproject.toml`` (``[tool.importlinter]``):
cli -> api -> runner -> planning -> packet / verifier / providers -> state / proc /
errors. Both checks read the real import graph (grimp), function-level and
``TYPE_CHECKING`` imports included: a lazy import still couples two modules.
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
PACKAGE = "prompt_runner"


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(PACKAGE, include_external_packages=False, cache_dir=None)


def cycles(graph: grimp.ImportGraph) -> Iterator[list[str]]:
    """Each strongly connected set of two or more modules (Tarjan, iterative)."""
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(edges[start]))]
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
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        yield sorted(members)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(edges[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])


def describe(graph: grimp.ImportGraph, members: list[str]) -> str:
    """One line per import inside the cycle: ``a -> b (line 12, 40)``."""
    inside = set(members)
    lines = []
    for importer in members:
        for imported in sorted(graph.find_modules_directly_imported_by(importer) & inside):
            details = graph.get_import_details(importer=importer, imported=imported)
            at = ", ".join(str(d["line_number"]) for d in details)
            lines.append(f"  {importer} -> {imported} (line {at})")
    return "\n".join(lines)


def test_no_import_cycle_between_internal_modules(graph: grimp.ImportGraph) -> None:
    found = [describe(graph, members) for members in cycles(graph)]
    assert not found, "import cycles:\n" + "\n\n".join(found)


def test_imports_follow_the_layers(capsys: pytest.CaptureFixture[str]) -> None:
    code = lint_imports(config_filename=str(PYPROJECT), no_cache=True, no_logo=True)
    out = capsys.readouterr().out
    assert code == 0, out


def test_every_top_level_module_has_a_layer(graph: grimp.ImportGraph) -> None:
    config = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    placed = {
        name.strip().strip("()")
        for layer in contract["layers"]
        for part in layer.split("|")
        for name in part.split(":")
    }
    children = {m.rsplit(".", 1)[1] for m in graph.find_children(PACKAGE)}
    assert children - placed == set(), "give each module its layer in pyproject.toml"


def test_the_cycle_finder_finds_a_cycle(tmp_path: Path) -> None:
    """The check above can fail: two modules importing each other lazily are a cycle."""
    package = tmp_path / "looped"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from . import b\n")
    (package / "b.py").write_text("from . import a\n")
    (package / "c.py").write_text("from . import a\n")
    sys.path.insert(0, str(tmp_path))
    try:
        looped = grimp.build_graph("looped", cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))
    assert list(cycles(looped)) == [["looped.a", "looped.b"]]
