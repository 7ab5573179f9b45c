"""The fusion pass by structure: expected stage graphs built by hand, counts, bytes, reasons."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.graph import build
from lazyarr.graph.ops import elementwise, from_array, reduce
from lazyarr.optimize.check import check_plan
from lazyarr.optimize.cost import recompute_or_store
from lazyarr.optimize.fusion import can_join
from lazyarr.optimize.pipeline import PassContext, optimize
from lazyarr.optimize.plan import Plan
from lazyarr.testing import assert_eq

CTX = PassContext(check=True)
ALL = ("cse", "simplify", "fuse")


def plan_of(*arrays, passes=ALL):
    return optimize(Plan.from_graph(build([a._expr for a in arrays])), passes, CTX)


def shape_of(plan: Plan) -> nx.DiGraph:
    """Stage graph labelled by the fused op lists."""
    g = nx.DiGraph()
    for s in plan.stages.values():
        g.add_node(s.name, ops="+".join(m.op.label() for m in s.members))
        for i in s.inputs:
            g.add_edge(i, s.name)
    return g


def expected(ops: dict[str, str], edges: list[tuple[str, str]]) -> nx.DiGraph:
    g = nx.DiGraph()
    for n, o in ops.items():
        g.add_node(n, ops=o)
    g.add_edges_from(edges)
    return g


def same(plan, want):
    return nx.is_isomorphic(shape_of(plan), want, node_match=lambda a, b: a["ops"] == b["ops"])


DATA = np.arange(24.0).reshape(4, 6) / 7


def lazy(chunks=(2, 3)):
    return la.asarray(DATA, chunks=chunks, copy=True)


def test_elementwise_chain_with_trailing_reduction_is_one_stage():
    #   array                     array
    #     |                         |
    #   sqrt -> add -> sum   ==>  [sqrt+add+sum]
    x = lazy()
    y = (la.sqrt(x) + 1).sum()
    p = plan_of(y)
    want = expected({"a": "array", "f": "sqrt+add+sum"}, [("a", "f")])
    assert same(p, want)
    assert_eq(y, (np.sqrt(DATA) + 1).sum())


def test_unfused_plan_has_one_stage_per_op():
    y = (la.sqrt(lazy()) + 1).sum()
    assert len(plan_of(y, passes=("cse", "simplify")).stages) == 4
    assert len(plan_of(y).stages) == 2


def test_standardize_becomes_three_passes_over_x():
    #           array
    #        /    |     \
    #     mean   std     |
    #        \    |     /
    #    [subtract+true_divide]   (x, mean, std are external inputs)
    x = lazy()
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    p = plan_of(y)
    want = expected(
        {"a": "array", "m": "mean", "s": "std", "f": "subtract+true_divide"},
        [("a", "m"), ("a", "s"), ("a", "f"), ("m", "f"), ("s", "f")],
    )
    assert same(p, want)
    fused = p.stages[p.outputs[0]]
    # bytes read by the fused stage: x once plus the two row vectors
    assert sum(e.nbytes for e in fused.input_exprs) == DATA.nbytes + 2 * 6 * 8
    assert_eq(y, (DATA - DATA.mean(0)) / DATA.std(0))


def test_shared_cheap_node_is_recomputed_expensive_one_is_stored():
    x = lazy()
    cheap = x + 1
    p = plan_of((cheap * 2).sum(), (cheap * 3).max())
    assert all(
        "add" in "+".join(m.op.label() for m in s.members)
        for s in p.stages.values()
        if s.kind == "reduce"
    )
    assert p.notes["fuse"][next(n for n in p.notes["fuse"] if n.startswith("elementwise"))]
    pricey = la.exp(x)
    q = plan_of((pricey * 2).sum(), (pricey * 3).max())
    labels = {"+".join(m.op.label() for m in s.members) for s in q.stages.values()}
    assert "exp" in labels  # stored once, its own stage
    assert any(v.startswith("not fused: 2 consumers") for v in q.notes["fuse"].values())
    assert_eq((pricey * 2).sum(), (np.exp(DATA) * 2).sum())


def test_outputs_are_stored_even_when_read_again():
    x = lazy()
    y = x * 2
    p = plan_of(y, (y + 1).sum())
    assert p.outputs[0] in p.stages
    assert p.stages[p.outputs[0]].members[-1].op.label() == "multiply"


def test_broadcast_producer_is_not_fused():
    row = la.asarray(np.arange(6.0), chunks=3)
    x = lazy()
    y = x + la.exp(row)  # exp(row) is (6,), read broadcast over (4, 6)
    p = plan_of(y)
    assert any("broadcast" in v for v in p.notes["fuse"].values())
    assert_eq(y, DATA + np.exp(np.arange(6.0)))


def test_different_chunks_are_a_boundary():
    a = lazy((2, 3))
    b = la.asarray(DATA, chunks=(4, 6), copy=True)
    y = (a * 2) + (b * 3)
    p = plan_of(y)
    assert_eq(y, DATA * 2 + DATA * 3)
    check_plan(p)


def test_nonfusible_ops_are_boundaries():
    #   array ------------.
    #     |               |
    #  argsort          [multiply+matmul]   argsort gathers: it stays a stage,
    #     '-------------->'    |            and so does the reduction after
    #                        sum            the contraction
    # (NumPy's quicksort argsort is one block along the axis; a stable sort over
    # several blocks is the sample sort's stages, graph/ops/samplesort.py)
    x = lazy()
    y = ((x * 2) @ la.argsort(x, axis=0, kind="quicksort").T).sum()
    p = plan_of(y)
    want = expected(
        {"a": "array", "s": "argsort", "t": "multiply+transpose+matmul", "r": "sum"},
        [("a", "s"), ("a", "t"), ("s", "t"), ("t", "r")],
    )
    assert same(p, want), shape_of(p).nodes(data=True)
    assert_eq(y, ((DATA * 2) @ np.argsort(DATA, axis=0, kind="quicksort").T).sum())


def test_reasons_are_recorded_for_every_stage():
    x = lazy()
    p = plan_of((x - x.mean(axis=0)).sum())
    notes = p.notes["fuse"]
    assert set(p.stages) <= set(notes)
    assert any(v.startswith("fused into") for v in notes.values())
    assert any("is not elementwise" in v for v in notes.values())


def test_fused_plan_round_trips_json():
    x = lazy()
    p = plan_of((la.sqrt(x) + 1).sum(axis=1))
    q = Plan.from_json(p.to_json())
    check_plan(q)
    assert [len(s.members) for s in q.stages.values()] == [
        len(s.members) for s in p.stages.values()
    ]


def test_can_join_rules():
    a = from_array(np.ones((4, 6)), ((2, 2), (3, 3)))
    e = elementwise("exp", a)
    assert can_join(e, elementwise("add", e, 1))[0]
    assert can_join(e, reduce("sum", e))[0]
    assert not can_join(reduce("sum", a, 0), elementwise("add", reduce("sum", a, 0), 1))[0]
    row = elementwise("exp", from_array(np.ones(6), ((6,),)))
    ok, why = can_join(row, elementwise("add", a, row))
    assert not ok and "broadcast" in why


@pytest.mark.parametrize(("func", "recompute"), [("add", True), ("exp", False)])
def test_cost_model_decision(func, recompute):
    a = from_array(np.ones(1000), ((500, 500),))
    e = elementwise(func, a, 1) if func == "add" else elementwise(func, a)
    assert recompute_or_store(e, 2)[0] is recompute
    assert recompute_or_store(e, 1)[0] is True


def test_a_contraction_read_twice_is_stored_and_the_note_says_why():
    a = np.arange(24.0).reshape(6, 4)
    x = la.asarray(a, chunks=(3, 4))
    z = x @ la.asarray(np.ones(4))
    plan = plan_of(la.exp(z), la.sin(z))
    (mm,) = [n for n, s in plan.stages.items() if s.expr.op.label() == "matmul"]
    assert plan.stages[mm].members == (plan.stages[mm].expr,)
    assert plan.notes["fuse"][mm] == "not fused: 2 consumers, and a matmul is never computed twice"
    assert recompute_or_store(z._expr, 2) == (False, float("inf"))
    assert_eq(la.exp(z) + la.sin(z), np.exp(a @ np.ones(4)) + np.sin(a @ np.ones(4)))


def test_ops_the_kernels_cannot_compile_stay_out_of_compiled_groups():
    """``raise_where`` (in ``average`` with weights) has no Numba emitter: a group holding it
    would run wholly on NumPy, so on numba it is a stage of its own, with the reason."""
    x = la.asarray(np.arange(20.0) + 1, chunks=5)
    w = la.asarray(np.arange(20.0) % 3, chunks=5)
    y = la.average(x, weights=w)
    on_numba = api.make_plan([y._expr], "numba", api.passes_for(None, None))
    from lazyarr.kernels.numba_set import NumbaKernels

    for s in on_numba.stages.values():
        compiled = {NumbaKernels.supports(m) for m in s.members if s.kind != "source"}
        assert len(compiled) <= 1, [m.op.label() for m in s.members]
    alone = [s for s in on_numba.stages.values() if s.expr.op.label() == "raise_where"]
    assert len(alone) == 1 and len(alone[0].members) == 1
    notes = on_numba.notes["fuse"].values()
    assert any("but not raise_where" in n for n in notes)
    # the reference executor compiles nothing: the same ops fuse there
    on_numpy = api.make_plan([y._expr], "numpy", api.passes_for(None, None))
    assert len(on_numpy.stages) < len(on_numba.stages)
    want = np.average(np.arange(20.0) + 1, weights=np.arange(20.0) % 3)
    for ex in ("numpy", "numba"):
        np.testing.assert_allclose(y.compute(executor=ex), want)
