"""The pass pipeline: CSE and simplify by structure, pass switching, JSON plans."""

from __future__ import annotations

import json

import networkx as nx
import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.graph import build
from lazyarr.graph.check import InvariantError
from lazyarr.optimize.check import check_plan
from lazyarr.optimize.pipeline import PASSES, PassContext, optimize, optimize_until
from lazyarr.optimize.plan import Plan
from lazyarr.testing import assert_eq

CTX = PassContext(check=True)


def plan_of(*arrays, passes=("cse", "simplify")):
    return optimize(Plan.from_graph(build([a._expr for a in arrays])), passes, CTX)


def ops_graph(plan: Plan) -> nx.DiGraph:
    return plan.to_graph()


def expected(edges: list[tuple[str, str]], ops: dict[str, str]) -> nx.DiGraph:
    g = nx.DiGraph(edges)
    nx.set_node_attributes(g, ops, "op")
    return g


def same_structure(plan: Plan, want: nx.DiGraph) -> bool:
    return nx.is_isomorphic(ops_graph(plan), want, node_match=lambda a, b: a["op"] == b["op"])


def test_cse_merges_equal_subexpressions():
    # before:  ones   ones#1        after:   ones
    #           |       |                     |
    #          add    add#1                  add
    #            \    /                      | | (both positions)
    #           multiply                  multiply
    a = la.ones(6, chunks=4) + 1
    b = la.ones(6, chunks=4) + 1
    out = a * b
    raw = plan_of(out, passes=())
    assert len(raw.stages) == 5
    opt = plan_of(out, passes=("cse",))
    assert len(opt.stages) == 3
    want = expected([("o", "a"), ("a", "m")], {"o": "full", "a": "add", "m": "multiply"})
    assert same_structure(opt, want)
    mul = opt.stages[opt.outputs[0]]
    assert mul.inputs[0] == mul.inputs[1]
    assert_eq(out, (np.ones(6) + 1) ** 2)


def test_cse_shares_work_between_outputs():
    x = la.asarray(np.arange(10.0), chunks=3)
    p = plan_of(x.sum() + 1, x.sum() * 2)
    assert sum(1 for s in p.stages.values() if s.expr.op.label() == "sum") == 1


def test_simplify_drops_identity_casts_and_rechunks():
    x = la.asarray(np.arange(10.0), chunks=3)
    y = x.astype("float64") + 1
    # astype to the same dtype is identity
    p = plan_of(y)
    assert [s.expr.op.label() for s in p.stages.values()] == ["array", "add"]
    z = x.rechunk(5).rechunk(2)
    p = plan_of(z)
    assert [s.expr.op.label() for s in p.stages.values()] == ["array", "rechunk"]
    assert_eq(z, np.arange(10.0))
    assert_eq(y, np.arange(10.0) + 1)


def test_rechunk_of_rechunk_with_two_readers_is_kept():
    x = la.asarray(np.arange(10.0), chunks=3)
    mid = x.rechunk(5)
    p = plan_of(mid.rechunk(2), mid + 1)
    assert sum(1 for s in p.stages.values() if s.expr.op.label() == "rechunk") == 2


def test_results_identical_with_each_pass_switched_off():
    x = la.asarray(np.arange(12.0).reshape(3, 4), chunks=(2, 3))
    y = ((x + 1).astype("float64") * (x + 1)).sum(axis=0)
    want = ((np.arange(12.0).reshape(3, 4) + 1) ** 2).sum(axis=0)
    for name in PASSES:
        others = [p for p in PASSES if p != name]
        (got,) = api.compute_exprs([y._expr], executor="numpy", passes=others)
        np.testing.assert_allclose(got, want)


def test_optimize_until_stops_after_the_named_pass():
    a = la.ones(4) + 1
    b = la.ones(4) + 1
    raw = Plan.from_graph(build([(a * b).astype("float64")._expr]))
    after_cse = optimize_until(raw, "cse", list(PASSES), CTX)
    assert [h.name for h in after_cse.history] == ["pushdown", "reblock", "cse"]
    assert any(s.expr.op.label() == "astype" for s in after_cse.stages.values())
    with pytest.raises(KeyError):
        optimize_until(raw, "nope", list(PASSES), CTX)


def test_unknown_pass_is_refused():
    with pytest.raises(KeyError, match="unknown optimization pass"):
        plan_of(la.ones(3), passes=("cse", "fusee"))


def test_history_records_each_pass():
    p = plan_of(la.ones(3) + 1)
    assert [h.name for h in p.history] == ["cse", "simplify"]
    assert all(h.seconds >= 0 for h in p.history)


def test_plan_json_round_trip_keeps_keys_and_results():
    x = la.asarray(np.arange(12.0).reshape(3, 4), chunks=(2, 3))
    y = la.where(x > 3, x, -1.5).sum(axis=1, keepdims=True) + la.random.random((3, 1), seed=3)
    p = plan_of(y)
    text = p.to_json()
    json.loads(text)
    q = Plan.from_json(text)
    assert list(q.stages) == list(p.stages)
    assert [s.expr.key for s in q.stages.values()] == [s.expr.key for s in p.stages.values()]
    check_plan(q)
    ex = api.resolve_executor("numpy")
    np.testing.assert_allclose(ex.execute(q, q.outputs)[0], ex.execute(p, p.outputs)[0])


def test_plan_json_refuses_foreign_documents():
    with pytest.raises(ValueError, match="not a lazyarr plan"):
        Plan.from_json('{"format": "other"}')


def test_checker_catches_a_stage_before_its_input():
    p = plan_of(la.ones(3) + 1)
    names = list(p.stages)
    broken = p.with_stages({n: p.stages[n] for n in reversed(names)})
    with pytest.raises(InvariantError, match="not an earlier stage"):
        check_plan(broken)


def test_checker_catches_wrong_per_block_array_shape():
    p = plan_of(la.ones(6, chunks=2) + 1)
    s = next(iter(p.stages.values()))
    s = s.replace(worker=np.zeros((2,), dtype=np.int32))  # 3 blocks, not 2
    with pytest.raises(InvariantError, match="per-block"):
        check_plan(p.with_stages({**p.stages, s.name: s}))


@pytest.mark.parametrize("damage", ["shorter", "dtype", "chunks"])
def test_a_damaged_plan_file_is_refused_when_loaded(damage):
    import base64
    import io

    from lazyarr.optimize.plan import Plan

    a = np.arange(12.0)
    plan = api.make_plan([(la.asarray(a, chunks=4) * 2)._expr], "numpy", api.passes_for(None, None))
    doc = json.loads(plan.to_json())
    (node,) = [n for n in doc["exprs"].values() if n["op"] == "array"]
    if damage == "chunks":
        node["chunks"] = [[4, 4, 3]]
    else:
        buf = io.BytesIO()
        np.save(buf, a[:7] if damage == "shorter" else a.astype(np.float32))
        node["params"]["data"]["npy"] = base64.b64encode(buf.getvalue()).decode()
    assert Plan.from_json(plan.to_json()).outputs == plan.outputs  # the intact file loads
    with pytest.raises(ValueError, match=r"plan JSON|do not match shape"):
        Plan.from_json(json.dumps(doc))
