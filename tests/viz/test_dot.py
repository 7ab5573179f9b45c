"""DOT text of a plan, checked by content: stage boxes, fused ops, byte labels, colours, limits."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
from sample_plans import sample_plan, sample_stats

import lazyarr as la
from lazyarr.optimize.plan import Plan, Stage
from lazyarr.viz import measured_from, plan_facts, to_dot
from lazyarr.viz.dot import COLOURS, OVER_LIMIT


def node_lines(dot: str) -> dict[str, str]:
    """Stage name -> its node statement."""
    out = {}
    for line in dot.splitlines():
        m = re.match(r'\s*"((?:[^"\\]|\\.)*)" \[', line)
        if m:
            out[m.group(1)] = line
    return out


def edge_lines(dot: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in dot.splitlines():
        m = re.match(r'\s*"([^"]*)" -> "([^"]*)" \[(.*)\];', line)
        if m:
            out[(m.group(1), m.group(2))] = m.group(3)
    return out


def label_of(line: str) -> list[str]:
    m = re.search(r'label="((?:[^"\\]|\\.)*)"', line)
    assert m, line
    return m.group(1).split("\\n")


def test_one_box_per_stage_with_fused_ops_in_order(plan):
    dot = to_dot(plan)
    assert dot.startswith("digraph lazyarr_plan {") and dot.rstrip().endswith("}")
    nodes = node_lines(dot)
    assert set(nodes) == {"src", "fmap", "total"}
    lines = label_of(nodes["fmap"])
    assert lines[0] == "fmap"
    assert "fused map, 3 ops" in lines[1]
    assert lines[2:5] == ["add", "multiply", "sqrt"]
    assert "4 (4x1) blocks, 1.53 MiB" in lines
    total = label_of(nodes["total"])
    assert "sum" in total and "1 (1) blocks, 1.56 kiB" in total


def test_edges_carry_the_bytes_they_move(plan):
    edges = edge_lines(to_dot(plan))
    assert set(edges) == {("src", "fmap"), ("fmap", "total")}
    assert 'label="1.53 MiB"' in edges[("src", "fmap")]
    assert 'label="1.53 MiB"' in edges[("fmap", "total")]


def test_colour_by_kind_and_output_marked(plan):
    nodes = node_lines(to_dot(plan))
    assert f'fillcolor="{COLOURS["source"]}"' in nodes["src"]
    assert f'fillcolor="{COLOURS["fused"]}"' in nodes["fmap"]
    assert f'fillcolor="{COLOURS["reduce"]}"' in nodes["total"]
    assert "peripheries=2" in nodes["total"]
    assert "peripheries" not in nodes["fmap"]


def test_tooltips_hold_shape_chunks_blocks_bytes_flops(plan):
    tip = re.search(r'tooltip="((?:[^"\\]|\\.)*)"', node_lines(to_dot(plan))["fmap"]).group(1)
    facts = tip.split("\\n")
    assert "shape: (1000, 200) float64" in facts
    assert "chunks: (250, 200)" in facts
    assert "blocks: 4 (4x1)" in facts
    assert "bytes: out 1.53 MiB, in 1.53 MiB, block 390.62 kiB" in facts
    assert "ops: add -> multiply -> sqrt" in facts
    # add + multiply (cheap) and sqrt (medium) over 200k elements each
    assert any(f.startswith("est flops: ") and f.endswith(" M") for f in facts)
    assert "est peak memory per block: 1.53 MiB" in facts


def test_red_mark_only_where_the_peak_exceeds_the_memory_limit(plan):
    peaks = {n: f.peak_bytes for n, f in plan_facts(plan).items()}
    # fused map block: 400 kB input + two temporaries + 400 kB output
    assert peaks["fmap"] == 4 * 400_000
    assert peaks["src"] == 400_000
    limit = 1_000_000
    nodes = node_lines(to_dot(plan, memory_limit=limit))
    assert f'color="{OVER_LIMIT}"' in nodes["fmap"] and "penwidth=3" in nodes["fmap"]
    assert "! peak 1.53 MiB > limit 0.95 MiB" in label_of(nodes["fmap"])
    for name in ("src", "total"):
        assert OVER_LIMIT not in nodes[name]
    assert OVER_LIMIT not in to_dot(plan)  # no limit, no red
    assert OVER_LIMIT not in to_dot(plan, memory_limit=10**9)


def test_measured_seconds_in_the_boxes(plan):
    measured = measured_from(sample_stats())
    nodes = node_lines(to_dot(plan, measured=measured))
    assert "measured 123.0 ms" in label_of(nodes["fmap"])
    assert "measured" not in to_dot(plan)


def test_deterministic_and_json_round_trip(plan):
    assert to_dot(plan) == to_dot(plan)
    assert to_dot(Plan.from_json(plan.to_json())) == to_dot(plan)


def test_names_are_escaped():
    x = la.ones((4,), chunks=2)._expr
    name = 'we"ird\\name'
    plan = Plan({name: Stage(name, x, ())}, (name,))
    dot = to_dot(plan, title='a "title"')
    assert '"we\\"ird\\\\name" [' in dot
    assert 'label="a \\"title\\""' in dot
    if shutil.which("dot"):
        run = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert "we&quot;ird" in run.stdout


def test_real_plan_of_an_expression_has_every_stage():
    x = la.ones((100, 10), chunks=(25, 10))
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    p = la.plan(y)
    dot = to_dot(p)
    assert set(node_lines(dot)) == set(p.stages)
    for s in p.stages.values():
        for src in s.inputs:
            assert f'"{src}" -> "{s.name}"' in dot


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' is not installed")
def test_graphviz_accepts_the_text():
    dot = to_dot(sample_plan(placed=True), memory_limit=1_000_000)
    run = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for name in ("src", "fmap", "total"):
        assert f">{name}</text>" in run.stdout


EDGE_CASES = {
    "0-d float32": lambda: la.asarray(np.float32(3)) * 2,
    "empty reduce": lambda: la.zeros((0, 5), chunks=(2, 5)).sum(axis=0),
    "bool, uneven chunks": lambda: la.ones((5, 7), chunks=(2, 3)) > 0,
    "complex": lambda: la.asarray(np.arange(6) + 1j, chunks=4).conj(),
    "size-1 broadcast": lambda: la.ones((1, 7), chunks=(1, 3)) + la.ones((5, 1), chunks=(2, 1)),
}


@pytest.mark.parametrize("make", EDGE_CASES.values(), ids=EDGE_CASES.keys())
def test_edge_case_arrays_draw(make):
    arr = make()
    p = la.plan(arr)
    dot = to_dot(p)
    assert set(node_lines(dot)) == set(p.stages)
    out = plan_facts(p)[p.outputs[0]]
    assert out.shape == arr.shape and out.dtype == str(arr.dtype)
    assert out.out_bytes == arr.nbytes
    assert out.peak_bytes >= out.block_bytes >= 0


def test_contractions_count_two_flops_per_multiply_add():
    a, b = la.ones((3, 4), chunks=2), la.ones((4, 2), chunks=2)
    for arr in (a @ b, la.einsum("ij,jk->ik", a, b), la.tensordot(a, b, axes=1)):
        p = la.plan(arr)
        assert plan_facts(p)[p.outputs[0]].flops == 2 * 3 * 2 * 4
