"""The fusion algebra: which producer may join which consumer's stage.

Plain functions on expressions, tested without plans; the ``fuse`` pass
only walks the plan and rewires. Two kinds of group:

* **elementwise groups** (vertical fusion): elementwise ops over one block
  grid, so a producer joins only a reader with its shape and chunks
  (external inputs may still broadcast, they are read through regions);
  a reduction can close the group, so a chain plus a trailing reduction is
  one pass. These become one generated loop.
* **operand groups**: a contraction (``matmul``, ``tensordot``, ``einsum``)
  computes its operands itself when they are cheap views or elementwise
  expressions of other arrays (``X.T``, ``X * d[:, None]``, ``p - y``):
  each block or partial product computes just the operand regions it
  reads, so the operand is never stored whole. Any shape and chunks: the
  regions rule (``graph.group``) says what each member must cover.
* **epilogues**: a contraction whose blocks are each one product (its
  summed axes are not split into blocks, e.g. ``X @ w`` over row blocks of
  ``X``) joins an elementwise reader over its own grid, so
  ``sigmoid(X @ w)`` is one stage: each block is computed and mapped before
  it is stored. Only when the contraction folds no operand of its own (an
  operand group and an epilogue in one stage are not combined).

Reductions, sorts, rechunks, array indexing and sources never join.
"""

from __future__ import annotations

from collections.abc import Callable

from lazyarr.graph.blockrules import n_contraction_parts
from lazyarr.graph.expr import Expr, ReduceOp
from lazyarr.graph.ops import Elementwise
from lazyarr.graph.ops.indexing import GetItem
from lazyarr.graph.ops.linalg import Einsum, Matmul, Tensordot
from lazyarr.graph.ops.manipulation import BroadcastTo, Transpose

__all__ = [
    "can_join",
    "is_contraction",
    "is_epilogue_producer",
    "is_group_op",
    "is_operand_op",
    "may_root",
]

_CONTRACTIONS = (Matmul, Tensordot, Einsum)


def is_group_op(e: Expr) -> bool:
    """An op that can be a non-root member of an elementwise group."""
    return isinstance(e.op, Elementwise)


def is_contraction(e: Expr) -> bool:
    """A contraction: the root of an operand group."""
    return isinstance(e.op, _CONTRACTIONS)


def is_operand_op(e: Expr) -> bool:
    """An op a contraction may compute for itself: elementwise, or a view of one input.

    Views are transposes, broadcasts and basic indexing (slices, integers,
    new axes); indexing with arrays gathers, so it stays a stage.
    """
    op = e.op
    if isinstance(op, (Elementwise, Transpose, BroadcastTo)):
        return True
    if isinstance(op, GetItem):
        return all(x is None or isinstance(x, (int, slice)) for x in op.entries)
    return False


def is_epilogue_producer(e: Expr) -> bool:
    """A contraction whose every block is one product (no summed axis split into blocks).

    Such a block reads whole operand panels and is computed in one call, so
    an elementwise reader over the same grid can map it before it is stored.
    """
    return is_contraction(e) and n_contraction_parts(e) == 1


def _fuses_body(e: Expr) -> bool:
    """A reduction whose partials compute their elementwise body (``ReduceOp.fuses_body``)."""
    return isinstance(e.op, ReduceOp) and e.op.fuses_body


def may_root(e: Expr) -> bool:
    """An op that can close a fused group (elementwise, a reduction or a contraction)."""
    return isinstance(e.op, Elementwise) or _fuses_body(e) or is_contraction(e)


def can_join(
    producer: Expr,
    reader: Expr,
    operand_group: bool = False,
    root: Expr | None = None,
    supports: Callable[[Expr], bool] | None = None,
) -> tuple[bool, str]:
    """Whether ``producer`` can be computed inside ``reader``'s stage, and why not.

    ``operand_group``: the reader belongs to a group closed by a contraction
    (the reader is the contraction or one of its operand members).
    ``root``: the root of the reader's group (None: the reader itself); a
    contraction joins only groups whose root is elementwise (an epilogue).
    ``supports``: whether the executor's kernels compile an op; an
    elementwise producer joins a group only when both are compiled or both
    are not (a group with one op the kernels cannot compile runs wholly on
    NumPy).
    """
    if operand_group:
        if is_operand_op(producer):
            return True, ""
        return False, f"{producer.op.label()} is neither elementwise nor a view"
    if is_contraction(producer):
        group_root = reader if root is None else root
        if not isinstance(reader.op, Elementwise) or not isinstance(group_root.op, Elementwise):
            return False, f"{producer.op.label()} is not elementwise"
        if not is_epilogue_producer(producer):
            return False, f"{producer.op.label()} sums over split axes (a tree of partial products)"
    elif not is_group_op(producer):
        return False, f"{producer.op.label()} is not elementwise"
    elif supports is not None:
        group_root = reader if root is None else root
        mine, theirs = supports(producer), supports(group_root)
        if mine != theirs:
            compiled, other = (producer, group_root) if mine else (group_root, producer)
            return False, (
                f"the kernels compile {compiled.op.label()} but not {other.op.label()} "
                "(together they would run on NumPy)"
            )
    if _fuses_body(reader):
        return True, ""
    if not isinstance(reader.op, Elementwise):
        return False, f"its reader {reader.op.label()} is not fusible"
    if producer.shape != reader.shape:
        return False, f"shape {producer.shape} is broadcast to {reader.shape}"
    if producer.chunks != reader.chunks:
        return False, "its chunks differ from its reader's"
    return True, ""
