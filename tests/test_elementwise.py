"""Elementwise functions and operators against NumPy.

Every name in ``lazyarr.namespace.elementwise.__all__`` is checked on
several dtypes and on 0-d, empty, size-1, broadcast and unevenly chunked
operands, with NaN and infinities; where NumPy refuses a dtype combination
lazyarr must raise the same exception type while the expression is written.
Then the details: integer division signs, overflow wrap-around, bool
arithmetic errors, NEP 50 weak scalars, operators (reflected and in-place),
and the NumPy protocols (``np.sin(lazy)`` stays lazy).
"""

# Lambdas built in loops are called at once (check/assert_same_error), never later.
# ruff: noqa: B023

from __future__ import annotations

import inspect
import operator
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import (
    arrays,
    broadcastable_shapes,
    chunks_for_shape,
    dtypes,
    elementwise_trees,
    shapes,
)

import lazyarr as la
from lazyarr.namespace import elementwise as ew
from lazyarr.testing import assert_eq, assert_same_error, executors_under_test

# NaN, inf, 0/0 and invalid casts warn in NumPy and in the kernels alike.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

REF = ["numpy"]  # the wide sweeps run on the reference executor only
SWEEP_DTYPES = ["bool", "int8", "int64", "uint8", "float32", "float64", "complex128"]
# second operands that must stay small and non-negative for integers
SMALL_SECOND = {
    "power",
    "pow",
    "float_power",
    "left_shift",
    "right_shift",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "ldexp",
}
SPECIAL = {
    "allclose",
    "angle",
    "around",
    "astype",
    "clip",
    "imag",
    "isclose",
    "nan_to_num",
    "real",
    "round",
    "sinc",
    "where",
}
UFUNC_NAMES = sorted(n for n in ew.__all__ if n not in SPECIAL)


def np_ufunc(name: str) -> np.ufunc:
    return getattr(np, ew.ARRAY_API_ALIASES.get(name, name))


def sample(dtype: str, shape: tuple[int, ...], *, small: bool = False, seed: int = 0) -> np.ndarray:
    """Deterministic test data with the dtype's special values mixed in."""
    dt = np.dtype(dtype)
    rng = np.random.default_rng(zlib.crc32(f"{dtype}{shape}{small}{seed}".encode()))
    n = int(np.prod(shape))
    if dt.kind == "b":
        flat = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        lo = 0 if (small or dt.kind == "u") else -20
        hi = 5 if small else 20
        flat = rng.integers(lo, hi + 1, n).astype(dt)
        if not small and n >= 4:
            info = np.iinfo(dt)
            flat[1], flat[3] = info.max, info.min
    else:
        flat = (rng.standard_normal(n) * (2 if small else 5)).astype(dt)
        if dt.kind == "c":
            flat = flat + 1j * rng.standard_normal(n).astype(dt)
        specials = [np.nan, np.inf, -np.inf, 0.0, -0.0]
        if dt.kind == "c":
            specials += [complex(np.inf, 1), complex(1, np.nan)]
        if not small:
            for i, v in zip(range(1, n, 3), specials, strict=False):
                flat[i] = v
    return flat.reshape(shape)


# (shape of first operand, its chunks, shape of second operand, its chunks)
SHAPE_CASES = {
    "broadcast-uneven": ((5, 7), ((2, 2, 1), (3, 1, 3)), (7,), ((4, 3),)),
    "0d": ((), (), (), ()),
    "empty": ((0, 3), ((0,), (2, 1)), (3,), ((1, 2),)),
    "size1": ((1, 1), ((1,), (1,)), (1, 4), ((1,), (3, 1))),
}


def operands(name: str, dtype: str, case: str, nin: int):
    s1, c1, s2, c2 = SHAPE_CASES[case]
    a = sample(dtype, s1)
    b = sample(dtype, s2, small=name in SMALL_SECOND, seed=1)
    if name == "ldexp" and np.dtype(dtype).kind not in "iub":
        b = sample("int64", s2, small=True, seed=1)
    arrays_ = [a, b][:nin]
    chunks = [c1, c2][:nin]
    return arrays_, [la.asarray(x, chunks=c) for x, c in zip(arrays_, chunks, strict=True)]


def check(np_call, lazy_call, executors=REF):
    """NumPy's result, or NumPy's error raised at expression time by lazyarr."""
    try:
        with np.errstate(all="ignore"):
            expected = np_call()
    except Exception:
        assert_same_error(np_call, lazy_call)
        return
    assert_eq(lazy_call(), expected, executors=executors)


@pytest.mark.parametrize("dtype", SWEEP_DTYPES)
@pytest.mark.parametrize("name", UFUNC_NAMES)
def test_every_ufunc_matches_numpy(name, dtype):
    ufunc = np_ufunc(name)
    fn = getattr(la, name)
    # the namespace's function is the module's, wrapped to record calls on deferred arrays
    assert inspect.unwrap(fn) is getattr(ew, name) or name in ("pow", "power")
    for case in SHAPE_CASES:
        nps, lazies = operands(name, dtype, case, ufunc.nin)
        check(lambda nps=nps: ufunc(*nps), lambda lazies=lazies: fn(*lazies))


def test_the_sweep_covers_every_function():
    assert set(UFUNC_NAMES) | SPECIAL == set(ew.__all__)
    assert len(ew.__all__) >= 100
    # generalized ufuncs are not elementwise (their shapes are not broadcasts)
    for name in ("matmul", "vecdot", "matvec", "vecmat"):
        assert name not in ew.__all__


@pytest.mark.parametrize("dtype", SWEEP_DTYPES)
@pytest.mark.parametrize("case", sorted(SHAPE_CASES))
def test_special_functions_match_numpy(dtype, case):
    (a, b), (x, y) = operands("add", dtype, case, 2)
    cond_np = sample("bool", a.shape, seed=3)
    cond = la.asarray(cond_np, chunks=x.chunks)
    calls = {
        "where": (lambda: np.where(cond_np, a, b), lambda: la.where(cond, x, y)),
        "where-scalar": (lambda: np.where(cond_np, a, 0), lambda: la.where(cond, x, 0)),
        "clip": (lambda: np.clip(a, -3, 4), lambda: la.clip(x, -3, 4)),
        "clip-array": (lambda: np.clip(a, b, None), lambda: la.clip(x, y, None)),
        "clip-max": (lambda: np.clip(a, max=2), lambda: la.clip(x, max=2)),
        "round": (lambda: np.round(a), lambda: la.round(x)),
        "round-2": (lambda: np.round(a, 2), lambda: la.round(x, 2)),
        "around-neg": (lambda: np.around(a, -1), lambda: la.around(x, -1)),
        "real": (lambda: np.real(a), lambda: la.real(x)),
        "imag": (lambda: np.imag(a), lambda: la.imag(x)),
        "isclose": (lambda: np.isclose(a, b), lambda: la.isclose(x, y)),
        "isclose-nan": (
            lambda: np.isclose(a, a, equal_nan=True),
            lambda: la.isclose(x, x, equal_nan=True),
        ),
        "allclose": (lambda: np.allclose(a, a), lambda: la.allclose(x, x)),
        "nan_to_num": (lambda: np.nan_to_num(a), lambda: la.nan_to_num(x)),
        "nan_to_num-kw": (
            lambda: np.nan_to_num(a, nan=-1.0, posinf=9.0, neginf=-9.0),
            lambda: la.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
        ),
        "angle": (lambda: np.angle(a), lambda: la.angle(x)),
        "angle-deg": (lambda: np.angle(a, deg=True), lambda: la.angle(x, deg=True)),
        "sinc": (lambda: np.sinc(a), lambda: la.sinc(x)),
        "astype-int8": (lambda: a.astype(np.int8), lambda: la.astype(x, np.int8)),
        "astype-f32": (lambda: a.astype(np.float32), lambda: la.astype(x, la.float32)),
    }
    for np_call, lazy_call in calls.values():
        check(np_call, lazy_call)


def test_special_functions_are_in_the_namespace():
    for name in SPECIAL:
        assert callable(getattr(la, name))


# -- promotion -------------------------------------------------------------------

PROMOTION_FUNCS = ["add", "true_divide", "floor_divide", "bitwise_and", "maximum", "less", "power"]


@pytest.mark.parametrize("func", PROMOTION_FUNCS)
def test_dtype_promotion_table_matches_numpy(func):
    names = [*SWEEP_DTYPES, "int16", "uint64", "complex64"]
    for d1 in names:
        for d2 in names:
            a, b = np.ones(2, d1), np.ones(2, d2)
            x, y = la.asarray(a), la.asarray(b)
            try:
                want = getattr(np, func)(a, b).dtype
            except Exception:
                assert_same_error(lambda: getattr(np, func)(a, b), lambda: getattr(la, func)(x, y))
                continue
            assert getattr(la, func)(x, y).dtype == want, (func, d1, d2)


# -- integer arithmetic -----------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float64"])
def test_floor_division_and_modulo_signs(dtype):
    a = np.array([-7, -6, -1, 0, 1, 6, 7], dtype=dtype)
    b = np.array([3, -3, 2, -2, 5, -4, 1], dtype=dtype)
    x, y = la.asarray(a, chunks=3), la.asarray(b, chunks=4)
    assert_eq(x // y, a // b)
    assert_eq(x % y, a % b)
    assert_eq(la.remainder(x, -3), np.remainder(a, -3))
    assert_eq(la.fmod(x, y), np.fmod(a, b))
    assert_eq(divmod(x, y)[0], divmod(a, b)[0])
    assert_eq(divmod(x, y)[1], divmod(a, b)[1])
    assert_eq(-7 // y, -7 // b)
    assert_eq(-7 % y, -7 % b)


@pytest.mark.parametrize("dtype", ["int8", "int64", "float64"])
def test_division_by_zero_matches_numpy(dtype):
    a = np.array([-3, 0, 5], dtype=dtype)
    x = la.asarray(a)
    with np.errstate(all="ignore"):
        assert_eq(x // 0, a // 0)
        assert_eq(x % 0, a % 0)
        assert_eq(x / 0, a / 0)


@pytest.mark.parametrize(
    ("dtype", "values", "op"),
    [
        ("int8", [127, -128, 100], lambda v: v + np.int8(1)),
        ("int8", [127, -128, 100], lambda v: v * 2),
        ("uint8", [0, 1, 255], lambda v: v - 1),
        ("uint8", [0, 200, 255], lambda v: v + 100),
        ("int64", [2**62, -(2**63), 2**63 - 1], lambda v: v * 4),
        ("int16", [-32768, 5, 1], lambda v: -v),
        ("int32", [-(2**31), 3, -1], abs),
        ("uint32", [0, 3, 2**32 - 1], lambda v: v + v),
    ],
)
def test_integer_overflow_wraps_like_numpy(dtype, values, op):
    a = np.array(values, dtype=dtype)
    assert_eq(op(la.asarray(a, chunks=2)), op(a))


def test_bool_arithmetic_errors():
    b = np.array([True, False, True])
    x = la.asarray(b)
    assert_same_error(lambda: -b, lambda: -x)
    assert_same_error(lambda: b - b, lambda: x - x)
    assert_same_error(lambda: np.subtract(b, True), lambda: la.subtract(x, True))
    assert_same_error(lambda: np.negative(b), lambda: la.negative(x))
    # but these are fine, as in NumPy
    assert_eq(x + x, b + b)
    assert_eq(x * x, b * b)
    assert_eq(~x, ~b)
    assert_eq(x / x, b / b)
    assert_eq(abs(x), abs(b))
    assert_eq(x ^ True, b ^ True)


# -- NEP 50: Python scalars are weak, NumPy scalars are not -------------------------


def test_weak_python_scalars():
    u8 = np.arange(0, 250, 50, dtype=np.uint8)
    f32 = np.linspace(-1, 1, 5, dtype=np.float32)
    i8 = np.arange(-2, 3, dtype=np.int8)
    x, y, z = la.asarray(u8), la.asarray(f32), la.asarray(i8)
    assert_same_error(lambda: u8 + 300, lambda: x + 300)
    assert_same_error(lambda: u8 + (-1), lambda: x + (-1))
    assert_same_error(lambda: 300 - u8, lambda: 300 - x)
    assert_same_error(lambda: i8 * 2**40, lambda: z * 2**40)
    assert_same_error(lambda: np.maximum(u8, 256), lambda: la.maximum(x, 256))
    assert (x + 255).dtype == np.uint8
    assert_eq(x + 255, u8 + 255)
    assert (y * 2.0).dtype == np.float32
    assert_eq(y * 2.0, f32 * 2.0)
    assert_eq(2.0 * y, 2.0 * f32)
    assert_eq(y + 1j, f32 + 1j)
    assert (y + 1j).dtype == np.complex64
    assert_eq(z + 1.5, i8 + 1.5)
    assert (z + 1).dtype == np.int8
    assert_eq(y == 0.5, f32 == 0.5)
    # NumPy scalars and 0-d arrays are strongly typed
    assert_eq(y + np.float64(2), f32 + np.float64(2))
    assert (y + np.float64(2)).dtype == np.float64
    assert_eq(x + np.int64(1), u8 + np.int64(1))
    assert_eq(x + np.array(1, dtype=np.int16), u8 + np.array(1, dtype=np.int16))
    assert_eq(x + True, u8 + True)


def test_integer_power_with_negative_exponents():
    a = np.arange(-3, 4, dtype=np.int64)
    x = la.asarray(a, chunks=3)
    assert_same_error(lambda: a**-1, lambda: x**-1)
    assert_same_error(lambda: np.power(a, -2), lambda: la.pow(x, -2))
    assert_same_error(lambda: np.power(a, -2), lambda: la.power(x, -2))
    # float exponents (and float bases) are fine
    with np.errstate(all="ignore"):
        assert_eq(x**-1.0, a**-1.0)
        assert_eq(x.astype(np.float64) ** -2, a.astype(np.float64) ** -2)
    assert_eq(x**0, a**0)
    assert_eq(x**3, a**3)
    assert_eq(2 ** x[4:] if False else 2 ** la.asarray(np.arange(5)), 2 ** np.arange(5))
    # a negative exponent inside the data can only be seen when computing
    with pytest.raises(ValueError, match="negative integer powers"):
        (la.asarray(np.array([2, 3])) ** la.asarray(np.array([1, -1]))).compute()


# -- operators ----------------------------------------------------------------------

BINARY_OPS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "**": operator.pow,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
INPLACE_OPS = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "//=": operator.ifloordiv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "&=": operator.iand,
    "|=": operator.ior,
    "^=": operator.ixor,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
}


def _op_data(dtype):
    a = sample(dtype, (4, 5), small=True, seed=5) + (np.dtype(dtype).kind not in "bu")
    b = sample(dtype, (5,), small=True, seed=6)
    return a, b


@pytest.mark.parametrize("dtype", ["bool", "int16", "uint8", "float64", "complex64"])
@pytest.mark.parametrize("sym", sorted(BINARY_OPS))
def test_binary_operators(sym, dtype):
    op = BINARY_OPS[sym]
    a, b = _op_data(dtype)
    x, y = la.asarray(a, chunks=(3, 2)), la.asarray(b, chunks=2)
    k = 3 if sym == "**" else 2
    check(lambda: op(a, b), lambda: op(x, y))  # lazy op lazy
    check(lambda: op(a, k), lambda: op(x, k))  # lazy op scalar
    check(lambda: op(3, b), lambda: op(3, y))  # reflected: scalar op lazy
    check(lambda: op(a, b), lambda: op(x, b))  # lazy op ndarray
    check(lambda: op(a, b), lambda: op(a, y))  # ndarray op lazy (__array_ufunc__)


def test_power_operator_scalar_shortcuts():
    b = np.array([True, False])
    c = np.array([-3 + 0j, np.inf + 0j, -np.inf + 0j], dtype=np.complex64)
    assert_eq(la.asarray(b) ** 2, b**2)  # int8, not int64
    with np.errstate(all="ignore"):
        assert_eq(la.asarray(c) ** 0.5, c**0.5)
        assert_eq(la.asarray(c) ** -1, c**-1)


def test_ndarray_on_the_left_gives_a_lazy_array():
    a = np.arange(6.0)
    x = la.asarray(a)
    for op in (operator.add, operator.mul, operator.lt, operator.pow):
        assert isinstance(op(a, x), la.LazyArray)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int64", "uint16", "float32", "complex128"])
def test_unary_operators(dtype):
    a = sample(dtype, (3, 4))
    x = la.asarray(a, chunks=(2, 3))
    for op in (operator.neg, operator.pos, abs, operator.invert):
        check(lambda op=op: op(a), lambda op=op: op(x))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int64", "float32", "float64"])
@pytest.mark.parametrize("sym", sorted(INPLACE_OPS))
def test_inplace_operators(sym, dtype):
    op = INPLACE_OPS[sym]
    a, b = _op_data(dtype)
    for other_np, other_lazy in ((b, la.asarray(b, chunks=3)), (2, 2), (1.5, 1.5)):
        if sym == "**=" and np.dtype(dtype).kind in "iu" and other_np is not b:
            other_np = other_lazy = 2

        def np_call(other=other_np):
            target = a.copy()
            with np.errstate(all="ignore"):
                return op(target, other)

        def lazy_call(other=other_lazy):
            target = la.asarray(a, chunks=(3, 2))
            before = target
            result = op(target, other)
            assert result is before  # in place: the same handle
            return result

        check(np_call, lazy_call)


def test_inplace_casting_errors():
    i = np.arange(5)
    b = np.array([True, False])
    cases = [
        (i, lambda t: operator.iadd(t, 1.5)),
        (i, lambda t: operator.itruediv(t, 2)),
        (i, lambda t: operator.imul(t, 1j)),
        (b, lambda t: operator.iadd(t, 1)),
        (np.arange(5, dtype=np.float32), lambda t: operator.iadd(t, 1j)),
        (np.arange(5, dtype=np.uint8), lambda t: operator.iadd(t, 300)),
        (np.arange(3.0), lambda t: operator.iadd(t, np.ones((2, 3)))),
    ]
    for arr, f in cases:
        err = assert_same_error(
            lambda arr=arr, f=f: f(arr.copy()), lambda arr=arr, f=f: f(la.asarray(arr))
        )
        assert issubclass(err, (TypeError, ValueError, OverflowError))
    # NumPy's UFuncTypeError in particular (a TypeError subclass)
    with pytest.raises(np._core._exceptions.UFuncTypeError):
        x = la.asarray(i)
        x += 1.5


def test_inplace_power_with_negative_exponent():
    a = np.arange(1, 4)

    def lazy_call():
        x = la.asarray(a)
        x **= -1

    def np_call():
        t = a.copy()
        t **= -1

    assert_same_error(np_call, lazy_call)


def test_inplace_keeps_dtype_and_values():
    a = np.arange(10, dtype=np.int16)
    x = la.asarray(a, chunks=3)
    x += np.int64(5)
    x *= 3
    assert x.dtype == np.int16
    assert_eq(x, (a + 5) * 3)
    f = la.asarray(np.ones(4, np.float32))
    f += np.ones(4)  # float64 into float32: same_kind, allowed
    assert f.dtype == np.float32
    assert_eq(f, np.full(4, 2, np.float32))


def test_divmod_and_bool_scalar_operands():
    a = np.arange(-4, 5)
    x = la.asarray(a, chunks=4)
    q, r = divmod(x, 3)
    assert_eq(q, a // 3)
    assert_eq(r, a % 3)
    q, r = divmod(7, la.asarray(np.array([2, -3])))
    assert_eq(q, 7 // np.array([2, -3]))
    assert_eq(r, 7 % np.array([2, -3]))


def test_unsupported_operands_raise_type_error():
    x = la.asarray(np.arange(3))
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        x + object()
    with pytest.raises(TypeError):
        la.add(x, "a")


# -- NumPy protocols ---------------------------------------------------------------


def test_numpy_ufuncs_stay_lazy():
    a = np.linspace(-2, 2, 12).reshape(3, 4)
    x = la.asarray(a, chunks=(2, 3))
    with la.config.set(executor="raise"):
        for f in (np.sin, np.exp, np.negative, np.isnan, np.sqrt):
            assert isinstance(f(x), la.LazyArray)
        for f in (np.add, np.hypot, np.less, np.arctan2, np.maximum):
            assert isinstance(f(x, 2.0), la.LazyArray)
            assert isinstance(f(a, x), la.LazyArray)
        assert isinstance(np.add.reduce(x), la.LazyArray)
    with np.errstate(all="ignore"):
        assert_eq(np.sqrt(x), np.sqrt(a))
    assert_eq(np.arctan2(a, x), np.arctan2(a, a))
    assert_eq(np.add(x, 1, dtype=np.float32), np.add(a, 1, dtype=np.float32))


def test_ufunc_reduce_methods():
    a = np.arange(24.0).reshape(2, 3, 4) - 7
    x = la.asarray(a, chunks=(1, 2, 3))
    assert_eq(np.add.reduce(x), np.add.reduce(a))
    assert_eq(np.add.reduce(x, axis=None), np.add.reduce(a, axis=None))
    assert_eq(np.multiply.reduce(x, axis=2), np.multiply.reduce(a, axis=2))
    assert_eq(np.maximum.reduce(x, axis=(0, 2)), np.maximum.reduce(a, axis=(0, 2)))
    assert_eq(
        np.minimum.reduce(x, axis=1, keepdims=True), np.minimum.reduce(a, axis=1, keepdims=True)
    )
    b = a > 0
    y = la.asarray(b, chunks=(1, 2, 3))
    assert_eq(np.logical_or.reduce(y, axis=0), np.logical_or.reduce(b, axis=0))
    assert_eq(np.logical_and.reduce(y, axis=-1), np.logical_and.reduce(b, axis=-1))
    assert_eq(np.add.reduce(x, dtype=np.float32), np.add.reduce(a, dtype=np.float32))
    empty = np.zeros((0, 3))
    assert_same_error(
        lambda: np.maximum.reduce(empty), lambda: np.maximum.reduce(la.asarray(empty))
    )


def test_unsupported_numpy_functions_fall_back_and_ufunc_methods_raise():
    from lazyarr._fallback import numpy_fallback

    x = la.asarray(np.arange(6.0))
    numpy_fallback.reset()
    with pytest.warns(la.NumPyFallbackWarning, match="histogram2d"):
        got = np.histogram2d(x, x)  # computed, NumPy's result (tests/test_numpy_fallback.py)
    for g, w in zip(got, np.histogram2d(np.arange(6.0), np.arange(6.0))):
        np.testing.assert_array_equal(g, w)
    with pytest.raises(TypeError, match=r"accumulate|add"):
        np.add.accumulate(x)
    with pytest.raises(TypeError):
        np.add(x, 1, out=np.empty(6))
    with pytest.raises(TypeError, match="where"):
        la.add(x, 1, where=np.array([True] * 6))


def test_scalar_only_expressions():
    assert_eq(la.add(1, 2), np.add(1, 2))
    assert_eq(la.sin(1.0), np.sin(1.0))
    assert_eq(la.where(True, la.asarray(np.arange(3)), 0), np.where(True, np.arange(3), 0))


def test_errors_name_the_op_and_shapes():
    x = la.asarray(np.ones((3, 4)))
    y = la.asarray(np.ones((5,)))
    with pytest.raises(ValueError, match=r"add.*\(3, 4\).*\(5,\)"):
        x + y
    with pytest.raises(ValueError, match="hypot"):
        la.hypot(x, y)


# -- hypothesis: random shapes, chunks and trees -------------------------------------

UNARY_SAMPLE = ["negative", "sqrt", "exp", "floor", "isnan", "sign", "abs", "log1p", "square"]
BINARY_SAMPLE = ["add", "multiply", "subtract", "maximum", "fmin", "greater", "copysign", "divide"]


@given(
    st.data(),
    st.sampled_from(UNARY_SAMPLE),
    dtypes("iuf").flatmap(lambda d: st.tuples(st.just(d), shapes())),
)
def test_unary_on_random_chunks(data, name, dtype_shape):
    dtype, shape = dtype_shape
    a = data.draw(arrays(dtype, shape))
    x = la.asarray(a, chunks=data.draw(chunks_for_shape(shape)))
    check(
        lambda: getattr(np, ew.ARRAY_API_ALIASES.get(name, name))(a), lambda: getattr(la, name)(x)
    )


@given(st.data(), st.sampled_from(BINARY_SAMPLE), shapes(), dtypes("f"), dtypes("if"))
def test_binary_broadcasting_on_random_chunks(data, name, shape, d1, d2):
    a = data.draw(arrays(d1, shape))
    other = data.draw(broadcastable_shapes(shape))
    if data.draw(st.booleans()):  # sometimes the bigger shape is on the right
        shape, other = other, shape
        a = data.draw(arrays(d1, shape))
    b = data.draw(arrays(d2, other))
    x = la.asarray(a, chunks=data.draw(chunks_for_shape(a.shape)))
    y = la.asarray(b, chunks=data.draw(chunks_for_shape(b.shape)))
    np_fn = getattr(np, ew.ARRAY_API_ALIASES.get(name, name))
    check(lambda: np_fn(a, b), lambda: getattr(la, name)(x, y))


@given(elementwise_trees())
def test_random_expression_trees(pair):
    lazy, expected = pair
    assert_eq(lazy, expected, executors=REF)


@given(elementwise_trees(max_depth=2, max_inputs=2))
def test_random_expression_trees_on_every_executor(pair):
    lazy, expected = pair
    assert_eq(lazy, expected, executors=executors_under_test())
