"""The sample sort of 1-d arrays in several blocks (``graph/ops/samplesort.py``).

Against NumPy on the numpy and numba executors (``assert_eq``: passes on
and off), on dask in ``tests/executors/test_samplesort_dask.py``; plus the
structure that makes it distributed: the result keeps the input's blocks,
and no task reads more than one block of the data.
"""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lazyarr as la
from lazyarr import api
from lazyarr._array import wrap
from lazyarr.graph.ops.samplesort import Exchange, SampleSortStage, samplesort
from lazyarr.optimize.lower import lower
from lazyarr.optimize.tasks import TaskKind
from lazyarr.testing import assert_eq

EXECUTORS = ["numpy", "numba"]

CHUNKINGS = [
    (1,) * 9,
    (4, 5),
    (2, 0, 3, 0, 0, 4),
    (0, 9),
    (8, 1),
    (1, 1, 7),
]


def desc_argsort(x: np.ndarray) -> np.ndarray:
    """Descending argsort with ties in input order (the reversed-line recipe)."""
    return x.size - 1 - np.flip(np.argsort(np.flip(x), kind="stable"))


def check(x: np.ndarray, chunks: tuple[int, ...]) -> None:
    """sort and argsort, both directions, keep ``chunks`` and equal NumPy's."""
    a = la.asarray(x, chunks=(chunks,))
    cases = [
        (la.sort(a), np.sort(x)),
        (la.argsort(a), np.argsort(x, kind="stable")),
        (la.sort(a, descending=True), np.flip(np.sort(np.flip(x)))),
        (la.argsort(a, descending=True), desc_argsort(x)),
    ]
    for got, want in cases:
        assert got.chunks == (chunks,)
        assert_eq(got, want, executors=EXECUTORS)


@pytest.mark.parametrize("chunks", CHUNKINGS)
def test_float64_over_uneven_chunkings(chunks):
    x = np.random.default_rng(sum(chunks) + len(chunks)).standard_normal(9)
    check(x, chunks)


@pytest.mark.parametrize(
    "x",
    [
        np.array([5, -3, 7, 7, 0, -3, 127, -128, 1], dtype=np.int8),
        np.array([2**40, 3, -(2**40), 3, 0, 9, 9, 1, 2], dtype=np.int64),
        np.array([7, 3, 0, 3, 65535, 9, 1, 1, 2], dtype=np.uint16),
        np.array([True, False, True, True, False, False, True, False, True]),
        np.array([np.nan, 1.0, -0.0, np.nan, 0.0, -np.inf, np.inf, 1.0, np.nan]),
        np.array([3.5, 1.25, -2.0, 3.5, 0.5, 3.5, 9.0, -1.0, 0.0], dtype=np.float32),
    ],
    ids=["int8", "int64", "uint16", "bool", "float-nan-zeros-inf", "float32"],
)
def test_dtypes(x):
    check(x, (2, 0, 3, 1, 3))


@pytest.mark.parametrize("chunks", [(1,) * 9, (3, 3, 3), (2, 0, 7)])
def test_duplicates(chunks):
    check(np.full(9, 4.0), chunks)
    check(np.array([1, 0, 1, 1, 0, 0, 1, 0, 1]), chunks)


def test_many_duplicates_with_few_samples():
    """All equal and two values over 12 blocks with k = 2: brackets stay bounded, ties stable."""
    for x in (np.zeros(200, dtype=np.int32), np.arange(200) % 2):
        a = la.asarray(x, chunks=((17,) * 11 + (13,),))
        got = wrap(samplesort(a._expr, arg=True, k=2)).compute(executor="numpy")
        np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))
        got = wrap(samplesort(a._expr, k=2)).compute(executor="numba")
        np.testing.assert_array_equal(got, np.sort(x))


def test_stable_argsort_ties_across_blocks():
    x = np.array([3, 1, 3, 1, 2, 3, 1, 2] * 5)
    a = la.asarray(x, chunks=3)
    assert_eq(la.argsort(a), np.argsort(x, kind="stable"), executors=EXECUTORS)
    assert_eq(la.argsort(a, descending=True), desc_argsort(x), executors=EXECUTORS)


def test_empty_and_single_block_keep_the_one_block_sort():
    for x, chunks in [(np.zeros(0), ((0,),)), (np.array([2.0, 1.0]), ((2,),))]:
        a = la.asarray(x, chunks=chunks)
        plan = api.make_plan([la.sort(a)._expr], "numpy", ())
        assert not any(isinstance(s.expr.op, SampleSortStage) for s in plan.stages.values())
        assert_eq(la.sort(a), np.sort(x), executors=EXECUTORS)


def test_fallbacks_to_one_block():
    """Complex values and argsort of NumPy's unstable kinds keep one block."""
    c = la.asarray(np.array([1 + 2j, 1 - 1j, 0j, 3 + 0j]), chunks=2)
    assert la.sort(c).chunks == ((4,),)
    x = np.array([2.0, 1.0, 2.0, 0.0])
    a = la.asarray(x, chunks=2)
    assert np.argsort(a).chunks == ((4,),)  # NumPy's default kind orders ties its own way
    assert_eq(np.argsort(a), np.argsort(x), executors=EXECUTORS)
    assert np.sort(a).chunks == ((2, 2),)  # values do not depend on how ties are ordered


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_hypothesis_chunkings(data):
    sizes = data.draw(st.lists(st.integers(0, 6), min_size=2, max_size=6))
    n = sum(sizes)
    if n == 0:
        sizes[0] = n = 1
    kind = data.draw(st.sampled_from(["float64", "int16", "bool", "dup"]))
    seed = data.draw(st.integers(0, 1000))
    rng = np.random.default_rng(seed)
    if kind == "float64":
        x = rng.standard_normal(n)
        x[rng.random(n) < 0.2] = np.nan
    elif kind == "dup":
        x = rng.integers(0, 2, n).astype(float)
    elif kind == "bool":
        x = rng.random(n) < 0.5
    else:
        x = rng.integers(-5, 5, n).astype(np.int16)
    a = la.asarray(x, chunks=(tuple(sizes),))
    k = data.draw(st.integers(1, 5))
    got = wrap(samplesort(a._expr, arg=True, k=k)).compute(executor="numpy")
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))
    got = wrap(samplesort(a._expr, k=k)).compute(executor="numpy")
    np.testing.assert_array_equal(got, np.sort(x))


def _reads_of_data(graph, n: int | tuple[int, ...]) -> list[tuple[str, int, int]]:
    """Per task: its stage's op label, the most blocks it reads of one data array, elements read.

    "Data" is every array of ``n`` elements (the input, the sorted blocks,
    their indices): what a sort must not gather into one task.
    """
    shape = n if isinstance(n, tuple) else (n,)
    out = []
    for task in graph.tasks:
        stage = graph.stages[task.stage]
        blocks: dict[int, int] = {}
        read = 0
        for pos, b in task.inputs or ():
            e = stage.input_exprs[pos]
            if e.shape == shape:
                blocks[pos] = blocks.get(pos, 0) + 1
                read += int(np.prod([c[i] for c, i in zip(e.chunks, b)]))
        out.append((stage.expr.op.label(), max(blocks.values(), default=0), read))
    return out


@pytest.mark.parametrize("arg", [False, True])
def test_no_task_reads_more_than_its_block(arg):
    """Each task reads at most one block of data; the exchange reads the data once."""
    n, chunks = 8 * 500, (500,) * 8
    a = la.asarray(np.random.default_rng(0).random(n), chunks=(chunks,))
    y = la.argsort(a) if arg else la.sort(a)
    assert y.chunks == (chunks,)
    plan = api.make_plan([y._expr], "numpy", ())
    graph = lower(plan)
    reads = _reads_of_data(graph, n)
    assert max(most for _, most, _ in reads) == 1
    partials = [r for label, _, r in reads if label == "samplesort.exchange"]
    assert len(partials) == 8 * 8 + 8  # a partial per (output, input) block, a finalize each
    arrays = 2 if arg else 1  # the sorted blocks, and their global indices for argsort
    assert sum(partials) == arrays * 8 * n  # each partial reads its own block (in place) ...
    ex = [s for s in graph.stages if isinstance(s.expr.op, Exchange)]
    assert len(ex) == 1
    # the samples gathered into one task are a small share of the data
    (cands,) = [s for s in graph.stages if s.expr.op.label() == "samplesort.candidates"]
    assert cands.input_exprs[0].size <= n // 8
    # ... and keeps only its slice: the states the finalizes merge are n elements in all
    got = y.compute(executor="numpy")
    assert got.shape == (n,)


def test_no_task_reads_more_than_its_block_in_two_dimensions():
    """Sorting along axis 1 of a 2-d array: the row blocks stay apart, the columns exchange."""
    x = np.random.default_rng(1).random((6, 400))
    a = la.asarray(x, chunks=(3, 100))
    y = la.argsort(a, axis=1)
    assert y.chunks == a.chunks
    graph = lower(api.make_plan([y._expr], "numpy", ()))
    reads = _reads_of_data(graph, x.shape)
    assert max(most for _, most, _ in reads) == 1
    partials = [r for label, _, r in reads if label == "samplesort.exchange"]
    assert len(partials) == 2 * (4 * 4 + 4)  # per row block: 4 x 4 partials, 4 finalizes
    assert sum(partials) == 2 * 4 * x.size  # values and indices, each block by 4 partials


def test_exchange_partials_placed_on_block_owners():
    """On 4 workers: each exchange partial runs where its sorted block lives, and the
    finalize on an output block's owner reads its slices directly (no combined state of
    several slices on any worker)."""
    from lazyarr.graph import build
    from lazyarr.optimize.pipeline import PASSES, PassContext, optimize
    from lazyarr.optimize.plan import Plan

    workers = tuple(f"w{i}" for i in range(4))
    ctx = PassContext(n_workers=4, workers=workers, hosts=("h0",) * 4, check=True)
    x = la.random.random(80_000, chunks=10_000, seed=1)
    plan = optimize(Plan.from_graph(build([la.sort(x)._expr])), tuple(PASSES), ctx)
    graph = lower(plan)
    si = next(i for i, s in enumerate(graph.stages) if isinstance(s.expr.op, Exchange))
    local = next(s for s in graph.stages if s.expr.op.label() == "samplesort.local")
    owner = local.worker.ravel()
    tasks = [t for t in graph.tasks if t.stage == si]
    partials = [t for t in tasks if t.kind == TaskKind.PARTIAL]
    assert len(partials) == 64
    assert all(t.worker == owner[t.region[1].start // 10_000] for t in partials)
    out_owner = graph.stages[si].worker.ravel()
    assert not [t for t in tasks if t.kind == TaskKind.COMBINE]
    for j in range(8):
        (final,) = [t for t in tasks if t.kind == TaskKind.FINALIZE and t.index == (j,)]
        assert final.worker == out_owner[j]
        # every slice of block j, each read once, from the worker that cut it
        mine = [t for t in partials if t.index == (j,)]
        assert [graph.tasks[d] for d in final.deps] == mine


def test_gathering_combine_schedule():
    """One step on the owner reading every part (each part moves at most once); a
    reduction that does not gather folds locally first, then pairwise."""
    from lazyarr.optimize.placement.planner import combine_schedule

    steps = combine_schedule([0, 1, 0, 1, 2, 3, 2, 3], owner=3, gather=True)
    assert steps == [(0, 1, 2, 3, 4, 5, 6, 7, 3)]
    assert combine_schedule([2], owner=3, gather=True) == []
    steps = combine_schedule([0, 1, 0, 1, 2, 3, 2, 3], owner=3, fan_in=16)
    folds = [(5, 7, 3), (0, 2, 0), (1, 3, 1), (4, 6, 2)]
    assert steps == [*folds, (8, 9, 3), (10, 11, 1), (12, 13, 3)]


def test_stable_values_keep_signed_zeros_and_nans_in_input_order():
    """Sorted by NumPy's fastest kind, then -0.0/0.0 and NaN runs put back: bit for bit stable."""
    from lazyarr.kernels.reference.samplesort import stable_values

    rng = np.random.default_rng(0)
    pool = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf])
    for _ in range(50):
        v = rng.choice(pool, size=int(rng.integers(0, 30)))
        assert stable_values(v).tobytes() == np.sort(v, kind="stable").tobytes()
    x = rng.choice(pool, size=40)
    got = la.sort(la.asarray(x, chunks=7)).compute(executor="numpy")
    assert got.tobytes() == np.sort(x, kind="stable").tobytes()


def test_merge_sorted_keeps_signed_zeros_and_nans_in_block_order():
    """Sorted pieces merged bit for bit as a stable sort of their concatenation."""
    from lazyarr.kernels.reference.samplesort import merge_sorted, stable_values

    rng = np.random.default_rng(1)
    pool = np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf, -np.inf])
    for _ in range(50):
        pieces = [
            stable_values(rng.choice(pool, size=int(rng.integers(0, 12))))
            for _ in range(int(rng.integers(1, 5)))
        ]
        want = np.sort(np.concatenate(pieces), kind="stable")
        got = merge_sorted(pieces, np.empty(want.size))
        assert got.tobytes() == want.tobytes()


MERGE_POOLS = {
    "float64": np.array([0.0, -0.0, np.nan, -np.nan, 1.0, -1.0, np.inf, -np.inf, 0.5]),
    "float32": np.array([0.0, -0.0, np.nan, 2.5, -1.0], dtype=np.float32),
    "int64": np.arange(-3, 4),
    "bool": np.array([False, True]),
}


@pytest.mark.parametrize("dtype", sorted(MERGE_POOLS))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_merge_sorted_in_parts_bit_for_bit(dtype, data):
    """Merged in parts cut by value (parts of 8 bytes here): still the stable sort of the
    concatenated pieces, ties (signed zeros, NaNs) in block order, empty pieces too."""
    from lazyarr.kernels.reference import samplesort as kernels

    pool = MERGE_POOLS[dtype]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    sizes = data.draw(st.lists(st.integers(0, 30), min_size=1, max_size=6))
    pieces = [kernels.stable_values(rng.choice(pool, size=s)) for s in sizes]
    want = np.sort(np.concatenate(pieces), kind="stable")
    with mock.patch.object(kernels, "MERGE_PART_BYTES", 8):
        got = kernels.merge_sorted(pieces, np.empty(want.size, dtype=pool.dtype))
    assert got.tobytes() == want.tobytes()


def test_sort_with_parted_merges_on_both_executors(monkeypatch):
    from lazyarr.kernels.reference import samplesort as kernels

    monkeypatch.setattr(kernels, "MERGE_PART_BYTES", 64)
    rng = np.random.default_rng(5)
    x = rng.choice(np.array([0.0, -0.0, np.nan, -np.nan, 2.0, -3.0, 7.5]), size=2_000)
    x[::3] = rng.standard_normal(x[::3].size)
    for executor in EXECUTORS:
        got = la.sort(la.asarray(x, chunks=150)).compute(executor=executor)
        assert got.tobytes() == np.sort(x, kind="stable").tobytes()


@pytest.mark.parametrize("executor", EXECUTORS)
def test_signed_zeros_and_nans_across_blocks_bit_for_bit(executor):
    """Many zeros and NaNs of both signs spread over blocks: the order of a stable sort."""
    rng = np.random.default_rng(2)
    x = rng.choice(np.array([0.0, -0.0, np.nan, -np.nan, 2.0, -3.0]), size=300)
    got = la.sort(la.asarray(x, chunks=37)).compute(executor=executor)
    assert got.tobytes() == np.sort(x, kind="stable").tobytes()
    idx = la.argsort(la.asarray(x, chunks=37)).compute(executor=executor)
    np.testing.assert_array_equal(idx, np.argsort(x, kind="stable"))


@pytest.mark.parametrize(
    ("shape", "chunks"),
    [((5, 7), (2, 3)), ((4, 9, 3), (3, (2, 0, 4, 3), 2)), ((6, 4), ((1, 2, 3), (1, 3)))],
)
def test_multi_dimensional_along_every_axis(shape, chunks):
    """Each line along the axis sorted on its own; every axis keeps its blocks."""
    rng = np.random.default_rng(len(shape))
    x = rng.integers(0, 4, shape).astype(float)
    x[0, 1] = np.nan
    a = la.asarray(x, chunks=chunks)
    for axis in range(len(shape)):
        n = x.shape[axis]
        back = np.flip(np.argsort(np.flip(x, axis), axis=axis, kind="stable"), axis)
        cases = [
            (la.sort(a, axis=axis), np.sort(x, axis=axis)),
            (la.argsort(a, axis=axis), np.argsort(x, axis=axis, kind="stable")),
            (la.sort(a, axis=axis, descending=True), np.flip(np.sort(x, axis=axis), axis)),
            (la.argsort(a, axis=axis, descending=True), n - 1 - back),
        ]
        for got, want in cases:
            assert got.chunks == a.chunks
            assert_eq(got, want, executors=EXECUTORS)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_hypothesis_multi_dimensional(data):
    shape = tuple(data.draw(st.lists(st.integers(1, 5), min_size=2, max_size=3)))
    axis = data.draw(st.integers(0, len(shape) - 1))
    chunks = []
    for n in shape:
        cuts = data.draw(st.lists(st.integers(0, n), max_size=3))
        bounds = [0, *sorted(cuts), n]
        chunks.append(tuple(b - a for a, b in itertools.pairwise(bounds)))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    x = rng.integers(0, 3, shape).astype(np.int16)
    a = la.asarray(x, chunks=tuple(chunks))
    k = data.draw(st.integers(1, 4))
    got = wrap(samplesort(a._expr, arg=True, k=k, axis=axis)).compute(executor="numpy")
    np.testing.assert_array_equal(got, np.argsort(x, axis=axis, kind="stable"))
    got = wrap(samplesort(a._expr, k=k, axis=axis)).compute(executor="numpy")
    np.testing.assert_array_equal(got, np.sort(x, axis=axis))


def test_tiny_blocks_with_reblocking_on():
    """The reblock pass (tiny source blocks merged) leaves the sample sort's blocks as built."""
    from lazyarr import config

    x = np.random.default_rng(5).random(300)
    with config.set({"array.min-chunk-size": 1024}):
        a = la.asarray(x, chunks=10)
        g = la.random.random(300, chunks=10, seed=2)
        assert_eq(la.sort(a), np.sort(x), executors=EXECUTORS)
        assert_eq(la.argsort(a, descending=True), desc_argsort(x), executors=EXECUTORS)
        assert_eq(la.argsort(g), np.argsort(g.compute(), kind="stable"), executors=EXECUTORS)


def test_boundaries_are_merged_and_bracketed_in_groups():
    # 4 blocks of 100: 12 samples a block (cap 9), so each group holds 2 of the 5
    # boundaries; ties across blocks and NaN keep the stable order
    from lazyarr.graph.ops.samplesort import boundary_groups

    assert boundary_groups((100,) * 4, 9) == (2, 2, 1)
    assert boundary_groups((625_000,) * 32, 610) == (17, 16)  # even groups
    assert boundary_groups((10,) * 6, 10) == (1,) * 7
    rng = np.random.default_rng(11)
    x = rng.integers(0, 30, 400).astype(float)
    x[rng.integers(0, 400, 9)] = np.nan
    a = la.asarray(x, chunks=100)
    groups = {
        s.expr.chunks[1]
        for s in api.make_plan([la.sort(a)._expr], "numpy", ()).stages.values()
        if getattr(s.expr.op, "part", None) in ("brackets", "offsets")
    }
    assert groups == {(2, 2, 1)}
    assert_eq(la.sort(a), np.sort(x), executors=EXECUTORS)
    assert_eq(la.argsort(a), np.argsort(x, kind="stable"), executors=EXECUTORS)
