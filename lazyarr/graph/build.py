"""Expressions -> a networkx DAG, one node per array op.

Nodes are named ``<op>-<key prefix>``; distinct objects with an equal key
(a repeated subexpression) get ``#1``, ``#2``... suffixes, so the raw graph
shows the repetition and the CSE pass can merge it. Names are assigned in a
deterministic depth-first order from the outputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx

from lazyarr.graph.expr import Expr, reached

__all__ = ["build", "node_name", "user_names"]


def node_name(expr: Expr, copy: int = 0) -> str:
    """The graph node name of ``expr`` (``copy`` > 0 for repeated objects)."""
    return expr.name if copy == 0 else f"{expr.name}#{copy}"


def build(outputs: Sequence[Expr]) -> nx.DiGraph:
    """The DAG of every expression reachable from ``outputs``.

    Node attributes: ``expr``, ``op`` (label), ``shape``, ``dtype``,
    ``chunks``, ``bytes``. Edge attribute ``positions``: the input
    positions of the consumer that read the producer. Graph attribute
    ``outputs``: the node names of ``outputs`` in order.
    """
    g = nx.DiGraph()
    names: dict[int, str] = {}
    copies: dict[str, int] = {}

    def name_of(e: Expr) -> str:
        n = names.get(id(e))
        if n is None:
            k = copies.get(e.key, 0)
            copies[e.key] = k + 1
            n = node_name(e, k)
            names[id(e)] = n
            g.add_node(
                n,
                expr=e,
                op=e.op.label(),
                shape=e.shape,
                dtype=e.dtype,
                chunks=e.chunks,
                bytes=e.nbytes,
            )
        return n

    # iterative post-order DFS so deep chains do not hit the recursion limit
    seen: set[int] = set()
    for out in outputs:
        stack: list[tuple[Expr, bool]] = [(out, False)]
        while stack:
            e, done = stack.pop()
            if done:
                me = name_of(e)
                for pos, inp in enumerate(e.inputs):
                    src = name_of(inp)
                    if g.has_edge(src, me):
                        g.edges[src, me]["positions"].append(pos)
                    else:
                        g.add_edge(src, me, positions=[pos])
                continue
            if id(e) in seen:
                continue
            seen.add(id(e))
            stack.append((e, True))
            for inp in reversed(e.inputs):
                if id(inp) not in seen:
                    stack.append((inp, False))
    g.graph["outputs"] = [name_of(o) for o in outputs]
    return g


def user_names(outputs: Sequence[Expr]) -> dict[str, str]:
    """Expression key -> the user's name (``Expr.user_name``) of every named expression reached.

    Pictures label stages with these; a plan made earlier for equal but
    unnamed expressions (the plan cache) gets them through ``Plan.with_labels``.
    """
    found: dict[str, str] = {}
    for e in reached(outputs):
        if e.user_name:
            found.setdefault(e.key, e.user_name)
    return found
