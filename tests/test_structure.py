"""Structure enforced by machines: layer contracts and lint."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed (it is in the 'test' extra)")
    return found


def test_import_layers_hold():
    """DESIGN.md's import directions, checked by import-linter (pyproject.toml)."""
    run = subprocess.run(
        [_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


def test_only_config_reads_the_environment_or_imports_numba_directly():
    offenders = []
    for path in (ROOT / "lazyarr").rglob("*.py"):
        text = path.read_text()
        rel = path.relative_to(ROOT).as_posix()
        if not rel.startswith("lazyarr/config/") and ("os.environ" in text or "getenv(" in text):
            offenders.append(rel)
    assert offenders == []


def test_modules_stay_small():
    big = {
        p.relative_to(ROOT).as_posix(): n
        for p in (ROOT / "lazyarr").rglob("*.py")
        if (n := len(p.read_text().splitlines())) > 700
    }
    assert big == {}, f"modules over 700 lines: {big}"


def _module_names() -> dict[str, Path]:
    """Every lazyarr module by dotted name (a package by its ``__init__``)."""
    names = {}
    for path in (ROOT / "lazyarr").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _imported(node: ast.AST, package: str, modules: dict[str, Path]) -> list[str]:
    """The lazyarr modules an import statement names (``from p import m``: module ``p.m``)."""
    if isinstance(node, ast.Import):
        named = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*parts, *([node.module] if node.module else [])])
        named = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    else:
        return []
    found = []
    for name in named:
        while name and name not in modules:  # an attribute of a module: that module
            name = name.rpartition(".")[0]
        if name:
            found.append(name)
    return found


def import_graph() -> nx.DiGraph:
    """Module -> the lazyarr modules it imports, anywhere in it: at the top, inside
    functions, under ``if TYPE_CHECKING`` (a circle hidden in a function is still one)."""
    modules = _module_names()
    graph = nx.DiGraph()
    for name, path in modules.items():
        graph.add_node(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in _imported(node, package, modules):
                if target != name:
                    graph.add_edge(name, target, line=node.lineno)
    return graph


def test_no_import_circles_between_lazyarr_modules():
    """Imports only point down, within packages too: no module reaches one that imports it."""
    graph = import_graph()
    assert graph.number_of_edges() > 200  # the walk sees lazyarr's imports
    assert graph.has_edge("lazyarr.namespace.compaction", "lazyarr.namespace.index_arithmetic")
    circles = [
        " -> ".join(f"{a} (line {graph.edges[a, b]['line']})" for a, b in zip(c, [*c[1:], c[0]]))
        for c in nx.simple_cycles(graph)
    ]
    assert circles == [], "\n".join(circles)


def test_the_circle_check_sees_imports_inside_functions(tmp_path, monkeypatch):
    """A circle closed by an import inside a function is found (the check can fail)."""
    pkg = tmp_path / "lazyarr"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from lazyarr.b import g\n\ndef f():\n    return g()\n")
    (pkg / "b.py").write_text("def g():\n    from lazyarr import a\n\n    return a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = import_graph()
    assert [sorted(c) for c in nx.simple_cycles(graph)] == [["lazyarr.a", "lazyarr.b"]]
