"""The README and docs/ stay true: links resolve inside the repository, the
architecture page names files that exist and the pass order the pipeline runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from lazyarr.optimize.pipeline import PASSES

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)", flags=re.M)
EXTERNAL = ("http://", "https://", "mailto:")


def relative_links(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    targets = [m.group(1) for m in (*LINK.finditer(text), *REFERENCE.finditer(text))]
    return [t for t in targets if not t.startswith(EXTERNAL) and not t.startswith("#")]


def test_the_readme_links_the_architecture_page():
    assert "docs/architecture.md" in relative_links(ROOT / "README.md")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves_to_a_file_in_the_repository(page):
    for target in relative_links(page):
        path = (page.parent / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(ROOT), f"{page.name}: {target} points outside the repository"
        assert path.exists(), f"{page.name}: {target} does not exist"


def test_the_link_pattern_finds_links():
    text = 'see [a](docs/x.md), [b](y.md "title"), [c](https://e.org) and [d](#top)\n[e]: z.md\n'
    assert [m.group(1) for m in LINK.finditer(text)] == [
        "docs/x.md",
        "y.md",
        "https://e.org",
        "#top",
    ]
    assert [m.group(1) for m in REFERENCE.finditer(text)] == ["z.md"]


ARCHITECTURE = ROOT / "docs" / "architecture.md"


def test_architecture_gives_the_pass_order_the_pipeline_runs():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    order = " → ".join(PASSES)
    assert order in text
    defaults = yaml.safe_load((ROOT / "lazyarr" / "config.yaml").read_text())
    assert defaults["optimize"]["passes"] == list(PASSES)
    numbered = re.findall(r"^\d+\. \*\*(\w+)\*\*", text, flags=re.M)
    assert numbered == list(PASSES)


def test_architecture_names_only_files_that_exist():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:lazyarr/|tests/)?[\w]+(?:/[\w.]+)+/?)`", text))
    assert len(paths) > 20
    missing = [
        p for p in sorted(paths) if not (ROOT / p).exists() and not (ROOT / "lazyarr" / p).exists()
    ]
    assert not missing, missing


def test_architecture_names_only_modules_that_exist():
    text = ARCHITECTURE.read_text(encoding="utf-8")
    names = set(re.findall(r"`(\w+\.py)`", text))
    assert len(names) > 30
    existing = {p.name for p in (ROOT / "lazyarr").rglob("*.py")}
    assert not names - existing, sorted(names - existing)
