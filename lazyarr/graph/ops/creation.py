"""Source ops: arrays made from parameters (no inputs).

``FromArray`` wraps user data, ``FromBlocks`` wraps persisted blocks,
``Full``/``Arange``/``Linspace``/``Eye`` are closed forms and ``Random``
draws each element from counter-addressed words of its flat index, so
values do not depend on chunking.
Those last five are :class:`Generated`: their values depend on the op and
the shape only, so a plan may give them other blocks (the ``reblock`` pass
does, for the ones whose chunks the user left to lazyarr: ``auto_chunks``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from lazyarr.graph.chunks import Chunks
from lazyarr.graph.expr import Expr, SourceOp
from lazyarr.graph.token import ArrayData, ByToken
from lazyarr.graph.window import Window

__all__ = [
    "Arange",
    "BlockStore",
    "Eye",
    "FromArray",
    "FromBlocks",
    "FromReader",
    "Full",
    "Generated",
    "Linspace",
    "Random",
    "Windowed",
    "from_array",
    "full",
]


@dataclasses.dataclass(frozen=True)
class FromArray(SourceOp):
    """Blocks are slices of an in-memory NumPy array."""

    name = "array"
    data: ArrayData = None  # type: ignore[assignment]


class BlockStore(ByToken):
    """Blocks an executor kept (``persist``): block index -> block object.

    The objects are whatever the executor that made them understands
    (NumPy arrays locally, futures on a cluster).
    """

    __slots__ = ("blocks", "executor", "token")

    def __init__(self, blocks: dict[tuple[int, ...], Any], executor: str, token: str) -> None:
        self.blocks = blocks
        self.executor = executor
        self.token = token


@dataclasses.dataclass(frozen=True)
class FromBlocks(SourceOp):
    """Blocks computed earlier and kept by an executor."""

    name = "persisted"
    store: BlockStore = None  # type: ignore[assignment]


@dataclasses.dataclass(frozen=True)
class Windowed(SourceOp):
    """A source that makes any region alone, at the cost of that region.

    ``window`` (set by slice pushdown) makes it hold only those elements of
    its full array (of shape ``window.base``); a block of a windowed source
    makes only its own elements. Lowering lets the one task that reads such
    a block make it in place (no stored copy).
    """

    window: Window | None = None


@dataclasses.dataclass(frozen=True)
class FromReader(Windowed):
    """Blocks are read from stored data (zarr, HDF5, ``.npy``, any array-like) when they run.

    ``reader`` has ``shape``, ``dtype``, a ``token`` (its identity in keys)
    and ``read(slices)``; see :mod:`lazyarr.io.readers`.
    """

    name = "read"
    reader: Any = None
    auto_chunks: bool = False
    """The blocks were lazyarr's choice (whole multiples of the stored chunks), not the
    user's: planning may choose other multiples for a cluster (part of the key)."""

    def label(self) -> str:
        return "read"


@dataclasses.dataclass(frozen=True)
class Generated(Windowed):
    """A source whose values depend on its parameters and shape, never on its chunks.

    ``auto_chunks`` records that the chunks were lazyarr's choice (``"auto"``),
    not the user's, so planning may re-block it for the cluster. It is part
    of the key: an auto-chunked array and one with the same chunks given
    explicitly are different expressions (their plans may differ).
    """

    auto_chunks: bool = False


@dataclasses.dataclass(frozen=True)
class Full(Generated):
    """Every element equals ``value``."""

    name = "full"
    value: Any = 0


@dataclasses.dataclass(frozen=True)
class Arange(Generated):
    """``start + i * step`` along the single axis."""

    name = "arange"
    start: Any = 0
    step: Any = 1


@dataclasses.dataclass(frozen=True)
class Linspace(Generated):
    """Evenly spaced samples between ``start`` and ``stop`` (NumPy's formula)."""

    name = "linspace"
    start: Any = 0.0
    stop: Any = 1.0
    num: int = 50
    endpoint: bool = True


@dataclasses.dataclass(frozen=True)
class Eye(Generated):
    """Ones on the ``k``-th diagonal of a 2-D array, zeros elsewhere."""

    name = "eye"
    k: int = 0


@dataclasses.dataclass(frozen=True)
class Random(Generated):
    """Random draws of ``dist`` with ``args``, each element from its own position.

    The element at flat index ``i`` is a function of ``(seed, i)`` only
    (Philox words at position ``i``): any block is drawn alone, at the cost
    of its own size, and gives the same values in every chunking.
    """

    name = "random"
    dist: str = "random"
    seed: int = 0
    args: tuple = ()

    def label(self) -> str:
        return f"random.{self.dist}"


def from_array(array: np.ndarray, chunks: Chunks, token: str | None = None) -> Expr:
    """A source over an in-memory array (not copied)."""
    return Expr(FromArray(data=ArrayData(array, token)), (), array.shape, array.dtype, chunks)


def full(
    shape: tuple[int, ...], value: Any, dtype: np.dtype, chunks: Chunks, auto_chunks: bool = False
) -> Expr:
    """An array of ``shape`` filled with ``value`` cast to ``dtype``."""
    with np.errstate(all="ignore"):
        np.full((), value, dtype=dtype)  # NumPy's errors for impossible values
    return Expr(Full(value=value, auto_chunks=auto_chunks), (), shape, dtype, chunks)
