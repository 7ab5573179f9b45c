"""Expressions -> networkx DAG: one node per op object, edges with positions."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import lazyarr as la
from lazyarr.graph import build
from lazyarr.graph.check import InvariantError, check_graph


def test_one_node_per_op_with_attributes():
    x = la.asarray(np.arange(6.0), chunks=4)
    y = (x + 1).sum()
    g = build([y._expr])
    assert g.number_of_nodes() == 3
    ops = sorted(d["op"] for _, d in g.nodes(data=True))
    assert ops == ["add", "array", "sum"]
    (out,) = g.graph["outputs"]
    assert g.nodes[out]["shape"] == ()
    assert g.nodes[out]["bytes"] == 8
    check_graph(g)


def test_repeated_operand_has_both_positions_on_one_edge():
    x = la.ones(3)
    g = build([(x * x)._expr])
    (edge,) = g.edges(data=True)
    assert edge[2]["positions"] == [0, 1]


def test_equal_but_distinct_objects_are_distinct_nodes():
    a = la.ones(3) + 1
    b = la.ones(3) + 1
    g = build([(a * b)._expr])
    # ones, ones#1, add, add#1, multiply: CSE (a pass) merges them later
    assert g.number_of_nodes() == 5
    assert any(n.endswith("#1") for n in g)


def test_names_are_deterministic():
    def make():
        x = la.asarray(np.arange(4.0), chunks=2, copy=True)  # owned: keyed by content
        return build([(x + x * 2).sum()._expr])

    assert sorted(make().nodes) == sorted(make().nodes)


def test_deep_chain_does_not_recurse():
    x = la.ones(4, chunks=2)
    for _ in range(3000):
        x = x + 1
    g = build([x._expr])
    assert g.number_of_nodes() == 3001
    assert nx.is_directed_acyclic_graph(g)


def test_checker_catches_miswired_graph():
    x = la.ones(3)
    g = build([(x + 2)._expr])
    (src, dst) = next(iter(g.edges))
    g.edges[src, dst]["positions"] = [1]
    with pytest.raises(InvariantError):
        check_graph(g)


def test_swap_leaves_rebuilds_only_what_reads_a_swapped_leaf():
    from lazyarr.graph.ops import elementwise, from_array
    from lazyarr.graph.rewrite import swap_leaves

    a = from_array(np.arange(4.0), ((2, 2),))
    b = from_array(np.ones(4), ((2, 2),))
    s = elementwise("add", a, b)
    t = elementwise("exp", b)
    c = from_array(np.zeros(4), ((2, 2),))
    new_s, new_t = swap_leaves([s, t], lambda e: c if e is a else None)
    assert new_t is t  # reads nothing swapped
    assert new_s is not s and new_s.inputs[0] is c and new_s.inputs[1] is b
    assert new_s.key != s.key
