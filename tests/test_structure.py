"""Structure enforced by machines: layer contracts and lint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

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
