"""Einsums that only multiply broadcast operands and sum, built as a product and a sum
(``graph/ops/einsum_sum.py``): NumPy's values on every executor, the new plan's shape."""

from __future__ import annotations

import numpy as np
import pytest

import lazyarr as la
from lazyarr import api
from lazyarr.graph.ops import Reduce
from lazyarr.graph.ops.einsum_sum import product_sum_carrier
from lazyarr.graph.ops.linalg import Einsum
from lazyarr.testing import assert_eq


def data(shape, dtype="float64", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


REWRITTEN = [
    ("abc,b->a", [(12, 5, 7), (5,)], ["float32", "float64"]),  # xarray's weighted mean
    ("abc,cb->a", [(12, 5, 7), (7, 5)], ["float64", "float64"]),  # an operand transposed
    ("abc,ab->b", [(12, 5, 7), (12, 5)], ["float32", "float32"]),
    ("abc,bc->ac", [(12, 5, 7), (5, 7)], ["complex64", "float32"]),
    ("abc,b,c->b", [(12, 5, 7), (5,), (7,)], ["float64", "float32", "float32"]),
    ("abc,b->a", [(12, 5, 7), (1,)], ["float64", "float64"]),  # a broadcast length one
    ("abc->", [(12, 5, 7)], ["float32"]),
    ("abc,b->a", [(0, 5, 7), (5,)], ["float64", "float64"]),
]


@pytest.mark.parametrize(("subscripts", "shapes", "dtypes"), REWRITTEN)
def test_a_product_and_sum_equals_numpy(subscripts, shapes, dtypes):
    arrays = [data(s, d, i) for i, (s, d) in enumerate(zip(shapes, dtypes))]
    got = la.einsum(subscripts, *[la.asarray(a, chunks=3) for a in arrays])
    assert isinstance(got._expr.op, Reduce) and got._expr.op.func == "sum"
    want = np.einsum(subscripts, *arrays)
    assert_eq(got, want, rtol=1e-5 if want.dtype.itemsize <= 8 else None)


KEPT = [
    ("ij,jk->ik", [(4, 5), (5, 3)], "float64"),  # a matrix product: the product would grow
    ("abc,b->ca", [(6, 5, 7), (5,)], "float64"),  # the output in another order
    ("ii->i", [(4, 4)], "float64"),  # a diagonal
    ("ij,ij->ij", [(4, 5), (4, 5)], "float64"),  # nothing summed
    ("abc,b->a", [(6, 5, 7), (5,)], "int64"),  # einsum keeps integer sums in their dtype
    ("abc,b->a", [(6, 5, 7), (5,)], "bool"),
]


@pytest.mark.parametrize(("subscripts", "shapes", "dtype"), KEPT)
def test_other_einsums_stay_einsums(subscripts, shapes, dtype):
    arrays = [data(s, "float64", i).astype(dtype) for i, s in enumerate(shapes)]
    got = la.einsum(subscripts, *[la.asarray(a, chunks=3) for a in arrays])
    assert isinstance(got._expr.op, Einsum)
    assert_eq(got, np.einsum(subscripts, *arrays))


def test_an_explicit_other_dtype_stays_an_einsum():
    a, w = data((6, 5, 7)), data((5,), seed=1)
    got = la.einsum("abc,b->a", la.asarray(a), la.asarray(w), dtype=np.float32, casting="unsafe")
    assert isinstance(got._expr.op, Einsum)
    assert_eq(got, np.einsum("abc,b->a", a, w, dtype=np.float32, casting="unsafe"))


def test_the_carrier_is_the_operand_with_every_label():
    assert product_sum_carrier(((0, 1, 2), (1,)), (0,)) == 0
    assert product_sum_carrier(((1,), (0, 1, 2)), (0, 2)) == 1
    assert product_sum_carrier(((0, 1), (1, 2)), (0, 2)) is None  # no operand has every label
    assert product_sum_carrier(((0, 1, 2), (1,)), (2, 0)) is None  # output out of order
    assert product_sum_carrier(((0, 0),), (0,)) is None  # a repeated label


def test_summed_axes_need_not_be_whole_in_a_block():
    """An einsum reads whole contracted axes into each task; the sum reduces the product's
    blocks as they are (partials per block, then combined)."""
    a, w = data((8, 6, 10)), data((6,), seed=1)
    x = la.asarray(a, chunks=(4, 3, 5))
    got = la.einsum("abc,b->a", x, la.asarray(w, chunks=3))
    assert got._expr.inputs[0].chunks == ((4, 4), (3, 3), (5, 5))
    plan = api.make_plan([got._expr], executor="numpy")
    assert [s.expr.op.name for s in plan.stages.values()].count("reduce") == 1
    assert_eq(got, np.einsum("abc,b->a", a, w))
