"""Op builders: one function per array operation.

Every builder checks its arguments with NumPy's exception types, computes
the result's shape, dtype and chunks, and returns a new :class:`Expr`.
Nothing is computed here.
"""

from lazyarr.graph.ops.creation import (
    Arange,
    BlockStore,
    Eye,
    FromArray,
    FromBlocks,
    FromReader,
    Full,
    Linspace,
    Random,
    from_array,
    full,
)
from lazyarr.graph.ops.elementwise import Elementwise, elementwise, fill_template
from lazyarr.graph.ops.rechunk import Rechunk, rechunk
from lazyarr.graph.ops.reduction import Reduce, reduce

__all__ = [
    "Arange",
    "BlockStore",
    "Elementwise",
    "Eye",
    "FromArray",
    "FromBlocks",
    "FromReader",
    "Full",
    "Linspace",
    "Random",
    "Rechunk",
    "Reduce",
    "elementwise",
    "fill_template",
    "from_array",
    "full",
    "rechunk",
    "reduce",
]
