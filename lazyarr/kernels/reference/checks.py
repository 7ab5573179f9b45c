"""What user functions and readers return, checked against what the expression declared.

A block of the wrong shape or kind is an error naming who made it, the
block and both shapes (never reshaped or cast into place), and an error
raised by user code carries a note naming the block it was computing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.chunks import Chunks
from lazyarr.graph.expr import Region
from lazyarr.graph.ops.userfunc import block_index

__all__ = ["block_name", "called", "checked"]


def block_name(chunks: Chunks, region: Region) -> str:
    """``block (i, j)`` when ``region`` is one block of ``chunks``, else its slices."""
    try:
        return f"block {block_index(chunks, region, '')}"
    except ValueError:
        return "region [" + ", ".join(f"{s.start}:{s.stop}" for s in region) + "]"


def called(fn: Callable[..., Any], what: str, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``; an exception it raises gets the note ``while <what>``."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        e.add_note(f"while {what}")
        raise


def checked(
    result: Any, shape: Sequence[int], dtype: np.dtype, who: str, block: str, hint: str = ""
) -> np.ndarray:
    """``result`` as an array of ``shape`` and a dtype castable to ``dtype`` (same kind),
    else ``ValueError`` naming ``who``, ``block`` and both shapes or dtypes."""
    arr = np.asarray(result)
    want = tuple(shape)
    if arr.shape != want and not (arr.ndim == 0 and int(np.prod(want)) == 1):
        raise ValueError(
            f"{who}: returned a block of shape {arr.shape} for {block} where {want} was "
            f"expected{hint}"
        )
    if not np.can_cast(arr.dtype, dtype, casting="same_kind"):
        raise ValueError(
            f"{who}: returned dtype {arr.dtype} for {block} where {np.dtype(dtype)} was declared"
        )
    return arr.reshape(want) if arr.ndim == 0 else arr
