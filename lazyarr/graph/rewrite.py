"""Rebuilding expression graphs with some leaves swapped out.

Used where a caller must hand an expression over without what some
sources hold (blocks persisted on a cluster fetched locally, or emptied
for a record), keeping every other node, and its key, as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lazyarr.graph.expr import Expr

__all__ = ["swap_leaves"]


def swap_leaves(
    roots: Sequence[Expr], swap: Callable[[Expr], Expr | None], memo: dict[int, Expr] | None = None
) -> list[Expr]:
    """``roots`` with every leaf for which ``swap`` returns an expression replaced by it.

    Nodes whose inputs are unchanged come back as the same objects. ``memo``
    (by ``id``) may be shared between calls so common subgraphs are rebuilt once.
    """
    memo = {} if memo is None else memo
    for root in roots:
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:  # iterative post-order: deep chains stay within the recursion limit
            e, ready = stack.pop()
            if id(e) in memo:
                continue
            if not e.inputs:
                new = swap(e)
                memo[id(e)] = e if new is None else new
            elif not ready:
                stack.append((e, True))
                stack.extend((i, False) for i in e.inputs if id(i) not in memo)
            else:
                inputs = tuple(memo[id(i)] for i in e.inputs)
                same = all(a is b for a, b in zip(inputs, e.inputs))
                memo[id(e)] = e if same else Expr(e.op, inputs, e.shape, e.dtype, e.chunks)
    return [memo[id(r)] for r in roots]
