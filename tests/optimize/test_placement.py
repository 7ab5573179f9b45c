"""Layout and placement passes: layouts, closed forms, trees, purity, and a replay.

``assert_replay`` runs a placed plan with ``tests/placement_replay.py``
(every task on its planned worker, fetching what it lacks) and checks that
the bytes moved equal the plan's ``est_bytes`` block by block, and that
the values equal NumPy's.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from placement_replay import Replay

import lazyarr as la
from lazyarr.graph import build
from lazyarr.optimize.check import check_plan
from lazyarr.optimize.passes import layout, place
from lazyarr.optimize.pipeline import PassContext, optimize
from lazyarr.optimize.placement import (
    Planner,
    combine_schedule,
    default_layout,
)
from lazyarr.optimize.placement.layout import (
    device_order,
    plan_layouts,
    suggest_chunks,
    worker_grid,
)
from lazyarr.optimize.plan import Plan, Stage

WORKERS = tuple(f"w{i}" for i in range(4))
CTX = PassContext(n_workers=4, workers=WORKERS, hosts=("h0",) * 4, check=True)
CTX2 = PassContext(n_workers=4, workers=WORKERS, hosts=("h0", "h0", "h1", "h1"), check=True)


def base_plan(*arrays) -> Plan:
    return optimize(Plan.from_graph(build([a._expr for a in arrays])), ("cse", "simplify"), CTX)


def placed(*arrays, ctx=CTX) -> Plan:
    plan = place.run(layout.run(base_plan(*arrays), ctx), ctx)
    check_plan(plan, "place")
    return plan


def stage_of(plan: Plan, prefix: str) -> Stage:
    (s,) = [s for n, s in plan.stages.items() if n.startswith(prefix)]
    return s


# ----------------------------------------------------------------- replay


def assert_replay(plan: Plan, expected, hosts=None):
    run = Replay(plan, hosts)
    moved = run.moved
    for got, want in zip(run.results(), expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
        assert got.dtype == np.asarray(want).dtype
    for name, s in plan.stages.items():
        assert np.array_equal(moved[name], s.est_bytes), name
    total = sum(int(s.est_bytes.sum()) for s in plan.stages.values())
    assert plan.notes["place"]["total_bytes"] == total
    return moved


# ----------------------------------------------------------------- layouts


@pytest.mark.parametrize(
    ("numblocks", "n", "grid"),
    [
        ((4, 4), 4, (2, 2)),
        ((8, 1), 4, (4, 1)),
        ((1, 8), 4, (1, 4)),
        ((3,), 4, (3,)),
        ((2,), 4, (2,)),
        ((5,), 4, (4,)),
        ((), 4, ()),
        ((3, 3), 4, (3, 1)),
        ((10, 10), 4, (2, 2)),
        ((2, 2, 2), 4, (2, 2, 1)),
        ((1, 4, 1), 4, (1, 4, 1)),
        ((8, 8), 8, (4, 2)),
        ((1, 1), 4, (1, 1)),
    ],
)
def test_worker_grid(numblocks, n, grid):
    assert worker_grid(numblocks, n) == grid


def test_device_order_puts_hosts_first():
    assert device_order(4) == (0, 1, 2, 3)
    assert device_order(4, ("h0", "h0", "h1", "h1")) == (0, 2, 1, 3)
    assert device_order(5, ("a", "b", "a", "a", "b")) == (0, 1, 2, 4, 3)


def test_default_layout_is_2d_block_cyclic():
    lay = default_layout((4, 4), 4)
    assert lay.grid == (2, 2)
    assert lay.owners((4, 4)).tolist() == [[0, 1, 0, 1], [2, 3, 2, 3]] * 2
    assert lay.describe() == "2x2 block-cyclic"
    two_hosts = default_layout((2, 2), 4, ("h0", "h0", "h1", "h1"))
    assert two_hosts.owners((2, 2)).tolist() == [[0, 2], [1, 3]]
    assert default_layout((), 4).owners(()).tolist() == 0
    assert default_layout((1, 1), 4).describe() == "all on worker 0"


@given(
    st.lists(st.integers(1, 7), min_size=0, max_size=3),
    st.integers(1, 9),
)
def test_owner_and_owners_agree(numblocks, n):
    lay = default_layout(numblocks, n)
    owners = lay.owners(numblocks)
    assert owners.dtype == np.int32 and owners.shape == tuple(numblocks)
    for idx in np.ndindex(*numblocks):
        assert owners[idx] == lay.owner(idx)
    # cyclic: every used worker holds within one block-per-axis of the others
    counts = np.bincount(owners.ravel(), minlength=n)
    used = counts[counts > 0]
    assert len(used) == min(n, np.prod(lay.grid))


def test_suggest_chunks():
    assert suggest_chunks((4000, 4000), 8, 4, cluster_shape=(2, 2)) == ((2000, 2000),) * 2
    assert suggest_chunks((10, 10), 8, 4) == ((10,), (10,))  # small: one block
    assert suggest_chunks((0, 5), 8, 4) == ((0,), (5,))
    memo: dict[int, int] = {}
    a = suggest_chunks((4000, 4000), 8, 4, cluster_shape=(2, 2), memo=memo)
    b = suggest_chunks((4000, 4000 * 8), 8, 4, cluster_shape=(2, 2), memo=memo)
    assert b[0] == a[0]  # same axis length, same blocks: matmul operands align
    assert (
        suggest_chunks((4000, 4000), 8, 4, per_worker=4, cluster_shape=(2, 2)) == ((1000,) * 4,) * 2
    )


def test_tensordot_operands_are_aligned_on_summed_axes():
    rng = np.random.default_rng(0)
    t = la.asarray(rng.random((64, 256, 256)), chunks=(64, 128, 128))
    w = la.asarray(rng.random((256, 256, 32)), chunks=(128, 128, 32))
    plan = layout.run(base_plan(la.tensordot(t, w, axes=((1, 2), (1, 0)))), CTX)
    ts, ws = (stage_of(plan, "array-" + x._expr.key[:10]) for x in (t, w))
    assert "aligned" in plan.notes["layout"]["stages"][ws.name]["why"]
    # T block (0, x, y) sums with W block (y, x, 0): same worker for every pair
    for x in range(2):
        for y in range(2):
            assert ts.worker[0, x, y] == ws.worker[y, x, 0]
    assert sorted(ts.worker.ravel().tolist()) == [0, 1, 2, 3]


def test_no_alignment_when_the_larger_operand_splits_free_axes():
    a = la.ones((400, 400), chunks=100)
    b = la.ones((400, 400), chunks=100) * 2
    layouts, why = plan_layouts(base_plan(a @ b), 4)
    assert all("aligned" not in w for w in why.values())
    assert {lay.grid for lay in layouts.values()} == {(2, 2)}


def test_alignment_passes_through_elementwise_stages():
    rng = np.random.default_rng(1)
    t = la.asarray(rng.random((8, 16, 16)), chunks=(8, 8, 8))
    w = la.asarray(rng.random((16, 16, 4)), chunks=(8, 8, 4))
    plan = layout.run(base_plan(la.tensordot(t, w * 2.0, axes=((1, 2), (1, 0)))), CTX)
    src = stage_of(plan, "array-" + w._expr.key[:10])
    assert "through" in plan.notes["layout"]["stages"][src.name]["why"]
    ts = stage_of(plan, "array-" + t._expr.key[:10])
    for x in range(2):
        for y in range(2):
            assert ts.worker[0, x, y] == src.worker[y, x, 0]


def test_alignment_traces_operands_folded_into_the_contraction():
    # w * 2.0 and its transpose are computed inside the tensordot stage;
    # the layout still follows them back to w and aligns its summed axes
    rng = np.random.default_rng(1)
    t = la.asarray(rng.random((8, 16, 16)), chunks=(8, 8, 8))
    w = la.asarray(rng.random((16, 16, 4)), chunks=(8, 8, 4))
    expr = la.tensordot(t, la.permute_dims(w * 2.0, (1, 0, 2)), axes=((1, 2), (0, 1)))
    fused = optimize(Plan.from_graph(build([expr._expr])), ("cse", "simplify", "fuse"), CTX)
    (td,) = [s for s in fused.stages.values() if s.expr.op.name == "tensordot"]
    assert [m.op.label() for m in td.members] == ["multiply", "transpose", "tensordot"]
    plan = layout.run(fused, CTX)
    src = stage_of(plan, "array-" + w._expr.key[:10])
    assert "aligned" in plan.notes["layout"]["stages"][src.name]["why"]
    ts = stage_of(plan, "array-" + t._expr.key[:10])
    for x in range(2):
        for y in range(2):
            assert ts.worker[0, x, y] == src.worker[y, x, 0]
    placed_plan = place.run(plan, CTX)
    td = next(s for s in placed_plan.stages.values() if s.expr.op.name == "tensordot")
    assert int(td.est_bytes.sum()) == 3 * 8 * 4 * 8  # only partial products move


# ----------------------------------------------------------------- closed forms


def test_owner_computes_matmul_moves_exactly_32_blocks():
    a = la.ones((400, 400), chunks=100)
    b = la.ones((400, 400), chunks=100) * 2
    plan = placed(a @ b)
    mm = stage_of(plan, "matmul")
    assert mm.placement.strategy == "owner-computes"
    block = 100 * 100 * 8
    assert int(mm.est_bytes.sum()) == 32 * block
    assert plan.notes["place"]["total_moves"] == 32
    assert mm.worker.tolist() == default_layout((4, 4), 4).owners((4, 4)).tolist()
    # each worker receives 4 blocks of A's row panels and 4 of B's column panels
    assert plan.notes["place"]["per_worker"]["bytes_in"] == [8 * block] * 4
    assert "owner-computes: 16 blocks, 32 block moves" in plan.notes["place"]["stages"][mm.name]
    assert_replay(plan, [np.full((400, 400), 800.0)])


def test_tensordot_with_aligned_layouts_moves_almost_nothing():
    rng = np.random.default_rng(2)
    tn, wn = rng.random((64, 256, 256)), rng.random((256, 256, 32))
    t = la.asarray(tn, chunks=(64, 128, 128))
    w = la.asarray(wn, chunks=(128, 128, 32))
    expr = la.tensordot(t, w, axes=((1, 2), (1, 0)))
    plan = placed(expr)
    td = stage_of(plan, "tensordot")
    assert td.placement.strategy == "tree"
    partial = 64 * 32 * 8
    assert int(td.est_bytes.sum()) == 3 * partial  # three partial products reach the owner
    assert int(td.est_bytes.sum()) < 0.002 * (tn.nbytes + wn.nbytes)
    # the same stage on unaligned (default) layouts has to move operand blocks
    base = base_plan(expr)
    owners = {n: default_layout(s.numblocks, 4).owners(s.numblocks) for n, s in base.stages.items()}
    unaligned = Planner(base, owners, 4).run()
    assert int(unaligned[td.name].est_bytes.sum()) > 100 * int(td.est_bytes.sum())
    assert_replay(plan, [np.tensordot(tn, wn, axes=((1, 2), (1, 0)))])


def test_elementwise_on_the_same_layout_moves_nothing():
    x = la.asarray(np.arange(48.0).reshape(6, 8), chunks=(3, 4))
    y = la.asarray(np.ones((6, 8)), chunks=(3, 4))
    plan = placed(np.sin(x) * y + 1)
    assert plan.notes["place"]["total_bytes"] == 0
    for s in plan.stages.values():
        assert s.placement.strategy in ("layout", "owner")
        assert s.worker.tolist() == [[0, 1], [2, 3]]
    assert_replay(plan, [np.sin(np.arange(48.0).reshape(6, 8)) + 1])


def test_xtx_is_local_partials_and_a_tree():
    xn = np.random.default_rng(3).random((800, 16))
    x = la.asarray(xn, chunks=(100, 16))
    plan = placed(x.T @ x)
    mm = stage_of(plan, "matmul")
    assert mm.placement.strategy == "tree"
    parts = mm.placement.parts
    assert parts.shape == (1, 1, 8)
    assert parts[0, 0].tolist() == [0, 1, 2, 3, 0, 1, 2, 3]  # each product where X's block is
    assert int(mm.est_bytes.sum()) == 3 * 16 * 16 * 8  # one partial per other worker
    assert_replay(plan, [xn.T @ xn])


def test_lookahead_keeps_growing_results_on_their_owner():
    # each product block reads the one-block row (on worker 0) and its own column
    # block; worker 0 would pull in less input (16 B instead of 64 B), but the
    # result (128 B) would then have to travel to its owner
    row = la.asarray(np.arange(8.0)[None, :], chunks=(1, 8))
    col = la.asarray(np.arange(8.0)[:, None], chunks=(2, 1))
    plan = base_plan(row * col)
    owners = {n: default_layout(s.numblocks, 4).owners(s.numblocks) for n, s in plan.stages.items()}
    network_only = Planner(plan, owners, 4, weights=(0.0, 1.0, 1.0)).run()
    mul = network_only[stage_of(plan, "elementwise").name]
    assert mul.worker.tolist() == [[0], [1], [2], [3]]
    assert mul.est_bytes.tolist() == [[0], [64], [64], [64]]
    assert_replay(placed(row * col), [np.arange(8.0)[None, :] * np.arange(8.0)[:, None]])


# ----------------------------------------------------------------- reductions


def test_combine_schedule_pairs_co_located_parts_first():
    steps = combine_schedule([0, 1, 0, 1, 2, 3, 2, 3], owner=0)
    slots_on = dict(enumerate([0, 1, 0, 1, 2, 3, 2, 3]))
    cross = 0
    seen_cross = False
    for j, (a, b, w) in enumerate(steps):
        local = slots_on[a] == slots_on[b] == w
        if not local:
            cross += 1
            seen_cross = True
            assert w == slots_on[a]  # on the left operand's worker
        else:
            assert not seen_cross  # all same-worker combines come first
        slots_on[8 + j] = w
    assert cross == 3  # one value per worker, minus one
    assert slots_on[8 + len(steps) - 1] == 0  # the result is on the owner
    assert combine_schedule([2], owner=0) == []
    # the owner's value goes first, so the last step runs on the owner: no final move
    steps = combine_schedule([0, 1, 2, 3], owner=3)
    assert steps[-1][2] == 3 and len(steps) == 3
    assert combine_schedule([], owner=0) == []


def test_combine_schedule_takes_co_located_parts_fan_in_at_a_time():
    steps = combine_schedule([0] * 10 + [1] * 3, owner=0, fan_in=4)
    # worker 0: 4 + 4 + 2 parts, then those three; worker 1: its three; then the pair
    assert [len(s) - 1 for s in steps] == [4, 4, 2, 3, 3, 2]
    assert [s[-1] for s in steps] == [0, 0, 0, 0, 1, 0]
    assert steps[0][:-1] == (0, 1, 2, 3) and steps[-1][:-1] == (16, 17)


def test_combine_schedule_prefers_same_host_pairs():
    host_of = [0, 0, 1, 1]
    steps = combine_schedule([2, 1, 3, 0], owner=0, host_of=host_of)
    # order: owner 0, its host-mate 1, then host 1 (2, 3): first round pairs (0,1) and (2,3)
    first_round = [(a, b) for a, b, _ in steps[:2]]
    assert first_round == [(3, 1), (0, 2)]
    assert steps[-1][2] == 0


def test_reduction_partials_stay_with_their_blocks():
    xn = np.arange(64.0).reshape(8, 8)
    x = la.asarray(xn, chunks=(1, 8))
    plan = placed((x * 2).sum(axis=0))
    red = stage_of(plan, "reduce")
    parts = red.placement.parts
    assert parts.tolist() == [[0, 1, 2, 3, 0, 1, 2, 3]]
    assert red.worker.tolist() == [0]
    assert int(red.est_bytes.sum()) == 3 * 8 * 8  # one (1, 8) float64 partial per other worker
    assert "co-located parts combined first" in plan.notes["place"]["stages"][red.name]
    assert_replay(plan, [(xn * 2).sum(axis=0)])


@pytest.mark.parametrize("axis", [0, 1, None])
@pytest.mark.parametrize("func", ["sum", "mean", "var", "max", "argmin", "nanmean", "any"])
def test_reduction_trees_replay_exactly(func, axis):
    xn = np.random.default_rng(4).random((9, 7))
    xn[2, 3] = np.nan if func == "nanmean" else xn[2, 3]
    x = la.asarray(xn, chunks=(2, 3))  # 5x3 blocks: a 1x3 worker grid
    plan = placed(getattr(la, func)(x, axis=axis), ctx=CTX2)
    moved = assert_replay(plan, [getattr(np, func)(xn, axis=axis)], hosts=CTX2.hosts)
    # along axis 0 each column of blocks sits on one worker; otherwise partials travel
    assert (sum(int(m.sum()) for m in moved.values()) == 0) == (axis == 0)


# ----------------------------------------------------------------- fused stages


def _fused_plan():
    """x -> (x + 1) * 2 -> sum, with the two elementwise ops fused by hand."""
    xn = np.arange(40.0).reshape(8, 5)
    x = la.asarray(xn, chunks=(2, 5))
    y = (x + 1) * 2
    total = y.sum(axis=0)
    plan = base_plan(total, y)
    src = stage_of(plan, "array")
    add = plan.stages[next(n for n in plan.stages if plan.stages[n].inputs == (src.name,))]
    mul = plan.stages[plan.outputs[1]]
    red = plan.stages[plan.outputs[0]]
    fused_map = Stage(mul.name, mul.expr, (src.name,), (add.expr, mul.expr), (src.expr,))
    fused_red = Stage(red.name, red.expr, (src.name,), (add.expr, mul.expr, red.expr), (src.expr,))
    stages = {src.name: src, mul.name: fused_map, red.name: fused_red}
    plan = Plan(stages, plan.outputs)
    check_plan(plan)
    return plan, xn


def test_fused_stages_are_placed_like_their_members():
    plan, xn = _fused_plan()
    out = place.run(layout.run(plan, CTX), CTX)
    check_plan(out, "place")
    fused = out.stages[plan.outputs[1]]
    assert fused.placement.strategy == "owner"
    red = out.stages[plan.outputs[0]]
    assert red.placement.parts.tolist() == [[0, 1, 2, 3]]
    assert_replay(out, [((xn + 1) * 2).sum(axis=0), (xn + 1) * 2])


@pytest.mark.parametrize("k", range(3))
def test_after_the_fuse_pass(k):
    rng = np.random.default_rng(7)
    xn, yn = rng.random((40, 12)), rng.random(12)
    x, y = la.asarray(xn, chunks=(5, 4)), la.asarray(yn, chunks=4)
    expr, want = [
        ((np.exp(x) * 2 + y).sum(axis=0), (np.exp(xn) * 2 + yn).sum(axis=0)),
        (((x - y) ** 2).mean(axis=1), ((xn - yn) ** 2).mean(axis=1)),
        (np.sqrt(x * x + 1) @ y, np.sqrt(xn * xn + 1) @ yn),
    ][k]
    plan = optimize(Plan.from_graph(build([expr._expr])), ("cse", "simplify", "fuse"), CTX2)
    assert any(s.fused for s in plan.stages.values())
    out = place.run(layout.run(plan, CTX2), CTX2)
    check_plan(out, "place")
    assert_replay(out, [want], hosts=CTX2.hosts)


# ----------------------------------------------------------------- dependencies


def _varied():
    rng = np.random.default_rng(5)
    a = la.asarray(rng.random((5, 7)), chunks=(2, 3))
    b = la.asarray(rng.random((7, 4)), chunks=(3, 2))
    v = la.asarray(rng.random(7), chunks=4)
    return [
        a @ b,
        a @ v,
        a[1:4, ::2] + 1,
        la.concatenate([a, a * 2], axis=0),
        a.T,
        a.sum(),
        la.einsum("ij,jk->ik", a, b),
        la.einsum("ii->i", a[:, :5]),
        a[:, 0:0].sum(axis=1),
        la.max(a, axis=1, keepdims=True),
        a + v[:5, None],
    ]


@pytest.mark.parametrize("k", range(11))
def test_varied_plans_replay_exactly(k):
    expr = _varied()[k]
    want = expr.compute(executor="numpy")
    for ctx, hosts in ((CTX, None), (CTX2, CTX2.hosts)):
        assert_replay(placed(expr, ctx=ctx), [want], hosts=hosts)


@pytest.mark.parametrize(
    "make",
    [
        lambda: la.asarray(np.float32(3.5)) * 2,
        lambda: la.zeros((0, 5), chunks=(2, 2)) + 1,
        lambda: la.ones((1, 1), dtype=bool, chunks=1) & True,
        lambda: la.arange(10, chunks=3).astype(np.int8) * 3,
        lambda: la.ones((4, 6), chunks=(2, 3)) * (1 + 2j),
        lambda: la.ones((5, 7), chunks=(2, 3)).sum(axis=1),
        lambda: la.ones((6, 6), dtype=np.int64, chunks=(4, 2)) @ la.ones((6, 3), dtype=np.int64),
    ],
)
def test_edge_cases_place_and_replay(make):
    expr = make()
    want = expr.compute(executor="numpy")
    assert_replay(placed(expr), [want])


# ----------------------------------------------------------------- the passes


def test_one_worker_changes_nothing():
    plan = base_plan(la.ones((4, 4), chunks=2) @ la.ones((4, 4), chunks=2))
    one = PassContext(n_workers=1)
    assert layout.run(plan, one) is plan
    assert place.run(plan, one) is plan
    assert all(s.worker is None and s.est_bytes is None for s in plan.stages.values())


def test_passes_are_pure_and_deterministic():
    x = la.asarray(np.arange(64.0).reshape(8, 8), chunks=(2, 4))
    expr = (x @ x.T).sum(axis=1) + x[:, 0]
    plan = base_plan(expr)
    before = plan.to_json()
    one = place.run(layout.run(plan, CTX2), CTX2)
    assert plan.to_json() == before  # the input plan is untouched
    assert all(s.worker is None for s in plan.stages.values())
    two = place.run(layout.run(base_plan(expr), CTX2), CTX2)
    for name in one.stages:
        a, b = one.stages[name], two.stages[name]
        assert a.worker.dtype == np.int32 and a.est_bytes.dtype == np.int64
        assert np.array_equal(a.worker, b.worker) and np.array_equal(a.est_bytes, b.est_bytes)
        assert a.notes == b.notes
    assert one.notes == two.notes
    strip = [json.loads(p.to_json()) for p in (one, two)]
    for doc in strip:
        doc.pop("history")  # pass timings differ from run to run
    assert strip[0] == strip[1]


def test_json_round_trip_keeps_placement():
    x = la.asarray(np.arange(30.0).reshape(5, 6), chunks=(2, 3))
    plan = placed((x @ x.T).mean(axis=0))
    back = Plan.from_json(plan.to_json())
    assert back.notes == json.loads(json.dumps(plan.notes))
    assert back.notes["place"]["stages"] == plan.notes["place"]["stages"]
    for name, s in plan.stages.items():
        t = back.stages[name]
        assert t.worker.dtype == np.int32 and t.est_bytes.dtype == np.int64
        assert np.array_equal(t.worker, s.worker) and np.array_equal(t.est_bytes, s.est_bytes)
        assert t.notes == s.notes


def test_summary_notes():
    x = la.asarray(np.arange(64.0).reshape(8, 8), chunks=(4, 4))
    plan = placed(x @ x, ctx=CTX2)
    notes = plan.notes["place"]
    assert notes["workers"] == list(WORKERS) and notes["n_workers"] == 4
    pw = notes["per_worker"]
    assert set(pw) == {"memory", "net_in", "net_out", "bytes_in"}
    assert all(len(v) == 4 for v in pw.values())
    assert sum(pw["bytes_in"]) == notes["total_bytes"]
    # same-host copies are discounted in the network loads, not in the raw bytes
    assert sum(pw["net_in"]) < notes["total_bytes"]
    assert set(notes["stages"]) == set(plan.stages)
    assert plan.notes["layout"]["order"] == [0, 2, 1, 3]


def test_existing_workers_are_kept_by_layout():
    plan = base_plan(la.ones((4, 4), chunks=2) + 1)
    src = stage_of(plan, "full")
    pinned = np.full(src.numblocks, 3, dtype=np.int32)
    stages = dict(plan.stages)
    stages[src.name] = src.replace(worker=pinned)
    plan = plan.with_stages(stages)
    out = place.run(layout.run(plan, CTX), CTX)
    assert out.stages[src.name].worker.tolist() == pinned.tolist()
    # the sum reads blocks that all sit on worker 3: three of four move to their owners
    add = stage_of(out, "elementwise")
    assert add.worker.tolist() == [[0, 1], [2, 3]]
    assert add.est_bytes.tolist() == [[32, 32], [32, 0]]
    assert_replay(out, [np.full((4, 4), 2.0)])


def test_memory_limit_rules_out_owner_computes():
    a = la.ones((400, 400), chunks=100)
    b = la.ones((400, 400), chunks=100) * 2
    small = PassContext(n_workers=4, workers=WORKERS, hosts=("h0",) * 4, memory_limit=1000)
    plan = place.run(layout.run(base_plan(a @ b), small), small)
    mm = stage_of(plan, "matmul")
    assert mm.placement.strategy == "tree"
    assert "memory limit" in plan.notes["place"]["stages"][mm.name]
    assert_replay(plan, [np.full((400, 400), 800.0)])


def test_results_identical_with_passes_on_or_off():
    from lazyarr.executors.numpy import NumpyExecutor

    x = la.asarray(np.arange(35.0).reshape(5, 7), chunks=(2, 3))
    expr = (x @ x.T).sum(axis=0) / 3 + x[:, 1]
    plain = base_plan(expr)
    ex = NumpyExecutor()
    (want,) = ex.execute(plain, plain.outputs)
    (got,) = ex.execute(place.run(layout.run(plain, CTX), CTX), plain.outputs)
    assert np.array_equal(got, want)
