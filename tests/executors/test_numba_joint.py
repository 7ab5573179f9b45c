"""Horizontal fusion on the numba executor: sibling reductions computed in one pass.

The fuse pass notes sets of reductions over one block grid that share an
input (``optimize.siblings``); the numba executor computes each set's
partials with one joint kernel. Each result must equal NumPy's, and equal
bit for bit what the stages computed apart give (the folds keep their
order), which the tests check by switching the joint path off.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import chunks_for_shape

import lazyarr as la
from lazyarr.executors import numba as nx
from lazyarr.kernels import numba_set
from lazyarr.kernels.compile import CompileError
from lazyarr.kernels.emit import emit_map, emit_reduce_joint


def computed(*arrays, joint=True, monkeypatch=None):
    """The values of ``arrays`` on the numba executor, and which sibling sets ran jointly."""
    if joint:
        values = la.compute(*arrays, executor="numba")
    else:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(nx.NumbaExecutor, "joint", False)
            values = la.compute(*arrays, executor="numba")
    return values, la.last_run().stats.extra["joint_stages"]


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)  # NaNs in the same places count as equal


DATA = np.random.default_rng(7).normal(size=(37, 23))
DATA[3, 5] = np.nan
DATA[30, :] = 2.5  # ties for argmin/argmax

# (name, lazyarr siblings, NumPy results): each set shares one input and one grid
SETS = [
    ("mean-std-0", lambda x: (x.mean(0), x.std(0)), lambda a: (a.mean(0), a.std(0))),
    (
        "sum-max-min",
        lambda x: (x.sum(), x.max(), (x * 2).min()),
        lambda a: (a.sum(), a.max(), (a * 2).min()),
    ),
    (
        "argmax-var-1",
        lambda x: (la.argmax(x, axis=1), la.var(x, axis=1), la.nanmean(x - 1, axis=1)),
        lambda a: (np.argmax(a, axis=1), np.var(a, axis=1), np.nanmean(a - 1, axis=1)),
    ),
    (
        "argmin-flat-prod",
        lambda x: (la.argmin(x), la.prod(x / 4 + 1), la.any(x > 1)),
        lambda a: (np.argmin(a), np.prod(a / 4 + 1), np.any(a > 1)),
    ),
    (
        "shared-body",
        lambda x: (
            (la.sin(x) * 2).sum(0),
            (la.sin(x) * 2 + x).max(0),
            la.count_nonzero(x > 0, axis=0),
        ),
        lambda a: (
            (np.sin(a) * 2).sum(0),
            (np.sin(a) * 2 + a).max(0),
            np.count_nonzero(a > 0, axis=0),
        ),
    ),
]


@pytest.mark.parametrize("chunks", [(37, 23), (10, 23), (10, 7), (37, 5)])
@pytest.mark.parametrize("name, lazy, numpy", SETS, ids=[s[0] for s in SETS])
def test_siblings_run_jointly_and_equal_numpy_and_the_apart_run(name, lazy, numpy, chunks):
    x = la.asarray(DATA, chunks=chunks)
    with np.errstate(all="ignore"):
        want = numpy(DATA)
    got, joint = computed(*lazy(x))
    assert joint and len(joint[0]) == len(want), "the sibling set did not run jointly"
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, equal_nan=True)
        assert g.dtype == np.asarray(w).dtype
    apart, none = computed(*lazy(x), joint=False)
    assert none == []
    for g, a in zip(got, apart):
        same_bits(g, a)


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint16", "bool", "float32", "complex128"])
def test_integer_bool_float32_and_complex_siblings(dtype):
    a = (np.arange(60).reshape(12, 5) % 7 - 2).astype(dtype)
    if dtype == "complex128":
        a = a + 1j * a[::-1]
    x = la.asarray(a, chunks=(5, 2))
    lazy = [x.sum(0), x.max(0), la.argmin(x, axis=0), x.mean(0)]
    want = [a.sum(0), a.max(0), np.argmin(a, axis=0), a.mean(0)]
    if dtype != "bool":
        lazy.append((x * 3).var(0))
        want.append((a * 3).var(0))
    got, joint = computed(*lazy)
    assert joint and len(joint[0]) == len(lazy)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-6 if dtype == "float32" else 1e-12)


def test_strided_and_broadcast_inputs_of_siblings():
    a = np.arange(300.0).reshape(20, 15)
    x = la.asarray(a, chunks=(6, 15)).T  # a transposed view: strided reads
    row = la.asarray(np.linspace(1, 2, 20))  # broadcast along the first axis
    lazy = [(x * row).sum(1), (x - row).min(1), x.std(1)]
    want = [(a.T * np.linspace(1, 2, 20)).sum(1), (a.T - np.linspace(1, 2, 20)).min(1), a.T.std(1)]
    got, _ = computed(*lazy)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    apart, _ = computed(*lazy, joint=False)
    for g, p in zip(got, apart):
        same_bits(g, p)


def test_empty_arrays_and_size_one_axes():
    e = la.asarray(np.empty((0, 4)), chunks=(1, 2))
    got, _ = computed(e.sum(0), e.max(1), e.mean(1))
    np.testing.assert_array_equal(got[0], np.zeros(4))
    assert got[1].shape == (0,) and got[2].shape == (0,)
    with pytest.raises(ValueError):  # NumPy: zero-size array to reduction without identity
        np.empty((0, 4)).max(0)
    one = la.asarray(np.full((1, 6), 3.0), chunks=(1, 4))
    got, joint = computed(one.sum(0), one.std(0), la.argmax(one, axis=0))
    assert joint
    np.testing.assert_array_equal(got[0], np.full(6, 3.0))
    np.testing.assert_array_equal(got[1], np.zeros(6))
    np.testing.assert_array_equal(got[2], np.zeros(6, dtype=np.intp))


def test_a_joint_kernel_that_cannot_be_built_leaves_the_stages_apart(monkeypatch):
    def broken(*args, **kwargs):
        raise CompileError("no joint kernel today")

    monkeypatch.setattr(numba_set, "joint_partial_function", broken)
    x = la.asarray(DATA, chunks=(10, 23))
    got, joint = computed(x.sum(0), x.max(0))
    assert joint == []
    refused = la.last_run().stats.extra["joint_refused"]
    assert list(refused.values()) == ["CompileError: no joint kernel today"]
    np.testing.assert_allclose(got[0], DATA.sum(0), equal_nan=True)
    np.testing.assert_allclose(got[1], DATA.max(0), equal_nan=True)


def test_siblings_that_are_outputs_of_one_and_inputs_of_another_stage():
    """``(x - x.mean(0)) / x.std(0)``: the siblings feed the same later stage."""
    x = la.asarray(DATA, chunks=(9, 23))
    got, joint = computed((x - x.mean(0)) / x.std(0), x.mean(0))
    assert joint
    np.testing.assert_allclose(got[0], (DATA - DATA.mean(0)) / DATA.std(0), equal_nan=True)
    np.testing.assert_allclose(got[1], DATA.mean(0), equal_nan=True)


_FUNCS = {
    "sum": (la.sum, np.sum),
    "max": (la.max, np.max),
    "min": (la.min, np.min),
    "mean": (la.mean, np.mean),
    "std": (la.std, np.std),
    "argmax": (la.argmax, np.argmax),
    "any": (la.any, np.any),
}
_BODIES = {
    "x": (lambda x: x, lambda a: a),
    "2x+1": (lambda x: x * 2 + 1, lambda a: a * 2 + 1),
    "abs": (la.abs, np.abs),
    "cos": (la.cos, np.cos),
}


@st.composite
def sibling_sets(draw):
    shape = draw(st.tuples(st.integers(1, 9), st.integers(1, 9)))
    chunks = draw(chunks_for_shape(shape))
    axis = draw(st.sampled_from([None, 0, 1]))
    picks = draw(
        st.lists(
            st.tuples(st.sampled_from(sorted(_FUNCS)), st.sampled_from(sorted(_BODIES))),
            min_size=2,
            max_size=4,
            unique=True,
        )
    )
    if axis is None:
        picks = [(f, b) for f, b in picks if f != "argmax"] or [("sum", "x"), ("max", "x")]
    return shape, chunks, axis, picks


@settings(max_examples=25, deadline=None)
@given(sibling_sets(), st.integers(0, 2**32 - 1))
def test_random_sibling_sets_equal_numpy(case, seed):
    shape, chunks, axis, picks = case
    a = np.random.default_rng(seed).normal(size=shape)
    x = la.asarray(a, chunks=chunks)
    lazy = [_FUNCS[f][0](_BODIES[b][0](x), axis=axis) for f, b in picks]
    want = [_FUNCS[f][1](_BODIES[b][1](a), axis=axis) for f, b in picks]
    got, _ = computed(*lazy)
    for g, w in zip(got, want):
        assert g.shape == np.shape(w) and g.dtype == np.asarray(w).dtype
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_generated_source_does_not_depend_on_the_order_of_members():
    """Plans order members by node name, which differs between processes for arrays."""
    x = la.asarray(np.ones((4, 5)))
    u, v = la.cos(x), x * x
    w = la.sin(x) * u
    s = w + v
    members = [e._expr for e in (u, v, la.sin(x), w, s)]
    swapped = [members[1], members[0], *members[2:]]
    inputs = [x._expr]
    assert emit_map(members, inputs).source == emit_map(swapped, inputs).source
    root = la.sum(s)._expr
    one = emit_reduce_joint([(members, root)], inputs)
    two = emit_reduce_joint([(swapped, root)], inputs)
    assert one.source == two.source
    assert [m.key for m in one.members] == [m.key for m in two.members]


# -- elementwise siblings: several outputs written in one pass --------------------------


@pytest.mark.parametrize("chunks", [(37, 23), (10, 7)])
def test_elementwise_siblings_write_every_output_in_one_pass(chunks):
    x = la.asarray(DATA, chunks=chunks)
    i = la.asarray(np.arange(37 * 23).reshape(37, 23) % 11, chunks=chunks)
    lazy = [x + i, x * 2, i % 3, la.where(x > 0, i, -i), x > i]
    with np.errstate(all="ignore"):
        ints = np.arange(37 * 23).reshape(37, 23) % 11
        want = [DATA + ints, DATA * 2, ints % 3, np.where(DATA > 0, ints, -ints), ints < DATA]
    got, joint = computed(*lazy)
    assert joint and sum(len(j) for j in joint) >= 4, joint
    # every output block is computed (the in-memory inputs are read in place: no blocks)
    assert la.last_run().stats.blocks == sum(math.prod(e.numblocks) for e in lazy)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    apart, _ = computed(*lazy, joint=False)
    for g, a in zip(got, apart):
        same_bits(g, a)


def test_elementwise_siblings_that_are_not_outputs():
    """Siblings read by a later stage that does not fuse (cumsum) stay in memory blocks."""
    a = np.linspace(-2, 2, 60).reshape(6, 10)
    x = la.asarray(a, chunks=(4, 3))
    row = la.asarray(np.arange(10.0), chunks=3)  # broadcast
    lazy = [la.cumsum(x * row, axis=0), la.cumsum(la.exp(x) - row, axis=1)]
    want = [np.cumsum(a * np.arange(10.0), axis=0), np.cumsum(np.exp(a) - np.arange(10.0), axis=1)]
    got, joint = computed(*lazy)
    assert joint, "the two elementwise stages did not run jointly"
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)


def test_elementwise_siblings_of_transposed_and_empty_arrays():
    a = np.arange(35.0).reshape(5, 7)
    t = la.asarray(a, chunks=(2, 3)).T
    got, _ = computed(t * 2, t - 1, t.astype(np.float32))
    for g, w in zip(got, [a.T * 2, a.T - 1, a.T.astype(np.float32)]):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    e = la.asarray(np.empty((0, 3)), chunks=(1, 2))
    got, _ = computed(e + 1, e * 2)
    assert [g.shape for g in got] == [(0, 3), (0, 3)]


@pytest.mark.parametrize(
    "lazy",
    [
        lambda x: [x.mean(0), x.std(0), la.argmax(x, axis=0)],
        lambda x: [x + 1, la.sin(x) * 2, x > 0.5],
    ],
    ids=["reduce", "map"],
)
def test_a_joint_kernel_does_not_depend_on_the_order_siblings_come_in(lazy):
    """Plans order siblings by node name, which differs between processes for arrays."""
    from lazyarr import api
    from lazyarr.kernels import numba_fused

    x = la.asarray(DATA, chunks=(10, 23))
    plan = api.make_plan([e._expr for e in lazy(x)], "numba", api.passes_for(None, None))
    (names,) = plan.siblings
    stages = [plan.stages[n] for n in names]
    kernels = nx.NumbaKernels(nx.options_from_config())
    numba_fused._EMITTED.clear()
    one = kernels.joint(stages)
    first = [k.source for k in numba_fused._EMITTED.values()]
    numba_fused._EMITTED.clear()
    two = kernels.joint(stages[::-1])
    assert [k.source for k in numba_fused._EMITTED.values()] == first
    assert one[3] == two[3]  # the same order of results, whatever order they came in


@pytest.mark.parametrize("executor", ["numba", "numpy"])
def test_a_stored_input_the_siblings_share_is_read_once_in_their_joint_tasks(executor):
    """``(u*u).mean(0)`` and ``(u*v).mean(0)`` read each block of ``u`` in the same joint
    task: the block is made there (no source task, no stored block) and read once; the
    numpy executor (no joint tasks) reads it once per sibling."""
    from test_io_read import Recording

    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((40, 6)), rng.standard_normal((40, 6))
    ru, rv = Recording(a, chunks=(10, 6)), Recording(b, chunks=(10, 6))
    u, v = la.from_array(ru, chunks=(10, 6)), la.from_array(rv, chunks=(10, 6))
    with la.config.set({"numba.compile-threshold": 0}):
        m1, m2 = la.compute((u * u).mean(0), (u * v).mean(0), executor=executor)
    np.testing.assert_allclose(m1, (a * a).mean(0))
    np.testing.assert_allclose(m2, (a * b).mean(0))
    kinds = la.last_run().stats.extra["task_kinds"]
    assert ru.elements_read() == a.size and rv.elements_read() == b.size
    if executor == "numba":
        assert kinds["JOINT"] == 4 and "SOURCE" not in kinds
    else:
        assert kinds["SOURCE"] == 4 and "JOINT" not in kinds  # u, read by both siblings
