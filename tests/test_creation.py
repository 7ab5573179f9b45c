"""Creation functions and random arrays against NumPy.

``asarray``'s copy semantics are checked by mutating the source after
wrapping it; ranges (``arange``, ``linspace``) must match NumPy's length,
dtype and values, also under hypothesis; random arrays must give the same
values for the same seed whatever the chunking and the executor.
"""

# Lambdas built in loops are called at once (check/assert_same_error), never later.
# ruff: noqa: B023

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import lazyarr as la
from lazyarr.testing import assert_eq, assert_same_error, executors_under_test

# -- asarray ----------------------------------------------------------------------------


def test_asarray_copy_false_never_copies():
    src = np.arange(6.0)
    x = la.asarray(src, copy=False)
    src[0] = 100.0
    assert_eq(x, src)
    assert x.compute()[0] == 100.0


def test_asarray_default_does_not_copy_numpy_input():
    src = np.arange(6.0).reshape(2, 3)
    x = la.asarray(src, chunks=(1, 2))
    src[1, 2] = -1.0
    assert x.compute()[1, 2] == -1.0


def test_asarray_copy_true_copies():
    src = np.arange(6.0)
    x = la.asarray(src, copy=True)
    src[0] = 100.0
    assert_eq(x, np.arange(6.0))


def test_mutated_sources_are_not_confused_with_equal_arrays():
    # two buffers with equal contents: the plan of one must never serve the other
    a = np.zeros(4)
    b = np.zeros(4)
    x = la.asarray(a)
    assert float(x.sum()) == 0.0
    y = la.asarray(b)
    b[:] = 1.0
    assert float(y.sum()) == 4.0
    c = np.zeros(4)
    z = la.asarray(c, copy=True)
    c[:] = 5.0
    assert float(z.sum()) == 0.0


def test_asarray_copy_false_refuses_when_a_copy_is_needed():
    assert_same_error(
        lambda: np.asarray([1, 2], copy=False), lambda: la.asarray([1, 2], copy=False)
    )
    a = np.arange(3)
    assert_same_error(
        lambda: np.asarray(a, dtype=np.float32, copy=False),
        lambda: la.asarray(a, dtype=np.float32, copy=False),
    )


@pytest.mark.parametrize(
    "obj",
    [
        3,
        3.5,
        True,
        1 + 2j,
        np.float32(2.5),
        [1, 2, 3],
        [[1.0, 2.0], [3.0, 4.0]],
        [[[1], [2]], [[3], [4]]],
        [],
        [[True, False]],
        (1, 2.5),
        np.arange(12).reshape(3, 4),
        np.array(7),
    ],
)
def test_asarray_values(obj):
    assert_eq(la.asarray(obj), np.asarray(obj))
    assert_eq(la.array(obj), np.array(obj))
    for dtype in ("int8", "float32", "complex128"):
        try:
            want = np.asarray(obj, dtype=dtype)
        except TypeError:  # complex to int: NumPy refuses too
            with pytest.raises(TypeError):
                la.asarray(obj, dtype=dtype)
            continue
        assert_eq(la.asarray(obj, dtype=dtype), want)


def test_asarray_chunks_and_lazy_inputs():
    a = np.arange(35).reshape(5, 7)
    x = la.asarray(a, chunks=(2, 3))
    assert x.chunks == ((2, 2, 1), (3, 3, 1))
    assert la.asarray(a, chunks=((1, 4), (7,))).chunks == ((1, 4), (7,))
    assert la.asarray(x) is x
    assert la.asarray(x, copy=False) is x
    y = la.asarray(x, copy=True)
    assert y is not x
    assert_eq(y, a)
    assert_eq(la.asarray(x, dtype=np.float32), a.astype(np.float32))
    assert la.asarray(x, chunks=(5, 1)).chunks == ((5,), (1,) * 7)
    with pytest.raises(TypeError):
        la.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        la.asarray([object()])
    with pytest.raises(ValueError):
        la.asarray(a, chunks=((1, 1), (7,)))


def test_from_dlpack_and_from_array():
    a = np.arange(10.0)
    assert_eq(la.from_dlpack(a), a)
    x = la.from_dlpack(a)
    a[0] = 42.0  # no copy by default
    assert x.compute()[0] == 42.0
    b = np.arange(4.0)
    y = la.from_dlpack(b, copy=True)
    b[0] = 42.0
    assert_eq(y, np.arange(4.0))
    assert_eq(la.from_array(np.ones((3, 2)), chunks=1), np.ones((3, 2)))
    assert_eq(la.from_dlpack(la.asarray(np.arange(3))), np.arange(3))


@pytest.mark.parametrize("kind", ["pydata COO", "scipy CSR"])
def test_a_sparse_array_is_read_densified_block_by_block(kind):
    """``from_array`` of a sparse array (pydata's ``sparse``, SciPy's): each block is its
    region densified as it is read (``np.asarray`` refuses a sparse array), so reductions
    equal NumPy's over the dense values. Before: ``RuntimeError: Cannot convert a sparse
    array to dense automatically`` (100 of flox's Dask-parametrized sparse tests)."""
    a = np.random.default_rng(0).random((12, 9))
    a[a < 0.5] = 0.0
    if kind == "pydata COO":
        sparse = pytest.importorskip("sparse")
        s = sparse.COO.from_numpy(a)
    else:
        s = pytest.importorskip("scipy.sparse").csr_matrix(a)
    x = la.from_array(s, chunks=(5, 4))
    assert x.chunks == ((5, 5, 2), (4, 4, 1))
    with la.config.set({"numba.compile-threshold": 0}):  # on every executor
        assert_eq(x, a)
        assert_eq(x.sum(axis=1), a.sum(axis=1))
        assert_eq(la.nanmax(x[3:, 2:], axis=0), a[3:, 2:].max(axis=0))


# -- constants --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), 0, 3, (2, 0), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("dtype", [None, "bool", "int8", "uint32", "float32", "complex64"])
def test_zeros_ones_empty_full(shape, dtype):
    assert_eq(la.zeros(shape, dtype=dtype, chunks=2), np.zeros(shape, dtype=dtype))
    assert_eq(la.ones(shape, dtype=dtype, chunks=2), np.ones(shape, dtype=dtype))
    e = la.empty(shape, dtype=dtype)
    want = np.empty(shape, dtype=dtype)
    assert (e.shape, e.dtype) == (want.shape, want.dtype)
    for value in (7, 2.5, True, -1):
        check_full(shape, value, dtype)


def check_full(shape, value, dtype):
    try:
        want = np.full(shape, value, dtype=dtype)
    except Exception:
        assert_same_error(
            lambda: np.full(shape, value, dtype=dtype), lambda: la.full(shape, value, dtype=dtype)
        )
        return
    assert_eq(la.full(shape, value, dtype=dtype, chunks=2), want)


@pytest.mark.parametrize("value", [3, -2.5, True, 1j, np.float32(1.5), np.int8(-3), 2**63, np.nan])
def test_full_infers_numpy_dtype(value):
    assert_eq(la.full((2, 3), value), np.full((2, 3), value))


def test_creation_errors():
    assert_same_error(lambda: np.zeros(-1), lambda: la.zeros(-1))
    assert_same_error(lambda: np.ones((2, -3)), lambda: la.ones((2, -3)))
    assert_same_error(lambda: np.zeros(2.5), lambda: la.zeros(2.5))
    assert_same_error(
        lambda: np.full(3, 300, dtype=np.uint8), lambda: la.full(3, 300, dtype=np.uint8)
    )
    assert_same_error(lambda: np.eye(-2), lambda: la.eye(-2))
    assert_same_error(lambda: np.linspace(0, 1, -1), lambda: la.linspace(0, 1, -1))
    assert_same_error(lambda: np.linspace(0, 1, 2.5), lambda: la.linspace(0, 1, 2.5))
    with pytest.raises(TypeError):
        la.full(3, "x")


@pytest.mark.parametrize("func", ["zeros_like", "ones_like", "empty_like"])
def test_like_functions(func):
    a = np.arange(12, dtype=np.int16).reshape(3, 4)
    x = la.asarray(a, chunks=(2, 3))
    out = getattr(la, func)(x)
    want = getattr(np, func)(a)
    assert (out.shape, out.dtype, out.chunks) == (want.shape, want.dtype, x.chunks)
    if func != "empty_like":
        assert_eq(out, want)
        assert_eq(getattr(la, func)(x, dtype=np.float32), getattr(np, func)(a, dtype=np.float32))
        assert_eq(getattr(la, func)(a), want)  # NumPy input
        assert_eq(getattr(np, func)(x), want)  # dispatch from NumPy
    assert getattr(la, func)(x, chunks=1).chunks == ((1, 1, 1), (1, 1, 1, 1))


def test_full_like():
    a = np.arange(6).reshape(2, 3)
    x = la.asarray(a, chunks=2)
    assert_eq(la.full_like(x, 2.7), np.full_like(a, 2.7))  # cast to int, like NumPy
    assert_eq(la.full_like(x, 2.7, dtype=np.float64), np.full_like(a, 2.7, dtype=np.float64))
    assert_eq(np.full_like(x, -1), np.full_like(a, -1))
    assert_same_error(
        lambda: np.full_like(a.astype(np.uint8), 300),
        lambda: la.full_like(x.astype(np.uint8), 300),
    )


# -- ranges -------------------------------------------------------------------------------

ARANGE_CASES = [
    (10,),
    (2, 10),
    (10, 2, -1),
    (0,),
    (5, 1),
    (0.5, 3.2, 0.3),
    (1, 2, 0.1),
    (-3, 3, 0.7),
    (10, 0, -3),
    (3.0,),
    (0, 1, 1 / 3),
    (True,),
    (np.int32(5),),
    (np.float32(0.1), np.float32(1.0), np.float32(0.1)),
    (0, 10**19, 10**18),
    (-(2**63), -(2**63) + 3),
]


@pytest.mark.parametrize("args", ARANGE_CASES)
def test_arange(args):
    assert_eq(la.arange(*args, chunks=3), np.arange(*args))


@pytest.mark.parametrize(
    ("args", "dtype"),
    [
        ((10,), np.float32),
        ((250, 256), np.uint8),
        ((0, 300), np.uint8),  # wraps, like NumPy
        ((5, 0, -1), np.uint8),
        ((0.5, 3.2, 0.3), np.int64),  # NumPy: first two values cast, then repeated
        ((0.1, 1.0, 0.1), np.float32),
        ((0, 2), bool),
        ((0, 3, 1), complex),
        ((0, 10, 3), np.int8),
        ((-2.5, 4), np.int16),
    ],
)
def test_arange_with_dtype(args, dtype):
    assert_eq(la.arange(*args, dtype=dtype, chunks=2), np.arange(*args, dtype=dtype))


def test_arange_errors():
    for args, kw in [
        ((0, 10, 0), {}),
        ((0, np.nan), {}),
        ((0, np.inf), {}),
        ((0, 3), {"dtype": bool}),
    ]:
        assert_same_error(lambda: np.arange(*args, **kw), lambda: la.arange(*args, **kw))


@given(
    st.one_of(st.integers(-50, 50), st.floats(-50, 50, allow_subnormal=False)),
    st.one_of(st.none(), st.integers(-50, 50), st.floats(-50, 50, allow_subnormal=False)),
    st.one_of(
        st.integers(-7, 7).filter(bool),
        st.floats(-7, 7, allow_subnormal=False).filter(lambda v: abs(v) > 1e-3),
    ),
    st.sampled_from([None, np.int64, np.float32, np.float64, np.int8]),
    st.integers(1, 9),
)
def test_arange_length_dtype_and_values_like_numpy(start, stop, step, dtype, chunk):
    args = (start,) if stop is None else (start, stop, step)
    try:
        want = np.arange(*args, dtype=dtype)
    except Exception:
        assert_same_error(
            lambda: np.arange(*args, dtype=dtype), lambda: la.arange(*args, dtype=dtype)
        )
        return
    assume(want.size < 5000)
    got = la.arange(*args, dtype=dtype, chunks=chunk)
    assert (got.shape, got.dtype) == (want.shape, want.dtype)
    with np.errstate(all="ignore"):
        assert_eq(got, want, executors=["numpy"])


@pytest.mark.parametrize(
    "kw",
    [
        {"num": 5},
        {"num": 0},
        {"num": 1},
        {"num": 1, "endpoint": False},
        {"num": 7, "endpoint": False},
        {"num": 50},
        {"num": 9, "dtype": np.int64},
        {"num": 9, "dtype": np.float32},
        {"num": 9, "dtype": np.complex64},
    ],
)
@pytest.mark.parametrize(
    "bounds",
    [
        (2, 3),
        (5, -3),
        (0, 0),
        (-1.5, 10.25),
        (0, 1 + 1j),
        (np.float32(0), np.float32(1)),
        (1e-310, 2e-310),
    ],
)
def test_linspace(bounds, kw):
    start, stop = bounds
    if isinstance(stop, complex) and kw.get("dtype") in (np.int64, np.float32):
        return  # NumPy itself fails (or warns) casting complex to real
    assert_eq(la.linspace(start, stop, chunks=3, **kw), np.linspace(start, stop, **kw))


@given(
    st.floats(-1e3, 1e3, allow_subnormal=False),
    st.floats(-1e3, 1e3, allow_subnormal=False),
    st.integers(0, 60),
    st.booleans(),
    st.integers(1, 10),
)
def test_linspace_hypothesis(start, stop, num, endpoint, chunk):
    assert_eq(
        la.linspace(start, stop, num, endpoint=endpoint, chunks=chunk),
        np.linspace(start, stop, num, endpoint=endpoint),
        executors=["numpy"],
    )


@pytest.mark.parametrize(
    ("args", "kw"),
    [
        ((3,), {}),
        ((3, 5), {}),
        ((5, 3), {"k": 1}),
        ((4,), {"k": -2}),
        ((4,), {"k": 10}),
        ((4, 6), {"k": -10}),
        ((0,), {}),
        ((1,), {}),
        ((3,), {"dtype": int}),
        ((3,), {"dtype": bool}),
        ((3, 4), {"k": 2, "dtype": np.complex64}),
    ],
)
def test_eye(args, kw):
    assert_eq(la.eye(*args, chunks=2, **kw), np.eye(*args, **kw))


def test_identity():
    for n, dtype in ((0, None), (1, None), (4, bool), (5, np.int8)):
        assert_eq(la.identity(n, dtype=dtype, chunks=3), np.identity(n, dtype=dtype))
    assert_eq(np.identity(3), la.identity(3).compute())


# -- random -------------------------------------------------------------------------------


def test_same_seed_same_values_under_any_chunking_and_executor():
    shape = (300, 170)
    ref = la.random.random(shape, seed=3).compute()
    for chunks in ((10, 7), (300, 170), (1, 170), ((100, 200), (17,) * 10), (299, 1)):
        for name in executors_under_test():
            got = la.random.random(shape, chunks=chunks, seed=3).compute(executor=name)
            np.testing.assert_array_equal(got, ref)
    n1 = la.random.standard_normal((50, 40), chunks=(7, 9), seed=11).compute()
    n2 = la.random.standard_normal((50, 40), chunks=(50, 1), seed=11).compute()
    np.testing.assert_array_equal(n1, n2)
    i1 = la.random.integers(0, 100, (64, 3), chunks=5, seed=1).compute()
    i2 = la.random.integers(0, 100, (64, 3), chunks=64, seed=1).compute()
    np.testing.assert_array_equal(i1, i2)
    # a big array (drawn in pieces when whole): still chunking-independent
    big = (1200, 300)
    b1 = la.random.uniform(size=big, chunks=(1200, 300), seed=5).compute()
    b2 = la.random.uniform(size=big, chunks=(77, 41), seed=5).compute()
    np.testing.assert_array_equal(b1, b2)


def test_different_seeds_differ():
    a = la.random.random(1000, seed=1).compute()
    b = la.random.random(1000, seed=2).compute()
    assert not np.array_equal(a, b)
    c = la.random.random(1000).compute()  # seed=None: fresh each time
    d = la.random.random(1000).compute()
    assert not np.array_equal(c, d)
    g = la.random.default_rng(5)
    g1, g2 = g.random(100).compute(), g.random(100).compute()
    assert not np.array_equal(g1, g2)
    h = la.random.default_rng(5)
    np.testing.assert_array_equal(h.random(100).compute(), g1)


def test_distributions_are_roughly_right():
    n = 100_000
    u = la.random.random(n, chunks=30_000, seed=1).compute()
    assert u.dtype == np.float64 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.std() - (1 / 12) ** 0.5) < 0.01
    z = la.random.standard_normal(n, seed=2).compute()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    g = la.random.normal(2.0, 3.0, n, seed=3).compute()
    assert abs(g.mean() - 2) < 0.05 and abs(g.std() - 3) < 0.05
    v = la.random.uniform(-2.0, 6.0, n, seed=4).compute()
    assert v.min() >= -2 and v.max() < 6 and abs(v.mean() - 2) < 0.05
    i = la.random.integers(3, 7, n, seed=5).compute()
    assert i.dtype == np.int64 and set(np.unique(i)) == {3, 4, 5, 6}
    assert abs(i.mean() - 4.5) < 0.02
    j = la.random.integers(3, 7, n, endpoint=True, dtype=np.uint8, seed=6).compute()
    assert j.dtype == np.uint8 and set(np.unique(j)) == {3, 4, 5, 6, 7}
    k = la.random.integers(5, size=1000, seed=7).compute()  # one bound: [0, 5)
    assert set(np.unique(k)) == {0, 1, 2, 3, 4}


def test_random_dtypes_and_shapes():
    for f in (la.random.random, la.random.standard_normal):
        x = f((30, 4), dtype=np.float32, seed=1)
        assert x.dtype == np.float32
        assert x.compute().dtype == np.float32
    assert la.random.uniform(0, 1, 5, dtype="float32", seed=1).compute().dtype == np.float32
    assert la.random.random(seed=1).shape == ()
    assert la.random.random(seed=1).compute().shape == ()
    assert la.random.random(0, seed=1).compute().shape == (0,)
    assert la.random.integers(0, 5, (0, 3), seed=1).compute().shape == (0, 3)
    with pytest.raises(TypeError):
        la.random.random(3, dtype=np.int64)
    with pytest.raises(TypeError):
        la.random.random(3, seed=1.5)
    with pytest.raises(ValueError):
        la.random.random(3, seed=-1)
    with pytest.raises(ValueError):
        la.random.random(-1)
    with pytest.raises(ValueError):
        la.random.normal(0, -1, 3)


def test_integers_bounds_and_dtype_errors():
    rng = np.random.default_rng(0)
    cases = [
        ((0, 300), {"dtype": np.uint8}),
        ((-1, 5), {"dtype": np.uint8}),
        ((5, 5), {}),
        ((5, 4), {}),
        ((5, 5), {"endpoint": False}),
        ((0, 5), {"dtype": np.float64}),
        ((0, 3), {"dtype": bool}),
        ((0, 2**63 + 1), {}),
    ]
    for args, kw in cases:
        assert_same_error(
            lambda: rng.integers(*args, **kw), lambda: la.random.integers(*args, **kw)
        )
    # allowed edge cases
    assert la.random.integers(5, 5, endpoint=True, size=3, seed=1).compute().tolist() == [5, 5, 5]
    assert la.random.integers(0, 256, 10, dtype=np.uint8, seed=1).dtype == np.uint8
    assert la.random.integers(5, 5, size=0, seed=1).shape == (0,)  # nothing drawn: no error
    b = la.random.integers(0, 2, 50, dtype=bool, seed=3).compute()
    assert b.dtype == bool and b.any() and not b.all()


@pytest.mark.parametrize("make", [la.asarray, la.array, la.from_array])
def test_a_masked_array_is_refused_not_unmasked(make):
    m = np.ma.array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 1])
    with pytest.raises(TypeError, match=r"filled\("):
        make(m)
    assert float(la.asarray(m.filled(0.0)).sum()) == float(m.sum()) == 4.0


@pytest.mark.parametrize(
    "make", [lambda s: s.ones, lambda s: s.zeros, lambda s: s.empty, lambda s: s.full]
)
@pytest.mark.parametrize("shape", [(2**62,), (2**31, 2**31)])
def test_an_array_too_big_to_exist_raises_like_numpy(make, shape):
    args = (shape, 1.0) if make(np) is np.full else (shape,)
    with pytest.raises(ValueError) as want:
        make(np)(*args)
    with pytest.raises(ValueError) as got:
        make(la)(*args)  # at expression time: nothing is allocated either way
    assert str(got.value) == str(want.value)
    assert la.ones((2**40,)).shape == (2**40,)  # big but possible: lazy, fine


# -- shapes: NumPy's TypeError for floats, raised when written -------------------------------


def _lazy_rng() -> la.random.Generator:
    return la.random.default_rng(0)


FLOAT_SHAPES = [
    ("random.random", lambda: la.random.random((10.5, 3)), lambda: np.random.random((10.5, 3))),
    ("zeros", lambda: la.zeros(2.0), lambda: np.zeros(2.0)),
    ("ones", lambda: la.ones((3, 2.5)), lambda: np.ones((3, 2.5))),
    ("full", lambda: la.full((2.0, 2), 7), lambda: np.full((2.0, 2), 7)),
    ("empty", lambda: la.empty(np.float64(3)), lambda: np.empty(np.float64(3))),
    ("eye", lambda: la.eye(2.0), lambda: np.eye(2.0)),
    ("zeros", lambda: la.zeros((True, 2)), lambda: np.zeros((True, 2))),
    ("zeros", lambda: la.zeros(False), lambda: np.zeros(False)),
    (
        "random.standard_normal",
        lambda: _lazy_rng().standard_normal(2.5),
        lambda: np.random.default_rng(0).standard_normal(2.5),
    ),
    (
        "random.integers",
        lambda: _lazy_rng().integers(0, 5, size=(2, 1.5)),
        lambda: np.random.default_rng(0).integers(0, 5, size=(2, 1.5)),
    ),
]


@pytest.mark.parametrize(("op", "lazy_call", "numpy_call"), FLOAT_SHAPES)
def test_float_shapes_raise_numpys_type_error_when_written(op, lazy_call, numpy_call):
    assert assert_same_error(numpy_call, lazy_call) is TypeError
    with pytest.raises(TypeError) as want:
        numpy_call()
    with pytest.raises(TypeError) as got:
        lazy_call()
    assert str(got.value) == f"{op}: {want.value}"


@pytest.mark.parametrize(
    "shape", [3, np.int64(3), (2, np.int32(3)), [2, 3], np.array([2, 3]), np.array(4), ()]
)
def test_integer_shapes_of_every_kind_give_numpys_shape(shape):
    want = np.zeros(shape).shape
    assert la.zeros(shape).shape == want
    assert la.random.random(shape, seed=0).shape == want
    assert la.random.default_rng(0).integers(0, 5, size=shape).shape == want


def test_negative_dimensions_raise_numpys_value_error():
    assert assert_same_error(lambda: np.ones((2, -1)), lambda: la.ones((2, -1))) is ValueError
    assert (
        assert_same_error(lambda: np.random.random(-1), lambda: la.random.random(-1)) is ValueError
    )
