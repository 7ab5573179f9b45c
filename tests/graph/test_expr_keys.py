"""Structural keys: equal expressions have equal keys, different ones differ."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import lazyarr as la
from lazyarr.graph import Expr
from lazyarr.graph.ops import Elementwise, elementwise, from_array
from lazyarr.graph.token import ArrayData, canonical


def test_equal_expressions_have_equal_keys():
    a = la.ones((4, 5), chunks=2)
    b = la.ones((4, 5), chunks=2)
    assert a.key == b.key
    assert ((a + 1) * 2).key == ((b + 1) * 2).key


@pytest.mark.parametrize(
    "other",
    [
        lambda: la.ones((4, 5), chunks=3) + 1,  # chunks
        lambda: la.ones((4, 5), chunks=2, dtype="float32") + 1,  # dtype
        lambda: la.ones((4, 5), chunks=2) + 2,  # constant
        lambda: la.ones((4, 5), chunks=2) + 1.0,  # scalar type (int vs float is a different op)
        lambda: la.ones((4, 5), chunks=2) - 1,  # op
        lambda: 1 + la.ones((4, 5), chunks=2),  # argument order
        lambda: la.zeros((4, 5), chunks=2) + 1,  # input
    ],
)
def test_different_expressions_have_different_keys(other):
    base = la.ones((4, 5), chunks=2) + 1
    assert other().key != base.key


def test_keys_are_stable_across_processes():
    code = (
        "import lazyarr as la, numpy as np;"
        "x = la.asarray(np.arange(6.0), chunks=4, copy=True);"
        "print(((x * 2 + 1).sum(axis=0)).key)"
    )
    runs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(2)
    }
    x = la.asarray(np.arange(6.0), chunks=4, copy=True)
    assert runs == {((x * 2 + 1).sum(axis=0)).key + "\n"}


def test_nan_and_negative_zero_tokens():
    assert canonical(float("nan")) == canonical(float("nan"))
    assert canonical(0.0) != canonical(-0.0)
    assert canonical(np.float32(1)) != canonical(1.0)


def test_small_arrays_hash_by_content_large_by_identity():
    small = np.arange(10)
    assert ArrayData(small).token == ArrayData(small.copy()).token
    assert ArrayData(small).token != ArrayData(small + 1).token
    big = np.zeros(1 << 18)  # 2 MiB: above the content-hash limit
    assert ArrayData(big).token != ArrayData(big).token


def test_expr_is_immutable_and_checks_chunks():
    e = from_array(np.ones((4,)), ((2, 2),))
    with pytest.raises(AttributeError):
        e.shape = (5,)
    with pytest.raises(ValueError, match="chunks"):
        Expr(Elementwise(func="negative", template=()), [e], (4,), "f8", ((3, 2),))


def test_unknown_parameter_types_are_refused():
    with pytest.raises(TypeError, match="structural token"):
        canonical(object())


def test_elementwise_rejects_unknown_function():
    e = from_array(np.ones(3), ((3,),))
    with pytest.raises(TypeError, match="not a known elementwise"):
        elementwise("no_such_ufunc", e)


def test_op_fields_may_not_shadow_kind_or_name():
    import dataclasses

    from lazyarr.graph.expr import MapOp

    with pytest.raises(TypeError, match="may not be called"):

        @dataclasses.dataclass(frozen=True)
        class Bad(MapOp):
            name = "bad-op"
            kind: str = "stable"
