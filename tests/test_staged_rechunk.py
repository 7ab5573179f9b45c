"""All-to-all rechunks under a memory limit: fan-out counted, staged through a scratch store.

Before issue 23, a rechunk from row strips to column strips held its whole
input while the memory model counted one block per task: a 2 GiB rechunk ran
at 4x a 512 MiB limit with no word. Now the estimate counts every block kept
for its last reader (``optimize/fanout.py``), and a plan over the limit for
that reason is rewritten to go through a scratch zarr store
(``lazyarr/staged_rechunk.py``) in blocks that fit. Values are checked
against NumPy; memory by a child process's peak RSS.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import api
from lazyarr.graph.chunks import regular_chunks
from lazyarr.graph.ops.manipulation import Concat
from lazyarr.graph.ops.rechunk import Rechunk
from lazyarr.graph.ops.staged import StagedRead
from lazyarr.graph.ops.store import Write
from lazyarr.graph.rechunk_plan import is_all_to_all, staged_grids
from lazyarr.namespace.composing import raise_where
from lazyarr.staged_rechunk import stage_rechunks
from lazyarr.testing import executors_under_test

EXECUTORS = executors_under_test()


# ------------------------------------------------------------------ the chunk arithmetic


@settings(max_examples=60, deadline=None)
@given(
    shape=st.lists(st.integers(1, 400), min_size=1, max_size=3),
    data=st.data(),
    budget=st.integers(1, 20_000),
)
def test_staged_grids_fit_the_budget_and_align(shape, data, budget):
    old = [data.draw(st.integers(1, n)) for n in shape]
    new = [data.draw(st.integers(1, n)) for n in shape]
    g = staged_grids(shape, 1, old, new, budget)
    for blocks, floor in ((g.read, old), (g.write, new)):
        # at most the budget, unless one old (new) block alone is bigger
        assert math.prod(blocks) <= max(budget, math.prod(floor)) or blocks == tuple(floor)
        assert all(1 <= b <= max(n, f) for b, n, f in zip(blocks, shape, floor))
    for r, i, w, n in zip(g.read, g.inter, g.write, shape):
        assert i == min(r, w) or r < i  # read was cut to a multiple of the intermediate
        assert r % i == 0 or r >= n  # read blocks write whole intermediate chunks
    for w, d, n in zip(g.write, new, shape):
        assert w % d == 0 or w >= n  # write blocks split into whole target blocks


def test_row_strips_to_column_strips_is_all_to_all():
    rows = (regular_chunks(4096, 256), (1024,))
    cols = ((4096,), regular_chunks(1024, 4))
    assert is_all_to_all(rows, cols)
    assert not is_all_to_all(rows, (regular_chunks(4096, 512), (1024,)))  # a merge
    assert not is_all_to_all(rows, (regular_chunks(4096, 128), (1024,)))  # a split


# ------------------------------------------------------------------ the memory model


def test_fanout_is_counted_in_the_estimate():
    """Each column strip reads a piece of every row strip: all of them stay held."""
    x = la.random.random((4096, 512), chunks=(256, 512), seed=1)
    y = la.map_blocks(lambda b: b + 0, x, dtype=x.dtype).rechunk((4096, 8)).sum(axis=0)
    plan = api.make_plan([y._expr], "numba", api.passes_for(None, None))
    est = api.memory_estimate(plan, api.pass_context("numba", False))
    assert est.fanout >= x.nbytes
    assert est.peak >= x.nbytes
    assert "kept for readers of many blocks" in la.explain(y)
    with la.config.set({"memory-limit": "4MiB"}):
        text = la.explain(y)  # the plan that runs: the rechunk through a scratch store
    assert "staged-read" in text and "over the limit" not in text


def test_fanout_over_an_array_already_in_memory_holds_nothing_more():
    """A user's array is in memory before the run and after it (its blocks are views, or on
    a cluster scattered for the whole run): moving it to columns holds nothing extra, while
    the same move of a computed copy holds every row strip."""
    a = np.random.default_rng(2).random((4096, 512))
    x = la.asarray(a, chunks=(256, 512))
    moved = x.rechunk((4096, 8)).sum(axis=0)
    computed = (x * 2).rechunk((4096, 8)).sum(axis=0)
    ctx = api.pass_context("numba", False)
    passes = ("cse", "simplify", "fuse")
    held = api.memory_estimate(api.make_plan([moved._expr], "numba", passes), ctx).fanout
    held_computed = api.memory_estimate(api.make_plan([computed._expr], "numba", passes), ctx)
    assert held == 0
    assert held_computed.fanout >= a.nbytes
    with la.config.set({"memory-limit": "4MiB"}):
        np.testing.assert_allclose(moved.compute(), a.sum(axis=0))


def test_the_direct_plan_is_refused_by_the_check():
    x = la.random.random((4096, 512), chunks=(256, 512), seed=1)
    y = la.map_blocks(lambda b: b + 0, x, dtype=x.dtype).rechunk((4096, 8))
    limit = la.config.set({"memory-limit": "4MiB"})
    with limit, pytest.raises(la.MemoryLimitError, match="held"):
        api.check_memory(
            api.make_plan([y.sum()._expr], "numba", ()),
            api.pass_context("numba", False),
        )


# ------------------------------------------------------------------ values and tasks


@st.composite
def _grids(draw):
    """A shape and two uneven grids that move data all-to-all: row pieces to column pieces
    (further axes cut at random)."""
    ndim = draw(st.integers(2, 3))
    shape = tuple(draw(st.integers(2, 24)) for _ in range(ndim))

    def cut(n, most, least=0):
        cuts = sorted(draw(st.sets(st.integers(1, n - 1), min_size=least, max_size=most)))
        edges = [0, *cuts, n]
        return tuple(b - a for a, b in itertools.pairwise(edges))

    old = [cut(shape[0], 6, 1), (shape[1],)] + [cut(n, 3) for n in shape[2:]]
    new = [(shape[0],), cut(shape[1], 6, 1)] + [cut(n, 3) for n in shape[2:]]
    return shape, tuple(old), tuple(new)


@pytest.mark.parametrize("executor", EXECUTORS)
@settings(max_examples=12, deadline=None)
@given(grids=_grids(), seed=st.integers(0, 3))
def test_staged_rechunk_equals_numpy(executor, grids, seed, tmp_path_factory):
    shape, old, new = grids
    a = np.random.default_rng(seed).standard_normal(shape)
    x = la.asarray(a, chunks=old)
    y = la.map_blocks(lambda b: b * 2, x, dtype=x.dtype).rechunk(new)
    scratch = tmp_path_factory.mktemp("scratch")
    staging = stage_rechunks([y._expr], 64, lambda: tempfile.mkdtemp(dir=scratch), min_bytes=0)
    if staging is not None:  # 64-byte blocks: every all-to-all grid goes through the store
        (got,) = api.compute_exprs(staging.exprs, executor=executor)
        staging.close()
        np.testing.assert_array_equal(got, a * 2)
        assert list(scratch.iterdir()) == []
    np.testing.assert_array_equal(y.compute(executor=executor), a * 2)


@pytest.mark.parametrize("executor", EXECUTORS)
def test_rechunk_over_the_limit_runs_through_a_scratch_store(executor, tmp_path):
    a = np.random.default_rng(0).standard_normal((2048, 256))
    x = la.asarray(a, chunks=(64, 256))
    y = la.map_blocks(lambda b: b - 1, x, dtype=x.dtype).rechunk((2048, 8))
    scratch = tmp_path / "scratch"
    with la.config.set({"memory-limit": "3MiB", "temporary-directory": str(scratch)}):
        la.to_zarr(y, str(tmp_path / "out.zarr"), executor=executor)
        ready = api._prepare([y.sum(axis=0)._expr], executor, None, None)
    plan, staging = ready.plan, ready.staging
    assert staging is not None
    staging.close()
    import zarr

    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "out.zarr"))[:], a - 1)
    assert list(scratch.iterdir()) == []  # every scratch store removed
    kinds = {type(s.expr.op) for s in plan.stages.values()}
    assert {Write, StagedRead} <= kinds
    # fewer tasks per stage than input plus output blocks (rechunker's bound), at most that
    # many in the whole exchange: the computed input written in its own blocks, read back in
    # the target's, with no stage gathering or splitting blocks in between
    n_in, n_out = 2048 // 64, 256 // 8
    staged = [s for s in plan.stages.values() if isinstance(s.expr.op, (Write, StagedRead))]
    per_stage = [math.prod(s.numblocks) for s in staged]
    assert max(per_stage) < n_in + n_out
    assert sum(per_stage) <= n_in + n_out
    assert not any(isinstance(s.expr.op, Rechunk) for s in plan.stages.values())


def test_scratch_store_is_removed_after_an_error(tmp_path):
    a = np.arange(2048 * 256, dtype=np.float64).reshape(2048, 256)
    x = la.asarray(a, chunks=(64, 256))
    y = raise_where(x * 1, x > a[2000, 3], ValueError, "bad value").rechunk((2048, 8))
    scratch = tmp_path / "scratch"
    limit = la.config.set({"memory-limit": "3MiB", "temporary-directory": str(scratch)})
    with limit, pytest.raises(ValueError, match="bad value"):
        y.sum(axis=0).compute()
    assert list(scratch.iterdir()) == []


@st.composite
def _joined_grids(draw):
    """Two or three parts of one (rows, columns) width, each in row pieces of its own, and a
    target in column pieces: a concatenation moved all-to-all."""
    cols = draw(st.integers(2, 12))
    parts = []
    for _ in range(draw(st.integers(2, 3))):
        n = draw(st.integers(1, 10))
        cuts = sorted(draw(st.sets(st.integers(1, max(1, n - 1)), max_size=3))) if n > 1 else []
        parts.append(tuple(b - a for a, b in itertools.pairwise([0, *cuts, n])))
    cuts = sorted(draw(st.sets(st.integers(1, cols - 1), min_size=1, max_size=4)))
    target = tuple(b - a for a, b in itertools.pairwise([0, *cuts, cols]))
    return cols, parts, target


@pytest.mark.parametrize("executor", EXECUTORS)
@settings(max_examples=12, deadline=None)
@given(grids=_joined_grids(), seed=st.integers(0, 3))
def test_a_concatenation_moved_all_to_all_is_staged_as_one_scratch_array(
    executor, grids, seed, tmp_path_factory
):
    """Each part is written at its place in one scratch array and the whole read back in the
    target's blocks: no task joins pieces of several parts (the only concatenation left
    joins the writes' counts). Values equal NumPy's, with a computed part and a cast."""
    cols, parts, target = grids
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((sum(p), cols)) for p in parts]
    arrays[0] = arrays[0].astype(np.float32)  # the result's dtype is the parts' common one
    xs = [la.asarray(a, chunks=(p, cols)) for a, p in zip(arrays, parts)]
    xs[-1] = la.map_blocks(lambda b: b * 2, xs[-1], dtype=xs[-1].dtype)
    y = la.concatenate(xs, axis=0).rechunk((-1, target))
    want = np.concatenate([*arrays[:-1], arrays[-1] * 2])
    scratch = tmp_path_factory.mktemp("scratch")
    staging = stage_rechunks([y._expr], 64, lambda: tempfile.mkdtemp(dir=scratch), min_bytes=0)
    assert staging is not None
    plan = api.make_plan(staging.exprs, executor)
    reads = [s for s in plan.stages.values() if isinstance(s.expr.op, StagedRead)]
    assert len(reads) == 1  # one scratch array for every part
    joins = [s for s in plan.stages.values() if isinstance(s.expr.op, Concat)]
    assert all(s.expr.dtype == np.int64 for s in joins)  # counts, not data
    (got,) = api.compute_exprs(staging.exprs, executor=executor)
    staging.close()
    np.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    assert list(scratch.iterdir()) == []


def _cross_grid_cases(x, y, a, b):
    """Expressions that combine or move two stores chunked across each other (row strips and
    column strips), with what NumPy gives."""
    return {
        "concatenate": (la.concatenate([x, y], axis=0), np.concatenate([a, b])),
        "stack": (la.stack([x, y]), np.stack([a, b])),
        "add": (x + y, a + b),
        "transpose to pencils": (x.T.rechunk((8, 2048)), a.T),
        "reshape": (x.reshape(256, 2048), a.reshape(256, 2048)),
        # joined across grids, then moved to columns: the row strips' part is all-to-all
        "concatenate to columns": (
            la.concatenate([x, y], axis=0).rechunk((4096, 8)),
            np.concatenate([a, b]),
        ),
        "stack to columns": (la.stack([x, y]).rechunk((2, 2048, 8)), np.stack([a, b])),
        # row strips of two grids joined and moved to columns: staged as one scratch array
        "row strips joined to columns": (
            la.concatenate([x, x[:1000] * 2], axis=0).rechunk((3048, 8)),
            np.concatenate([a, a[:1000] * 2]),
        ),
    }


_STAGED = {
    "transpose to pencils",
    "concatenate to columns",
    "stack to columns",
    "row strips joined to columns",
}


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize(
    "case",
    [
        "concatenate",
        "stack",
        "add",
        "transpose to pencils",
        "reshape",
        "concatenate to columns",
        "stack to columns",
        "row strips joined to columns",
    ],
)
def test_movements_across_grids_fit_a_small_limit(executor, case, tmp_path):
    """Concatenate, stack and arithmetic across grids, and transposes and reshapes written in
    other chunks, run under a limit below either input (4 MiB each) and equal NumPy; the
    transpose to pencils, and row strips joined to column strips then moved to columns, go
    through the scratch store."""
    import zarr

    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((2048, 256)), rng.standard_normal((2048, 256))
    la.to_zarr(la.asarray(a, chunks=(64, 256)), str(tmp_path / "a.zarr"))
    la.to_zarr(la.asarray(b, chunks=(2048, 8)), str(tmp_path / "b.zarr"))
    settings_ = {
        "array.chunk-size": "128KiB",
        "memory-limit": "3MiB",
        "temporary-directory": str(tmp_path / "scratch"),
    }
    with la.config.set(settings_):
        x, y = la.from_zarr(str(tmp_path / "a.zarr")), la.from_zarr(str(tmp_path / "b.zarr"))
        expr, want = _cross_grid_cases(x, y, a, b)[case]
        la.to_zarr(expr, str(tmp_path / "out.zarr"), executor=executor)
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "out.zarr"))[:], want)
    staged = any(isinstance(s.expr.op, StagedRead) for s in la.last_run().plan.stages.values())
    assert staged == (case in _STAGED)
    assert not (tmp_path / "scratch").exists() or list((tmp_path / "scratch").iterdir()) == []


# ------------------------------------------------------------------ measured memory

_CHILD = r"""
import json, sys
import numpy as np
import lazyarr as la
from lazyarr import api
limit, case = int(sys.argv[1]), sys.argv[2]
def rows_to_columns(n):
    x = la.random.random((n, 1024), chunks=(256, 1024), seed=3)
    if case == "joined":  # two parts in row strips of their own, one computed
        y = la.random.random((n // 2, 1024), chunks=(1536, 1024), seed=4) * 1.5
        x = la.concatenate([x[: n // 2], y])
        return x, x.rechunk((n, 4))
    return x, (x * 1.5).rechunk((n, 4))  # a computed input: moved, not made again
with la.config.set({"numba.compile-threshold": 0, "memory-limit": limit}):
    rows_to_columns(2048)[1].sum(axis=0).compute()  # compiled first: not counted
x, y = rows_to_columns(32768)  # 256 MiB
with la.config.set({"memory-limit": limit, "optimize.check": False}):
    naive = api.make_plan([y.sum(axis=0)._expr], "numba", api.passes_for(None, None))
    predicted = api.memory_estimate(naive, api.pass_context("numba", False)).peak
def status(field):
    with open("/proc/self/status") as f:
        return next(int(s.split()[1]) * 1024 for s in f if s.startswith(field))
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the high-water mark starts again from the RSS now
base = status("VmRSS:")
with la.config.set({"memory-limit": limit}):
    got = y.sum(axis=0).compute()
peak = status("VmHWM:")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base2 = status("VmRSS:")
direct = y.sum(axis=0).compute()  # no limit: the direct plan, holding its input
naive = status("VmHWM:") - base2
ok = bool(np.allclose(got, direct))
print(json.dumps({"growth": peak - base, "naive": naive, "naive_predicted": predicted, "ok": ok}))
"""


@pytest.mark.parametrize("case", ["rows", "joined"])
def test_child_process_stays_under_the_limit_a_naive_rechunk_breaks(tmp_path, case):
    """256 MiB of column strips under a 64 MiB limit: the naive plan would hold it all; the
    same for two parts of other row grids joined and moved (staged as one scratch array)."""
    limit = 64 << 20
    env = dict(os.environ, LAZYARR_TEMPORARY_DIRECTORY=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(limit), case],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=True,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["ok"]
    assert got["naive"] > 2 * limit  # the direct plan holds its input: it breaks the limit
    assert got["naive_predicted"] >= got["naive"]  # and its estimate says so
    assert got["growth"] <= limit, got
    assert list(tmp_path.iterdir()) == []


def test_scratch_array_keeps_exact_edges_and_refuses_cut_chunks(tmp_path):
    from lazyarr.io.scratch import ScratchArray

    a = np.arange(7 * 10, dtype=np.float32).reshape(7, 10)
    s = ScratchArray(str(tmp_path / "s"), a.shape, a.dtype, (3, 4))
    for r in range(0, 7, 3):
        s.write((slice(r, min(r + 3, 7)), slice(0, 10)), a[r : r + 3])
    assert sum(f.stat().st_size for f in (tmp_path / "s").iterdir()) == a.nbytes  # no padding
    for where in [
        (slice(0, 7), slice(0, 10)),
        (slice(2, 6), slice(3, 9)),
        (slice(6, 7), slice(8, 10)),
    ]:
        np.testing.assert_array_equal(s.read(where), a[where])
    with pytest.raises(ValueError, match="cuts chunk"):
        s.write((slice(1, 4), slice(0, 10)), a[1:4])


def test_scratch_array_takes_a_grid_of_its_own_per_axis(tmp_path):
    """Chunks given per axis (a concatenation's parts, each in its own rows) are stored and
    read back exactly; a write across their edges is refused."""
    from lazyarr.io.scratch import ScratchArray

    a = np.arange(9 * 6, dtype=np.float64).reshape(9, 6)
    rows, cols = (2, 2, 1, 4), (3, 3)
    s = ScratchArray(str(tmp_path / "s"), a.shape, a.dtype, (rows, cols))
    starts = [0, 2, 4, 5, 9]
    for r0, r1 in itertools.pairwise(starts):
        s.write((slice(r0, r1), slice(0, 6)), a[r0:r1])
    assert (tmp_path / "s" / "data").stat().st_size == a.nbytes
    for where in [
        (slice(0, 9), slice(0, 6)),
        (slice(1, 8), slice(2, 5)),
        (slice(4, 5), slice(5, 6)),
    ]:
        np.testing.assert_array_equal(s.read(where), a[where])
    with pytest.raises(ValueError, match="cuts chunk"):
        s.write((slice(3, 5), slice(0, 6)), a[3:5])
    with pytest.raises(ValueError, match="add up"):
        ScratchArray(str(tmp_path / "t"), a.shape, a.dtype, ((2, 2), cols))
