"""lazyarr's own plan drawing: no edge label sits on a box or on another label."""

from __future__ import annotations

import itertools

import pytest
from sample_plans import sample_plan

import lazyarr as la
from lazyarr.optimize.plan import Plan
from lazyarr.viz.svg import layout, overlaps, place_label


def demo_plan() -> Plan:
    """``make demo``'s plan: the x -> std edge passes the mean box of the row it skips."""
    x = la.random.random((200_000, 50), chunks=(50_000, 50), seed=0, name="x")
    y = ((x - x.mean(axis=0)) / x.std(axis=0)).rename("y")
    z = la.sqrt((y**2).sum(axis=1)).rename("z")
    return la.visualize(z, y.sum(), executor="numpy").plan


def chain_plan() -> Plan:
    a = la.ones((64, 64), chunks=16)
    b = a.sum(axis=0)
    c = (a - b).mean(axis=1)
    d = (a.T @ a).sum(axis=0)
    return la.visualize(c, d, b.cumsum(), stage="raw", executor="numpy").plan


@pytest.mark.parametrize(
    "make", [demo_plan, chain_plan, sample_plan, lambda: sample_plan(placed=True)]
)
def test_no_edge_label_overlaps_a_box_or_another_label(make):
    lay = layout(make())
    boxes = list(lay.boxes.values())
    assert lay.edges
    for e in lay.edges:
        hit = [n for n, b in lay.boxes.items() if overlaps(e.label, b)]
        assert hit == [], f"label {e.text!r} of {e.src} -> {e.dst} covers {hit}"
    for a, b in itertools.combinations(lay.edges, 2):
        assert not overlaps(a.label, b.label), (a.src, a.dst, b.src, b.dst)
    assert boxes


def test_an_edge_past_a_box_gets_its_label_in_a_gap():
    # straight down through a box that spans the curve's middle
    curve = (100.0, 0.0, 100.0, 300.0, 150.0)
    box = (40.0, 60.0, 160.0, 180.0)
    label = place_label(curve, "800.0 MB", [box], [])
    assert not overlaps(label, box)


def test_labels_are_drawn_where_the_layout_put_them():
    plan = demo_plan()
    lay = layout(plan)
    svg = la.visualize(plan).svg()
    for e in lay.edges:
        assert f'x="{e.label[0] + 2:.1f}"' in svg
