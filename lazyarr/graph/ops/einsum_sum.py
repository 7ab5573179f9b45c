"""An einsum that only multiplies broadcast operands and sums, written as a product and a sum.

``einsum("tyx,y->t", data, weights)`` (xarray's ``dot``, as in a weighted mean)
contracts nothing a block could not reduce alone: one operand carries every
label, the others broadcast against it. Written as ``sum(data * weights,
axis=(y, x))`` it is an elementwise product and an ordinary reduction, which
fuse with their neighbours into one generated kernel, sibling sums share one
read, and the summed axes need not be whole in one block; as an ``Einsum`` it
runs NumPy's kernel on whole contracted axes. The product is no larger than
the largest operand, so nothing grows. Only floating and complex results are
rewritten (``einsum`` keeps integer and boolean sums in their own dtype,
``sum`` widens them).
"""

from __future__ import annotations

from collections.abc import Sequence

from lazyarr.graph.expr import Expr
from lazyarr.graph.ops.elementwise import elementwise
from lazyarr.graph.ops.linalg import Einsum
from lazyarr.graph.ops.manipulation import permute_dims, reshape
from lazyarr.graph.ops.reduction import reduce

__all__ = ["as_product_sum", "product_sum_carrier"]


def product_sum_carrier(
    subscripts: Sequence[tuple[int, ...]], output: tuple[int, ...]
) -> int | None:
    """The operand that carries every label of a product-and-sum einsum, or None.

    Such an einsum has no label twice in one operand, sums at least one label,
    keeps the output labels in the carrier's order, and every operand's labels
    are the carrier's.
    """
    if any(len(set(s)) != len(s) for s in subscripts) or len(set(output)) != len(output):
        return None
    labels = set().union(*map(set, subscripts)) if subscripts else set()
    if not labels - set(output):
        return None  # nothing summed: a product or a transpose, not this rewrite's case
    for i, s in enumerate(subscripts):
        if set(s) == labels and [lab for lab in s if lab in output] == list(output):
            return i
    return None


def _aligned(x: Expr, labels: tuple[int, ...], carrier: tuple[int, ...]) -> Expr:
    """``x`` (axes ``labels``) with its axes in the carrier's order and length one where
    it has no label, so it broadcasts against the carrier."""
    order = sorted(range(len(labels)), key=lambda i: carrier.index(labels[i]))
    x = permute_dims(x, order)
    have = {labels[i]: x.shape[k] for k, i in enumerate(order)}
    return reshape(x, tuple(have.get(lab, 1) for lab in carrier))


def as_product_sum(e: Expr) -> Expr | None:
    """``e`` (an :class:`Einsum`) as a broadcast product and a ``sum``, or None where the
    einsum is not of that kind, its result not floating or complex, or the product's
    dtype is not the einsum's."""
    op = e.op
    if not isinstance(op, Einsum) or e.dtype.kind not in "fc" or op.dtype not in (None, e.dtype):
        return None
    i = product_sum_carrier(op.subscripts, op.output)
    if i is None:
        return None
    carrier = op.subscripts[i]
    big = e.inputs[i]
    sizes = {lab: n for lab, n in zip(carrier, big.shape, strict=True)}
    for x, labels in zip(e.inputs, op.subscripts, strict=True):
        if any(n not in (1, sizes[lab]) for lab, n in zip(labels, x.shape, strict=True)):
            return None
    product = big
    for j, (x, labels) in enumerate(zip(e.inputs, op.subscripts, strict=True)):
        if j != i:
            product = elementwise("multiply", product, _aligned(x, labels, carrier))
    if product.dtype != e.dtype:
        return None
    summed = tuple(k for k, lab in enumerate(carrier) if lab not in op.output)
    return reduce("sum", product, summed, False, e.dtype)
