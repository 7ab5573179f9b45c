"""examples/tour.ipynb runs top to bottom on a real Jupyter kernel and shows its pictures."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "tour.ipynb"


def outputs(nb, kind: str) -> list[str]:
    """Every output's ``kind`` data (e.g. text/html) across the code cells."""
    found = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if kind in data:
                found.append(data[kind])
    return found


def test_tour_notebook_runs_and_shows_reprs_and_plans(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # silences jupyter_core's path warning
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()

    errors = [
        out
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert errors == []
    html = outputs(nb, "text/html")
    assert any("lazyarr-repr" in h for h in html), "the lazy array's HTML repr"
    assert any('class="lazyarr-explain"' in h for h in html), "explain's HTML"
    plans = [h for h in html if 'class="lazyarr-plan"' in h]
    plans += [s for s in outputs(nb, "image/svg+xml") if 'class="lazyarr-plan"' in s]
    assert len(plans) >= 3  # optimized, raw, measured
    text = "\n".join(outputs(nb, "text/plain"))
    assert "Stages (in run order)" in text and "measured  " in text
    streams = "".join(
        out.get("text", "")
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )
    assert "same as the numpy executor: True" in streams
    assert "Traceback" not in streams
    assert (tmp_path / "tour-plan.html").read_text().startswith("<!DOCTYPE html>")
