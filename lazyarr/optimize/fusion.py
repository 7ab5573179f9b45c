"""The fusion algebra: which producer may join which consumer's stage.

Plain functions on expressions, tested without plans; the ``fuse`` pass
only walks the plan and rewires. Rules:

* only elementwise ops join a group (vertical fusion);
* a producer joins its reader only when both have the same shape and
  chunks (the group runs over one block grid; external inputs may still
  broadcast, they are read through regions);
* a reduction can close a group: its input (the body) and the body's
  producers fuse into it, so a chain plus a trailing reduction is one pass;
* reductions, matmuls, sorts, rechunks, indexing and sources never join.
"""

from __future__ import annotations

from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Elementwise, Reduce

__all__ = ["can_join", "is_group_op", "may_root"]


def is_group_op(e: Expr) -> bool:
    """An op that can be a non-root member of a fused group."""
    return isinstance(e.op, Elementwise)


def may_root(e: Expr) -> bool:
    """An op that can close a fused group (elementwise or a reduction)."""
    return isinstance(e.op, (Elementwise, Reduce))


def can_join(producer: Expr, reader: Expr) -> tuple[bool, str]:
    """Whether ``producer`` can be computed inside ``reader``'s stage, and why not."""
    if not is_group_op(producer):
        return False, f"{producer.op.label()} is not elementwise"
    if isinstance(reader.op, Reduce):
        return True, ""
    if not isinstance(reader.op, Elementwise):
        return False, f"its reader {reader.op.label()} is not fusible"
    if producer.shape != reader.shape:
        return False, f"shape {producer.shape} is broadcast to {reader.shape}"
    if producer.chunks != reader.chunks:
        return False, "its chunks differ from its reader's"
    return True, ""
