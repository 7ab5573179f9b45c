"""The immutable expression node and the op base classes.

An :class:`Expr` is one array-level operation: its typed op payload, its
input nodes, and the facts every later level needs (shape, dtype, chunks).
Its ``key`` is a structural hash, so equal expressions have equal keys.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterator, Sequence
from typing import ClassVar

import numpy as np

from lazyarr.graph.token import canonical, digest

__all__ = ["Expr", "Op", "SourceOp", "MapOp", "ReduceOp", "Region", "op_types", "reached"]

Region = tuple[slice, ...]
"""A bounding box of an array in global coordinates: one step-1 slice per axis."""

_OP_TYPES: dict[str, type[Op]] = {}


def op_types() -> dict[str, type[Op]]:
    """Every op payload class by name (used to read plans back from JSON)."""
    return dict(_OP_TYPES)


@dataclasses.dataclass(frozen=True)
class Op:
    """Typed parameters of one array operation.

    Subclasses are frozen dataclasses; ``kind`` tells executors how the
    blocks of the op's output depend on its inputs:

    * ``source``: a block is computed from the op alone (no inputs);
    * ``map``: a block is computed from one bounding region of each input
      (see :meth:`MapOp.regions`);
    * ``reduce``: a tree reduction over the blocks along ``axes``.
    """

    kind: ClassVar[str] = "abstract"
    name: ClassVar[str] = "op"

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        fields = {n for n, a in inspect.get_annotations(cls).items() if "ClassVar" not in str(a)}
        clash = {"kind", "name"} & fields
        if clash:
            raise TypeError(
                f"{cls.__name__}: a parameter field may not be called {sorted(clash)} "
                "(they are the op's class attributes)"
            )
        if "name" in cls.__dict__:
            _OP_TYPES[cls.name] = cls

    def label(self) -> str:
        """A short human label used by reprs and plan pictures."""
        return self.name


@dataclasses.dataclass(frozen=True)
class SourceOp(Op):
    """An op whose blocks are made from its parameters alone."""

    kind: ClassVar[str] = "source"


@dataclasses.dataclass(frozen=True)
class MapOp(Op):
    """An op whose output block reads one bounding region of each input."""

    kind: ClassVar[str] = "map"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        """The region of each input needed to compute the block ``out``."""
        raise NotImplementedError(f"{type(self).__name__} does not define regions()")


@dataclasses.dataclass(frozen=True)
class ReduceOp(Op):
    """A reduction of the single input over ``axes`` (a tree over blocks)."""

    kind: ClassVar[str] = "reduce"
    axes: tuple[int, ...] = ()
    keepdims: bool = False
    split_every: int = 0
    """How many partial states one combine step of a cluster's tree joins (dask's
    ``split_every``); 0: the placement's own fan-in."""

    def body_chunks(self, expr: Expr) -> tuple[tuple[int, ...], ...]:
        """The block grid the partials tile: the first input's chunks.

        An op whose partials read more than one block of one input (see
        :meth:`partial_regions`) tiles a grid of its own.
        """
        return expr.inputs[0].chunks

    fuses_body: ClassVar[bool] = False
    """Whether elementwise ops before it may be computed inside its partials (a fused
    group with this op as root): each partial then gets its body block computed, not read."""

    gathers: ClassVar[bool] = False
    """Whether a combined state is as big as its parts together (the parts are kept, not
    folded): then states are combined once per worker and once on the block's owner, never
    passed along a tree (``optimize/placement/planner.py``)."""
    own_partials: ClassVar[bool] = False
    """Whether the partials read :meth:`partial_regions` (else: their body block of input 0)."""
    partials_wait_for: ClassVar[int | None] = None
    """An input (position; -1 the last) every block of which all partials wait for, so a
    worker cuts its body blocks one after another once that input is complete (instead of
    holding pieces of every body block as its blocks arrive). None: no such barrier."""
    serial_finalizes: ClassVar[bool] = False
    """Finalizes run one at a time on each worker, in block order: each gathers the slices
    of its block from every worker, and the next block's are fetched only once it is done."""

    def partial_regions(self, expr: Expr, body: Region) -> tuple[Region, ...]:
        """The region of each input the partial of body region ``body`` reads."""
        return (body,)

    def state_itemsize(self, body: Expr, out: Expr) -> int:
        """Bytes per kept element of one partial state (an estimate for the planners):
        by default one value of the output's dtype."""
        return out.dtype.itemsize

    def partial_nbytes(self, expr: Expr, body_sizes: np.ndarray) -> np.ndarray:
        """Estimated bytes of each partial state, from the body blocks' element counts.

        Asked only of ops with ``own_partials``; the others' states follow
        their kept axes (``optimize/blockreads.py``).
        """
        raise NotImplementedError(f"{type(self).__name__} does not estimate its partials")


class Expr:
    """One immutable array expression node with a structural ``key``."""

    __slots__ = ("_hash", "chunks", "dtype", "inputs", "key", "op", "shape", "user_name")

    op: Op
    inputs: tuple[Expr, ...]
    shape: tuple[int, ...]
    dtype: np.dtype
    chunks: tuple[tuple[int, ...], ...]
    key: str
    user_name: str | None
    """What the user called this array (``x.rename("z")``, ``name=``); for pictures only.

    Not part of ``key``: a name changes no value, so named and unnamed copies
    share plans and cached kernels.
    """

    def __init__(
        self,
        op: Op,
        inputs: Sequence[Expr],
        shape: Sequence[int],
        dtype: np.dtype | type | str,
        chunks: Sequence[Sequence[int]],
        user_name: str | None = None,
    ) -> None:
        shape = tuple(int(s) for s in shape)
        chunks = tuple(tuple(int(c) for c in cs) for cs in chunks)
        dtype = np.dtype(dtype)
        if len(chunks) != len(shape) or any(sum(c) != s for c, s in zip(chunks, shape)):
            raise ValueError(f"chunks {chunks} do not match shape {shape} in {op.name}")
        set_ = object.__setattr__
        set_(self, "op", op)
        set_(self, "inputs", tuple(inputs))
        set_(self, "shape", shape)
        set_(self, "dtype", dtype)
        set_(self, "chunks", chunks)
        key = digest(
            canonical(op),
            ",".join(i.key for i in self.inputs),
            repr(shape),
            dtype.str,
            repr(chunks),
        )
        set_(self, "key", key)
        set_(self, "_hash", hash(key))
        set_(self, "user_name", user_name)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Expr is immutable")

    def __reduce__(self) -> tuple:
        # rebuilt through __init__ (keys are recomputed, so they stay consistent)
        return (Expr, (self.op, self.inputs, self.shape, self.dtype, self.chunks, self.user_name))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and other.key == self.key

    def __repr__(self) -> str:
        return (
            f"Expr({self.op.label()}, shape={self.shape}, dtype={self.dtype}, key={self.key[:8]})"
        )

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def numblocks(self) -> tuple[int, ...]:
        return tuple(len(c) for c in self.chunks)

    @property
    def name(self) -> str:
        """A readable, stable identifier: op name plus the start of the key."""
        return f"{self.op.name}-{self.key[:10]}"

    def renamed(self, user_name: str | None) -> Expr:
        """This expression under another user name (same key, same value)."""
        return Expr(self.op, self.inputs, self.shape, self.dtype, self.chunks, user_name)


def reached(roots: Sequence[Expr]) -> Iterator[Expr]:
    """Every expression under ``roots`` (themselves included), each once by identity,
    without recursion (deep chains do not hit the recursion limit); no order promised."""
    seen: set[int] = set()
    stack = list(roots)
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        stack.extend(e.inputs)
