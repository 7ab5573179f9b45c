"""examples/tour.ipynb: committed with its outputs, public API only, and it runs top to bottom
on a real Jupyter kernel without errors or TqdmWarning, showing its pictures.

Numbers (timings, values) are not compared: only that every cell runs and
that the pictures a reader expects are there.
"""

from __future__ import annotations

import json
import re
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


def all_output_text(nb) -> str:
    """Every output of every code cell as one text (streams, data of any type, errors)."""
    return json.dumps([cell.get("outputs", []) for cell in nb.cells])


def streams(nb) -> str:
    return "".join(
        out.get("text", "")
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )


def check_outputs(nb) -> None:
    """What a reader of the tour sees: reprs, plan pictures, plots, no error, no warning."""
    errors = [
        out
        for cell in nb.cells
        for out in cell.get("outputs", [])
        if out.get("output_type") == "error"
    ]
    assert errors == []
    everything = all_output_text(nb)
    assert "TqdmWarning" not in everything
    assert "Traceback" not in everything and "Warning" not in streams(nb)
    html = outputs(nb, "text/html")
    assert any("lazyarr-repr" in h and 'class="lazyarr-chunks"' in h for h in html), (
        "the lazy array's HTML repr with its block grid"
    )
    assert any('class="lazyarr-explain"' in h for h in html), "explain's HTML"
    assert any('class="lazyarr-last-run"' in h for h in html), "la.last_run()'s HTML"
    plans = [h for h in html if 'class="lazyarr-plan"' in h]
    assert len(plans) >= 3  # optimized, raw, measured
    assert any(">z (" in p for p in plans), "stages named by the user's names"
    assert len(outputs(nb, "image/png")) >= 2  # the histogram and the timing bars
    text = "\n".join(outputs(nb, "text/plain"))
    assert "Stages (in run order)" in text and "measured  " in text
    assert "same values as NumPy: True" in streams(nb)


def test_committed_notebook_has_outputs_and_uses_the_public_api_only():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.get("execution_count") for c in code), "commit it executed"
    sources = "\n".join(c.source for c in code)
    assert not re.search(r"from lazyarr\.|import lazyarr\.", sources), "public API only"
    assert "z.explain()" in sources and "z.visualize()" in sources
    check_outputs(nb)


def test_tour_notebook_runs_without_errors_or_tqdm_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")  # silences jupyter_core's path warning
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:  # run from scratch: nothing from the committed outputs survives
        if cell.cell_type == "code":
            cell.outputs = []
    client = NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    check_outputs(nb)
    assert "wrote tour-plan.html" in streams(nb)
    assert list(tmp_path.iterdir()) == []  # before: tour-plan.html stayed beside the notebook
