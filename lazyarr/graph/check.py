"""Invariants of graphs and plans, checked after every pass in tests."""

from __future__ import annotations

import networkx as nx

from lazyarr.graph.expr import Expr

__all__ = ["InvariantError", "check_expr", "check_graph"]


class InvariantError(AssertionError):
    """A pass produced a graph or plan that breaks a structural rule."""


def check_expr(e: Expr) -> None:
    """Shape, chunks and inputs of one node agree with each other."""
    if len(e.chunks) != len(e.shape):
        raise InvariantError(f"{e.name}: {len(e.chunks)} chunk axes for shape {e.shape}")
    for ax, (c, n) in enumerate(zip(e.chunks, e.shape)):
        if sum(c) != n or any(b < 0 for b in c) or not c:
            raise InvariantError(f"{e.name}: chunks {c} on axis {ax} do not sum to {n}")
    if e.op.kind == "source" and e.inputs:
        raise InvariantError(f"{e.name}: a source op has inputs")
    if e.op.kind in ("map", "reduce") and not e.inputs and e.op.kind == "reduce":
        raise InvariantError(f"{e.name}: a reduction needs an input")


def check_graph(g: nx.DiGraph) -> None:
    """The DAG is acyclic, every node is valid and edges match node inputs."""
    if not nx.is_directed_acyclic_graph(g):
        raise InvariantError("the expression graph has a cycle")
    for n, data in g.nodes(data=True):
        e: Expr = data["expr"]
        check_expr(e)
        positions = sorted(p for src in g.predecessors(n) for p in g.edges[src, n]["positions"])
        if positions != list(range(len(e.inputs))):
            raise InvariantError(f"{n}: input edges {positions} for {len(e.inputs)} inputs")
        for src in g.predecessors(n):
            for p in g.edges[src, n]["positions"]:
                if g.nodes[src]["expr"].key != e.inputs[p].key:
                    raise InvariantError(f"{n}: input {p} is wired to the wrong node {src}")
    for o in g.graph.get("outputs", []):
        if o not in g:
            raise InvariantError(f"output {o} is not in the graph")
