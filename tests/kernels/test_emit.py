"""Generated kernel source: deterministic text, exact dtypes, refusals (no Numba needed)."""

from __future__ import annotations

import ast
import warnings

import numpy as np
import pytest

import lazyarr as la
from lazyarr._array import wrap
from lazyarr.graph.ops import Elementwise, elementwise
from lazyarr.kernels.emit import Unsupported, emit_map, emit_reduce, reduce_spec
from lazyarr.kernels.emit_group import slots


def group(result: la.LazyArray) -> tuple[list, list]:
    """Members (elementwise ops, dependency order) and external inputs of ``result``."""
    members: dict[str, object] = {}
    inputs: dict[str, object] = {}
    shape = result._expr.shape

    def visit(e):
        if e.key in members or e.key in inputs:
            return
        if isinstance(e.op, Elementwise) and e.shape == shape:  # as the fusion pass groups
            for i in e.inputs:
                visit(i)
            members[e.key] = e
        else:
            inputs[e.key] = e

    visit(result._expr)
    return list(members.values()), list(inputs.values())


def source_of(result: la.LazyArray) -> str:
    members, inputs = group(result)
    return emit_map(members, inputs).source


def chain(x, y):
    return la.sqrt((x - y) ** 2 / (1 + la.abs(y)))


def test_same_plan_gives_the_same_text():
    a = np.arange(12.0).reshape(3, 4)
    first = source_of(chain(la.asarray(a, chunks=2), la.asarray(a[0])))
    again = source_of(chain(la.asarray(a, chunks=2), la.asarray(a[0])))
    assert first == again
    # the loop is independent of shapes and chunks: other data, same text
    b = np.ones((50, 4))
    assert source_of(chain(la.asarray(b, chunks=7), la.asarray(b[0]))) == first
    ast.parse(first)  # valid Python
    assert "@njit(nogil=True)" in first
    assert "import numba" not in first


def test_each_input_is_read_once_and_nothing_is_allocated():
    x = la.asarray(np.ones((3, 4)))
    y = la.asarray(np.ones(4))
    members, inputs = group(chain(x, y) * y + x)
    text = emit_map(members, inputs).source
    kernel = text[text.index("def kernel") :]
    fast = kernel[kernel.index("if fast:") : kernel.index("else:")]
    # x, y and 1 + |y| (another shape: computed by its own stage) are read once per
    # element each, although x and y are used by several members
    assert len(slots(members, inputs)) == 3
    assert [fast.count(f"b{k}[") for k in range(3)] == [1, 1, 1]
    for alloc in ("np.empty", "np.zeros", "np.ones", "np.full", "np.array", ".copy("):
        assert alloc not in kernel


def test_loop_dtypes_are_numpys():
    f32 = la.asarray(np.ones(4, np.float32))
    text = source_of(f32 * 0.1 + 2)
    # weak Python scalars become float32 literals; every result stays float32
    assert "np.float32(0.1)" in text and "np.float32(2.0)" in text
    assert "np.float64" not in text
    i8 = la.asarray(np.ones(4, np.int8))
    text = source_of(i8 + i8 * 3)
    assert "np.int8(3)" in text and "np.int8(x0 + " in text
    # int8 / int8 computes in float64 (NumPy's loop), the int8 + float64 mix in float64
    text = source_of(i8 / i8)
    assert "np.float64(x0)" in text
    u8 = la.asarray(np.ones(4, np.uint64))
    text = source_of(u8 + la.asarray(np.ones(4, np.int64)))
    assert "np.float64(x0)" in text and "np.float64(x1)" in text


def test_integer_division_guards_and_flags_zero():
    i = la.asarray(np.arange(4))
    text = source_of(i // la.asarray(np.arange(4)))
    assert "st0 |=" in text and "== -1" in text
    members, inputs = group(i % la.asarray(np.arange(4)))
    kernel = emit_map(members, inputs)
    assert kernel.status == ("divide by zero encountered in remainder",)
    # floats: NumPy's divmod helper, no flag
    members, inputs = group(i.astype(float) // 2.0)
    kernel = emit_map(members, inputs)
    assert "_fdivmod" in kernel.source and kernel.status == ()


def _complex_to_real(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        return (x + 1j).astype(np.float64)  # NumPy warns: not compiled


@pytest.mark.parametrize(
    "make",
    [
        lambda x: wrap(elementwise("i0", x._expr)),
        lambda x: la.sinc(x),
        lambda x: la.isclose(x, 1.0),
        lambda x: x.astype(np.float16) + 1,
        _complex_to_real,
        lambda x: la.sqrt(x.astype(np.int8)),  # NumPy loops in float16
        lambda x: la.ldexp(x, 2),
    ],
)
def test_ops_without_an_emitter_raise_unsupported(make):
    x = la.asarray(np.ones(3))
    members, inputs = group(make(x))
    with pytest.raises(Unsupported):
        emit_map(members, inputs)


def test_constants_that_do_not_fit_the_loop_dtype_are_refused():
    i8 = la.asarray(np.ones(3, np.int8))
    members, inputs = group(i8 < 1000)  # NumPy compares by value here
    with pytest.raises(Unsupported, match="does not fit"):
        emit_map(members, inputs)


def reduce_parts(result: la.LazyArray):
    root = result._expr
    if not isinstance(root.inputs[0].op, Elementwise):
        return [], [root.inputs[0]], root
    members, inputs = group(wrap(root.inputs[0]))
    return members, inputs, root


@pytest.mark.parametrize(
    "func, states",
    [
        ("sum", 1),
        ("prod", 1),
        ("min", 1),
        ("max", 1),
        ("mean", 1),
        ("nanmean", 2),
        ("var", 3),
        ("std", 3),
        ("argmin", 2),
        ("any", 1),
        ("count_nonzero", 1),
    ],
)
def test_reductions_keep_their_state_in_accumulators(func, states):
    x = la.asarray(np.ones((4, 5)), chunks=2)
    result = getattr(la, func)(x * 2, axis=0)
    members, inputs, root = reduce_parts(result)
    kernel = emit_reduce(members, inputs, root)
    assert kernel.reduce is not None and len(kernel.reduce.states) == states
    assert [a.name for a in kernel.args[:states]] == [f"s{i}" for i in range(states)]
    ast.parse(kernel.source)
    body = kernel.source[kernel.source.index("def kernel") :]
    assert "np.empty" not in body and "np.zeros" not in body
    # a lone reduction (input from another stage) is a group with an empty body
    lone = getattr(la, func)(x, axis=1)._expr
    assert "x0" in emit_reduce([], [lone.inputs[0]], lone).source


def test_reduction_accumulation_dtypes_follow_numpy():
    i8 = la.asarray(np.ones(3, np.int8))
    f32 = la.asarray(np.ones(3, np.float32))
    assert reduce_spec(la.sum(i8)._expr, np.dtype(np.int8)).acc == np.sum(np.ones(3, np.int8)).dtype
    assert reduce_spec(la.mean(i8)._expr, np.dtype(np.int8)).acc == np.float64
    assert reduce_spec(la.mean(f32)._expr, np.dtype(np.float32)).acc == np.float32
    assert reduce_spec(la.sum(f32, dtype=np.float64)._expr, np.dtype(np.float32)).acc == np.float64
    spec = reduce_spec(la.var(f32 + 1j)._expr, np.dtype(np.complex64))
    assert [d for d, _ in spec.states] == [np.complex64, np.complex64, np.float32]
    with pytest.raises(Unsupported):
        reduce_spec(la.nanmin(f32 + 1j)._expr, np.dtype(np.complex64))
