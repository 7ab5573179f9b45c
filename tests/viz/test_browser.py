"""The HTML report in a real browser: headless Chromium loads it offline, logs no console
message, shows the plan SVG, and takes a screenshot (kept under tmp_path, and copied to
bench/results/plan-screenshot.png, which git ignores, for the README and closing notes)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
from sample_plans import sample_plan, sample_stats

import lazyarr as la
from lazyarr.planview import visualize
from lazyarr.viz import measured_from, to_html

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = next(
    (
        path
        for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
        if (path := shutil.which(name))
    ),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium is not installed and could not be installed here "
    "(.ci/run installs the Debian package 'chromium' with apt-get when apt is available)",
)
CONSOLE = re.compile(r"CONSOLE[:(]\d+\)?\] (.*)")


def chromium(tmp_path: Path, page: Path, *action: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            "--enable-logging=stderr",
            "--v=0",
            *action,
            page.resolve().as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def console_messages(run: subprocess.CompletedProcess) -> list[str]:
    """Messages the page wrote to the console (our report has no scripts, so: errors)."""
    return [m.group(1) for m in CONSOLE.finditer(run.stderr)]


def load(tmp_path: Path, page: Path) -> str:
    """The DOM after load; fails on any console message."""
    run = chromium(tmp_path, page, "--dump-dom")
    assert run.returncode == 0, run.stderr[-3000:]
    assert console_messages(run) == [], console_messages(run)
    return run.stdout


def png_facts(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values in the pixel data) of a PNG file."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        if kind == b"IDAT":
            idat += data[pos + 8 : pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


def test_the_console_check_catches_errors(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text(
        '<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head><body>'
        "<script>console.error('boom'); notDefined();</script></body></html>"
    )
    messages = console_messages(chromium(tmp_path, page, "--dump-dom"))
    assert any("boom" in m for m in messages)
    assert any("notDefined" in m for m in messages)


def test_report_loads_cleanly_shows_the_plan_and_screenshots(tmp_path):
    x = la.random.random((4000, 100), chunks=(1000, 100), seed=0)
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    z = la.sqrt((y**2).sum(axis=1))
    result = z.compute(executor="numpy")
    xn = x.compute(executor="numpy")
    yn = (xn - xn.mean(axis=0)) / xn.std(axis=0)
    np.testing.assert_allclose(result, np.sqrt((yn**2).sum(axis=1)), rtol=1e-12)
    z.compute(executor="numpy")  # the last run is z's again
    with la.config.set({"memory-limit": "1MB"}):  # the fused stage goes red
        picture = visualize(z, measured=True, filename=tmp_path / "plan.html")
    dom = load(tmp_path, picture.path)
    assert re.search(r'<svg[^>]*class="lazyarr-plan"', dom)
    for name in picture.plan.stages:
        assert f'data-stage="{name}"' in dom
    assert "over-limit" in dom and "measured" in dom

    shot = tmp_path / "plan-screenshot.png"
    run = chromium(tmp_path, picture.path, f"--screenshot={shot}", "--window-size=1200,900")
    assert run.returncode == 0, run.stderr[-3000:]
    assert console_messages(run) == []
    width, height, distinct = png_facts(shot)
    assert (width, height) == (1200, 900)
    assert distinct > 40  # a drawn page, not a blank one
    results = ROOT / "bench" / "results"
    if results.is_dir():
        shutil.copyfile(shot, results / "plan-screenshot.png")


def test_placed_report_with_worker_bars_loads_cleanly(tmp_path):
    page = tmp_path / "placed.html"
    page.write_text(to_html(sample_plan(placed=True), "dask", None, measured_from(sample_stats())))
    dom = load(tmp_path, page)
    assert 'class="lazyarr-workers"' in dom and 'class="lazyarr-blockmap"' in dom
    assert 'class="lazyarr-plan"' in dom
