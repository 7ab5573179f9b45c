"""Data types, type functions, the inspection namespace, and array_api_strict as a second oracle.

NumPy is the main oracle everywhere else; here results are also compared
with ``array_api_strict`` (the standard's reference), on inputs the standard
allows. Where the standard and NumPy disagree, lazyarr follows NumPy (the
project's rule) and the test says so.
"""

from __future__ import annotations

import array_api_strict as xp
import numpy as np
import pytest

import lazyarr as la
from lazyarr.testing import assert_eq

# sqrt/pow of negative numbers give NaN in both oracles, with a warning
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

DTYPE_NAMES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
KINDS = [
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
]


def test_dtype_objects_and_constants():
    for name in DTYPE_NAMES:
        assert getattr(la, name) == np.dtype(name)
    assert la.e == np.e and la.pi == np.pi and la.inf == np.inf and np.isnan(la.nan)
    assert la.newaxis is None


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_isdtype_matches_numpy_and_the_standard(name):
    dt = getattr(la, name)
    for kind in KINDS:
        want = np.isdtype(dt, kind)
        assert la.isdtype(dt, kind) == want, (name, kind)
        assert xp.isdtype(getattr(xp, name), kind) == want
    assert la.isdtype(dt, ("bool", "complex floating")) == np.isdtype(
        dt, ("bool", "complex floating")
    )
    assert la.isdtype(dt, dt)
    assert la.isdtype(dt, la.float64) == (name == "float64")
    assert la.isdtype(dt, (la.int8, "real floating")) == (name in ("int8", "float32", "float64"))


def test_isdtype_unknown_kind():
    with pytest.raises(ValueError):
        la.isdtype(la.float32, "foo")


def test_result_type():
    for a in DTYPE_NAMES:
        for b in DTYPE_NAMES:
            assert la.result_type(getattr(la, a), getattr(la, b)) == np.result_type(a, b)
    x = la.asarray(np.ones(3, dtype=np.int8))
    assert la.result_type(x, la.int16) == np.int16
    assert la.result_type(x, 1) == np.int8  # Python scalars are weak
    assert la.result_type(la.float32, 1.0) == np.float32
    assert la.result_type(la.float32, 1j) == np.complex64
    assert la.result_type(la.int8, 1.0) == np.float64
    assert la.result_type(la.uint8, True) == np.uint8
    assert la.result_type(x, la.asarray(np.ones(2, np.float32))) == np.float32
    assert la.result_type(np.ones(2, dtype=np.uint16), la.int8) == np.int32
    assert xp.result_type(xp.int8, 1) == xp.int8  # the standard agrees
    with pytest.raises(ValueError):
        la.result_type()
    with pytest.raises(TypeError):
        la.result_type(la.bool, la.asarray(np.ones(2)).dtype, "not a dtype")


def test_can_cast():
    for a in DTYPE_NAMES:
        for b in DTYPE_NAMES:
            want = np.can_cast(np.dtype(a), np.dtype(b))
            assert la.can_cast(getattr(la, a), getattr(la, b)) == want, (a, b)
            if np.dtype(a).kind == np.dtype(b).kind:  # the standard refuses cross-kind casts
                assert xp.can_cast(getattr(xp, a), getattr(xp, b)) == want
    assert la.can_cast(la.asarray(np.ones(2, np.int8)), la.int16)
    assert not la.can_cast(la.asarray(np.ones(2)), la.float32)


def test_finfo_iinfo():
    for name in ("float32", "float64", "complex64", "complex128"):
        got, want = la.finfo(getattr(la, name)), np.finfo(name)
        for field in ("bits", "eps", "max", "min", "smallest_normal", "dtype"):
            assert getattr(got, field) == getattr(want, field)
        assert la.finfo(la.asarray(np.ones(1, name))).eps == want.eps
    for name in DTYPE_NAMES[1:9]:
        got, want = la.iinfo(getattr(la, name)), np.iinfo(name)
        assert (got.bits, got.min, got.max, got.dtype) == (
            want.bits,
            want.min,
            want.max,
            want.dtype,
        )
        info = xp.iinfo(getattr(xp, name))
        assert (got.min, got.max) == (info.min, info.max)
    assert la.iinfo(la.asarray(np.ones(1, np.uint8))).max == 255
    with pytest.raises(ValueError):
        la.iinfo(la.float32)
    with pytest.raises(ValueError):
        la.finfo(la.int32)


def test_array_namespace_info():
    info = la.__array_namespace_info__()
    ref = xp.__array_namespace_info__()
    assert info.capabilities() == ref.capabilities()
    assert set(info.capabilities()) >= {
        "boolean indexing",
        "data-dependent shapes",
        "max dimensions",
    }
    assert info.default_device() == "cpu" and info.devices() == ["cpu"]
    defaults = info.default_dtypes()
    assert set(defaults) == {"real floating", "complex floating", "integral", "indexing"}
    assert {k: str(v) for k, v in defaults.items()} == {
        k: str(v).removeprefix("array_api_strict.") for k, v in ref.default_dtypes().items()
    }
    assert set(info.dtypes()) == set(DTYPE_NAMES)
    for kind in KINDS:
        assert set(info.dtypes(kind=kind)) == set(ref.dtypes(kind=kind)), kind
        assert all(la.isdtype(d, kind) for d in info.dtypes(kind=kind).values())
    assert set(info.dtypes(kind=("bool", "complex floating"))) == {
        "bool",
        "complex64",
        "complex128",
    }
    assert info.dtypes()["float32"] == np.float32


def test_array_namespace():
    x = la.asarray(np.ones(3))
    assert x.__array_namespace__() is la
    assert x.__array_namespace__(api_version="2024.12") is la
    assert x.__array_namespace__(api_version="2023.12") is la
    with pytest.raises(ValueError):
        x.__array_namespace__(api_version="1999.01")
    assert la.__array_api_version__ == "2024.12"


# -- array_api_strict as a second oracle ------------------------------------------------


def _strict(a: np.ndarray):
    return xp.asarray(a)


def _np(result) -> np.ndarray:
    return np.asarray(np.from_dlpack(result))


def _data(dtype: str, shape=(4, 5), seed=0, positive=False) -> np.ndarray:
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        lo = 1 if positive else (0 if dt.kind == "u" else -9)
        return rng.integers(lo, 10, shape).astype(dt)
    a = rng.uniform(0.1 if positive else -5, 5, shape).astype(dt)
    if dt.kind == "c":
        a = a + 1j * rng.uniform(-2, 2, shape).astype(dt)
    return a


UNARY = {
    "abs": ["int8", "float32", "float64", "complex128"],
    "sqrt": ["float32", "float64", "complex128"],
    "exp": ["float64", "complex64"],
    "log": ["float64"],
    "sin": ["float32", "complex128"],
    "tanh": ["float64"],
    "ceil": ["int16", "float64"],
    "floor": ["uint8", "float32"],
    "trunc": ["int64", "float64"],
    "round": ["int32", "float64", "complex128"],
    "sign": ["int8", "float64", "complex128"],
    "negative": ["int8", "float32"],
    "isnan": ["float64", "int8", "complex64"],
    "isfinite": ["float32", "int64"],
    "logical_not": ["bool"],
    "bitwise_invert": ["int8", "uint16", "bool"],
    "square": ["int16", "float64"],
    "expm1": ["float64"],
    "log1p": ["float32"],
    "signbit": ["float64"],
    "conj": ["complex128"],
    "real": ["complex64"],
    "imag": ["complex128"],
}
BINARY = {
    "add": ["int8", "uint8", "float32", "complex128"],
    "subtract": ["int64", "float64"],
    "multiply": ["int16", "complex64"],
    "divide": ["float32", "float64", "complex128"],
    "floor_divide": ["int8", "int64", "float64"],
    "remainder": ["int8", "int32", "float64"],
    "pow": ["float64", "complex128"],
    "atan2": ["float32", "float64"],
    "hypot": ["float64"],
    "maximum": ["int8", "float64"],
    "minimum": ["uint16", "float32"],
    "copysign": ["float64"],
    "logaddexp": ["float64"],
    "nextafter": ["float32", "float64"],
    "equal": ["int8", "float64", "complex128", "bool"],
    "less": ["uint8", "float32"],
    "greater_equal": ["int64", "float64"],
    "logical_and": ["bool"],
    "logical_xor": ["bool"],
    "bitwise_and": ["int8", "uint32", "bool"],
    "bitwise_xor": ["int16", "bool"],
    "bitwise_left_shift": ["int32", "uint8"],
    "bitwise_right_shift": ["int8", "uint16"],
}


def _compare(lazy, strict_result):
    want = _np(strict_result)
    assert lazy.dtype == want.dtype
    assert_eq(lazy, want, executors=["numpy"])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_agree_with_array_api_strict(name):
    for dtype in UNARY[name]:
        a = _data(dtype, positive=name in ("log", "log1p"))
        _compare(getattr(la, name)(la.asarray(a, chunks=(3, 2))), getattr(xp, name)(_strict(a)))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_functions_agree_with_array_api_strict(name):
    for dtype in BINARY[name]:
        a = _data(dtype, seed=1)
        b = _data(dtype, (5,), seed=2, positive=True)
        if "shift" in name:
            b = b % 4
        x, y = la.asarray(a, chunks=(3, 2)), la.asarray(b, chunks=2)
        _compare(getattr(la, name)(x, y), getattr(xp, name)(_strict(a), _strict(b)))
        _compare(getattr(la, name)(x, b[0].item()), getattr(xp, name)(_strict(a), b[0].item()))


def test_other_elementwise_functions_agree_with_array_api_strict():
    a = _data("float64", seed=3)
    c = _data("bool", seed=4)
    x, cond = la.asarray(a, chunks=2), la.asarray(c, chunks=2)
    _compare(la.where(cond, x, 0.0), xp.where(_strict(c), _strict(a), 0.0))
    _compare(la.clip(x, -1.0, 2.0), xp.clip(_strict(a), -1.0, 2.0))
    _compare(la.clip(x, max=0.5), xp.clip(_strict(a), max=0.5))
    _compare(la.astype(x, la.int16), xp.astype(_strict(a), xp.int16))
    i = _data("int32", seed=5)
    _compare(la.clip(la.asarray(i), 2, 5), xp.clip(_strict(i), 2, 5))


REDUCTIONS = {
    "sum": ["int8", "uint8", "int32", "float32", "float64", "complex64"],
    "prod": ["int16", "uint16", "float64", "complex128"],
    "mean": ["float32", "float64", "complex128"],
    "var": ["float32", "float64"],
    "std": ["float64"],
    "min": ["int8", "float64"],
    "max": ["uint8", "float32"],
    "argmin": ["int64", "float64"],
    "argmax": ["int8", "float32"],
    "any": ["bool", "int8", "float64"],
    "all": ["bool", "float32"],
    "count_nonzero": ["bool", "int16", "float64"],
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_agree_with_array_api_strict(name):
    for dtype in REDUCTIONS[name]:
        a = _data(dtype, (4, 5, 3), seed=6)
        x = la.asarray(a, chunks=(3, 2, 2))
        axes = [None, 0, -1] + ([] if name.startswith("arg") else [(0, 2)])
        for axis in axes:
            for keepdims in (False, True):
                _compare(
                    getattr(la, name)(x, axis=axis, keepdims=keepdims),
                    getattr(xp, name)(_strict(a), axis=axis, keepdims=keepdims),
                )
        if name in ("var", "std"):
            _compare(
                getattr(la, name)(x, axis=1, correction=1),
                getattr(xp, name)(_strict(a), axis=1, correction=1),
            )
        if name in ("sum", "prod") and dtype in ("int8", "int16"):
            _compare(
                getattr(la, name)(x, dtype=la.int32), getattr(xp, name)(_strict(a), dtype=xp.int32)
            )


def test_where_numpy_and_the_standard_differ_lazyarr_follows_numpy():
    i = np.arange(6, dtype=np.int32)
    x = la.asarray(i)
    # the standard refuses a mean of integers; NumPy (and lazyarr) give float64
    with pytest.raises(TypeError):
        xp.mean(_strict(i))
    assert_eq(la.mean(x), np.mean(i))
    # the standard refuses mixed kinds; NumPy promotes
    with pytest.raises(TypeError):
        xp.add(_strict(i), xp.asarray(np.ones(6)))
    assert_eq(x + la.asarray(np.ones(6)), i + np.ones(6))
    # and bool arithmetic
    b = np.array([True, False])
    with pytest.raises(TypeError):
        xp.add(_strict(b), _strict(b))
    assert_eq(la.asarray(b) + la.asarray(b), b + b)


@pytest.mark.parametrize("name", ["float32", "float64", "complex64", "complex128"])
def test_finfo_has_the_standards_attribute_types(name):
    """The Array API: bits is an int, eps/max/min/smallest_normal Python floats, and dtype
    the real floating dtype (float32 for complex64)."""
    got, want = la.finfo(getattr(la, name)), np.finfo(name)
    assert type(got.bits) is int and got.bits == want.bits
    for attr in ("eps", "max", "min", "smallest_normal"):
        assert type(getattr(got, attr)) is float
        assert getattr(got, attr) == float(getattr(want, attr))
    assert got.dtype == want.dtype and got.dtype.kind == "f"


def test_meshgrid_and_broadcast_arrays_return_lists_and_dlpack_takes_stream():
    x, y = la.arange(3), la.arange(2.0)
    grids = la.meshgrid(x, y)
    assert isinstance(grids, list) and isinstance(la.broadcast_arrays(x, y[:, None]), list)
    for g, w in zip(grids, np.meshgrid(np.arange(3), np.arange(2.0))):
        np.testing.assert_array_equal(g.compute(), w)
    np.testing.assert_array_equal(np.from_dlpack(la.arange(4) * 2), np.arange(4) * 2)
    capsule_holder = la.arange(3)
    assert capsule_holder.__dlpack__(stream=None) is not None
    with pytest.raises(BufferError):
        capsule_holder.__dlpack__(stream=1)
