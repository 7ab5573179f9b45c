"""Rebuilding expression graphs with some leaves swapped out, or re-blocked.

:func:`rebuild` rebuilds a graph bottom-up, replacing nodes as it goes (slice
pushdown replaces indices). :func:`swap_leaves` is used where a caller must hand an expression over
without what some sources hold (blocks persisted on a cluster fetched
locally, or emptied for a record), keeping every other node, and its key,
as it is. :func:`rederive` rebuilds one node over inputs that got other
chunks (the ``reblock`` pass), deriving its own chunks again by the op's
chunk rule, for the ops that have one (:func:`follows_inputs`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lazyarr.graph.chunks import Chunks, broadcast_chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops._reshape import reshape_chunks
from lazyarr.graph.ops.elementwise import Elementwise
from lazyarr.graph.ops.linalg import (
    Einsum,
    Matmul,
    Tensordot,
    einsum_chunks,
    matmul_chunks,
    tensordot_chunks,
)
from lazyarr.graph.ops.manipulation import Reshape, Transpose
from lazyarr.graph.ops.rechunk import Rechunk
from lazyarr.graph.ops.reduction import Reduce, reduce_chunks
from lazyarr.graph.ops.userfunc import UserElementwise

__all__ = ["follows_inputs", "rebuild", "rederive", "swap_leaves"]


def rebuild(
    roots: Sequence[Expr],
    visit: Callable[[Expr], Expr | None],
    memo: dict[int, Expr] | None = None,
) -> list[Expr]:
    """``roots`` rebuilt bottom-up: every node is rebuilt over its rebuilt inputs, then
    replaced by ``visit(node)`` when that returns an expression.

    Nodes whose inputs are unchanged (and that ``visit`` keeps) come back as the
    same objects. ``memo`` (by ``id`` of the original node) may be shared between
    calls so common subgraphs are rebuilt once.
    """
    memo = {} if memo is None else memo
    for root in roots:
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:  # iterative post-order: deep chains stay within the recursion limit
            e, ready = stack.pop()
            if id(e) in memo:
                continue
            if e.inputs and not ready:
                stack.append((e, True))
                stack.extend((i, False) for i in e.inputs if id(i) not in memo)
                continue
            inputs = tuple(memo[id(i)] for i in e.inputs)
            same = all(a is b for a, b in zip(inputs, e.inputs))
            node = e if same else Expr(e.op, inputs, e.shape, e.dtype, e.chunks, e.user_name)
            new = visit(node)
            memo[id(e)] = node if new is None else new
    return [memo[id(r)] for r in roots]


def swap_leaves(
    roots: Sequence[Expr], swap: Callable[[Expr], Expr | None], memo: dict[int, Expr] | None = None
) -> list[Expr]:
    """``roots`` with every leaf for which ``swap`` returns an expression replaced by it.

    Nodes whose inputs are unchanged come back as the same objects. ``memo`` (by ``id``)
    may be shared between calls so common subgraphs are rebuilt once.
    """
    return rebuild(roots, lambda e: None if e.inputs else swap(e), memo)


def _elementwise(e: Expr, xs: tuple[Expr, ...]) -> Chunks:
    return broadcast_chunks(e.shape, [(x.shape, x.chunks) for x in xs])


def _matmul(e: Expr, xs: tuple[Expr, ...]) -> Chunks:
    a, b = xs
    nbatch = e.ndim - (a.ndim >= 2) - (b.ndim >= 2)
    return matmul_chunks(a, b, e.shape[:nbatch])


def _tensordot(e: Expr, xs: tuple[Expr, ...]) -> Chunks:
    return tensordot_chunks(*xs, e.op)  # type: ignore[arg-type]


def _einsum(e: Expr, xs: tuple[Expr, ...]) -> Chunks:
    return einsum_chunks(xs, e.op, e.shape)  # type: ignore[arg-type]


def _transpose(e: Expr, xs: tuple[Expr, ...]) -> Chunks:
    return tuple(xs[0].chunks[a] for a in e.op.axes)  # type: ignore[attr-defined]


def _reduce(e: Expr, xs: tuple[Expr, ...]) -> Chunks:
    return reduce_chunks(xs[0].chunks, e.op)  # type: ignore[arg-type]


def _reshape(e: Expr, xs: tuple[Expr, ...]) -> Chunks:
    return reshape_chunks(xs[0].shape, xs[0].chunks, e.shape)


def _kept(e: Expr, xs: tuple[Expr, ...]) -> Chunks:
    return e.chunks


_RULES: dict[type, Callable[[Expr, tuple[Expr, ...]], Chunks]] = {
    Elementwise: _elementwise,
    UserElementwise: _elementwise,
    Matmul: _matmul,
    Tensordot: _tensordot,
    Einsum: _einsum,
    Transpose: _transpose,
    Reduce: _reduce,
    Reshape: _reshape,
    Rechunk: _kept,
}


def follows_inputs(e: Expr) -> bool:
    """True when :func:`rederive` can rebuild ``e`` over inputs with other chunks.

    False for ops whose structure was built for their inputs' block grids
    (scans, sorts, indexing, ...): those must keep the inputs they have.
    """
    return type(e.op) in _RULES


def rederive(e: Expr, inputs: Sequence[Expr]) -> Expr:
    """``e`` over ``inputs`` (same shapes and dtypes), its chunks derived again from theirs.

    Uses each op's own chunk rule (elementwise: the finest input grid;
    matmul/tensordot/einsum: the free axes' grids; reductions: the kept
    axes' grids; rechunk: its given chunks). Raises ``TypeError`` for an op
    without a rule (see :func:`follows_inputs`).
    """
    rule = _RULES.get(type(e.op))
    if rule is None:
        raise TypeError(f"{e.op.name}: no rule to derive its chunks from new inputs")
    xs = tuple(inputs)
    for old, new in zip(e.inputs, xs, strict=True):
        if (old.shape, old.dtype) != (new.shape, new.dtype):
            raise ValueError(
                f"{e.op.name}: input {old.name} {old.shape}/{old.dtype} replaced by "
                f"{new.shape}/{new.dtype}"
            )
    if all(a is b for a, b in zip(xs, e.inputs)):
        return e
    return Expr(e.op, xs, e.shape, e.dtype, rule(e, xs), e.user_name)
