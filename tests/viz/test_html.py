"""The HTML report, our own SVG, worker bars and the PlanPicture object (files, notebook reprs)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from sample_plans import sample_plan, sample_stats

import lazyarr as la
from lazyarr.optimize.plan import Plan
from lazyarr.planview import PlanPicture, visualize
from lazyarr.viz import (
    GraphvizMissing,
    measured_from,
    render_dot,
    to_html,
    to_svg,
    worker_rows,
    workers_svg,
)
from lazyarr.viz import render as render_mod

SVG = "{http://www.w3.org/2000/svg}"


def boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    """Stage name -> (x, y, w, h) of its box, from our SVG."""
    root = ET.fromstring(svg)
    out = {}
    for g in root.iter(f"{SVG}g"):
        if "stage" in g.get("class", "").split():
            rect = next(r for r in g.findall(f"{SVG}rect") if r.get("fill") != "none")
            out[g.get("data-stage")] = tuple(
                float(rect.get(k)) for k in ("x", "y", "width", "height")
            )
    return out


def test_own_svg_is_well_formed_layered_and_without_overlaps():
    x = la.ones((100, 10), chunks=(25, 10))
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    plan = la.plan(y, x.sum())
    svg = to_svg(plan, title="t")
    b = boxes(svg)
    assert set(b) == set(plan.stages)
    names = list(b)
    for i, p in enumerate(names):  # no two boxes overlap
        for q in names[i + 1 :]:
            (x1, y1, w1, h1), (x2, y2, w2, h2) = b[p], b[q]
            assert x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1, (p, q)
    for s in plan.stages.values():  # every input drawn above its reader
        for src in s.inputs:
            assert b[src][1] + b[src][3] < b[s.name][1]
    edges = re.findall(r'class="edge" data-src="([^"]+)" data-dst="([^"]+)"', svg)
    assert {(a, c) for a, c in edges} == {
        (i, s.name) for s in plan.stages.values() for i in s.inputs
    }


def test_own_svg_marks_limit_outputs_and_tooltips(plan):
    svg = to_svg(plan, memory_limit=1_000_000)
    root = ET.fromstring(svg)
    cls = {g.get("data-stage"): g.get("class") for g in root.iter(f"{SVG}g") if g.get("data-stage")}
    assert cls == {
        "src": "stage source",
        "fmap": "stage fused over-limit",
        "total": "stage reduce output",
    }
    assert "chunks: (250, 200)" in svg and "est flops:" in svg
    assert ">add</text>" in svg and ">sqrt</text>" in svg
    assert ">1.53 MiB</text>" in svg  # edge label


def test_html_report_is_self_contained(placed_plan):
    html = to_html(placed_plan, "dask", 1_000_000, measured_from(sample_stats()))
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html
    # the only URL is the SVG namespace; nothing is fetched
    urls = set(re.findall(r"https?://[^\s\"'<>]+", html))
    assert urls == {"http://www.w3.org/2000/svg"}
    assert not re.search(r"\s(src|href)=\"(?!data:)", html)
    assert 'class="lazyarr-plan"' in html
    for name in placed_plan.stages:
        assert f'data-stage="{name}"' in html
    assert "<h2>Stages</h2>" in html and "add → multiply → sqrt" in html
    assert "<h2>Workers</h2>" in html and 'class="lazyarr-workers"' in html
    assert "<h2>Blocks per worker</h2>" in html and html.count('class="lazyarr-blockmap"') == 3
    assert '<tr class="over">' in html  # fmap is over the limit
    assert "123.0 ms" in html
    assert "<h2>Explain</h2>" in html


def test_html_without_placement_has_no_worker_section(plan):
    html = to_html(plan)
    assert "<h2>Workers</h2>" not in html and "lazyarr-blockmap" not in html


def test_worker_rows_and_bars(placed_plan):
    rows = worker_rows(placed_plan, measured_from(sample_stats()))
    assert [r.address for r in rows] == ["tcp://127.0.0.1:4001", "tcp://127.0.0.1:4002"]
    assert rows[0].planned == {"memory": 3.2e6, "net_in": 0, "net_out": 800}
    assert rows[1].measured["net_in"] == 1600 and rows[1].tasks == 5
    assert [r.blocks for r in rows] == [4, 5]
    svg = workers_svg(rows)
    root = ET.fromstring(svg)
    bars = {
        r.find(f"{SVG}title").text: float(r.get("width"))
        for r in root.iter(f"{SVG}rect")
        if "bar" in r.get("class", "")
    }
    mem = {k: v for k, v in bars.items() if " memory " in k}
    assert len(mem) == 4  # planned and measured for two workers
    widest = max(mem, key=mem.get)
    assert widest.startswith("w0") and "measured" in widest  # 3.91 MiB is the top value
    assert workers_svg([]) == ""


def test_planned_loads_from_blocks_when_the_pass_gives_no_loads(placed_plan):
    del placed_plan.notes["place"]["per_worker"]
    rows = worker_rows(placed_plan)
    # bytes of the blocks placed on each worker
    assert rows[0].planned == {"memory": 1_600_000}
    assert rows[1].planned == {"memory": 1_600_000 + 1600}


@pytest.mark.parametrize(
    "loads",
    [
        [{"peak_memory": 5, "bytes_in": 6, "bytes_out": 7}, {"memory": 1, "net_in": 2}],
        {
            "tcp://127.0.0.1:4001": {"peak_memory": 5, "bytes_in": 6, "bytes_out": 7},
            "tcp://127.0.0.1:4002": {"memory": 1, "net_in": 2},
        },
    ],
)
def test_other_shapes_of_planned_loads(placed_plan, loads):
    place = placed_plan.notes["place"]
    del place["per_worker"]
    place["loads"] = loads
    rows = worker_rows(placed_plan)
    assert [r.planned for r in rows] == [
        {"memory": 5, "net_in": 6, "net_out": 7},
        {"memory": 1, "net_in": 2},
    ]


def test_picture_formats(tmp_path, plan):
    pic = PlanPicture(plan, "numpy")
    assert pic.save(tmp_path / "p.dot").read_text().startswith("digraph")
    assert pic.save(tmp_path / "p.html").read_text().startswith("<!DOCTYPE html>")
    assert "<svg" in pic.save(tmp_path / "p.svg").read_text()
    back = Plan.from_json(pic.save(tmp_path / "p.json").read_text())
    assert list(back.stages) == list(plan.stages)
    assert pic.save(tmp_path / "noext", format="dot").read_text().startswith("digraph")
    with pytest.raises(ValueError, match="cannot tell the format"):
        pic.save(tmp_path / "noext")
    with pytest.raises(ValueError, match="unknown picture format 'gif'"):
        pic.save(tmp_path / "p.gif")
    if render_mod.have_graphviz():
        assert pic.save(tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_graphviz_png_hints_and_svg_falls_back(tmp_path, plan, monkeypatch):
    monkeypatch.setattr(render_mod.shutil, "which", lambda name: None)
    with pytest.raises(GraphvizMissing, match="apt-get install graphviz"):
        render_dot("digraph {}", "png")
    pic = PlanPicture(plan)
    with pytest.raises(GraphvizMissing, match="install"):
        pic.save(tmp_path / "p.png")
    assert 'class="lazyarr-plan"' in pic.save(tmp_path / "p.svg").read_text()  # our own
    assert not (tmp_path / "p.png").exists()


def test_notebook_reprs_and_visualize_writes_files(tmp_path):
    x = la.ones((40, 10), chunks=(10, 10))
    z = la.sqrt(x * 2).sum()
    pic = visualize(z)
    assert pic.path is None
    assert pic._repr_svg_().startswith("<svg") and 'class="lazyarr-plan"' in pic._repr_svg_()
    html = pic._repr_html_()
    assert html.startswith('<div class="lazyarr-report">') and "<h2>Stages</h2>" in html
    assert "<h2>Explain</h2>" not in html
    assert "stages, outputs" in repr(pic)
    out = visualize(z, filename=tmp_path / "z.html")
    assert out.path == tmp_path / "z.html" and out.path.read_text().count("data-stage=") == len(
        out.plan.stages
    )
    raw = visualize(z, stage="raw")
    assert "raw graph" in raw.title and len(raw.plan.stages) >= len(pic.plan.stages)
    with pytest.raises(ValueError, match="unknown picture format"):
        visualize(z, format="bmp")


def test_memory_limit_comes_from_the_config():
    x = la.ones((1000, 200), chunks=(250, 200))
    y = x + 1
    with la.config.set({"memory-limit": "100kB"}):
        pic = visualize(y)
        assert pic.memory_limit == 100_000
        assert "over-limit" in pic.svg()
    assert visualize(y).memory_limit is None
    assert "over-limit" not in visualize(y).svg()


def test_sample_plan_is_what_the_docstring_draws():
    p = sample_plan()
    assert [s.kind for s in p.stages.values()] == ["source", "map", "reduce"]
    assert p.stages["fmap"].fused and not p.stages["total"].fused
