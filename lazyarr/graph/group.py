"""Regions through a fused group: what each member and each external input must cover.

A fused group is a tuple of member expressions in dependency order, the
root last. Computing the root over a region needs each member over some
region and each input outside the group ("external") over some region;
both follow from the ops' ``regions`` rule, walked from the root back.
Members of an elementwise group all cover the root's region; producers
folded into a contraction (a transpose, a slice, a scaled operand) cover
what the contraction reads of them. Kernels, executors and the placement
pass all use these functions, so they agree on what a block reads.
"""

from __future__ import annotations

from collections.abc import Sequence

from lazyarr._lru import LRU
from lazyarr.graph.expr import Expr, Region

__all__ = ["external_reads", "member_regions", "positions", "root_input_regions"]

Read = tuple[int, Region]


def positions(input_exprs: Sequence[Expr]) -> dict[str, int]:
    """The first position of each external input expression, by key."""
    return {e.key: i for i, e in reversed(list(enumerate(input_exprs)))}


def _hull(a: Region | None, b: Region) -> Region:
    """The bounding box of two regions (``a`` may be None: nothing yet)."""
    if a is None:
        return tuple(b)
    return tuple(
        slice(min(x.start, y.start), max(x.stop, y.stop))
        if x.stop > x.start and y.stop > y.start
        else (y if x.stop <= x.start else x)
        for x, y in zip(a, b)
    )


def root_input_regions(members: Sequence[Expr], region: Region) -> tuple[Region, ...]:
    """For the root over ``region``: the region of each of its inputs (the op's rule)."""
    root = members[-1]
    return tuple(tuple(r) for r in root.op.regions(root, region))


def member_regions(members: Sequence[Expr], root_inputs: Sequence[Region]) -> dict[str, Region]:
    """The region each non-root member must cover, given the regions the root reads.

    ``root_inputs``: one region per input of the root (from
    :func:`root_input_regions`, or a contraction's partial-product ranges).
    """
    root = members[-1]
    inside = {m.key for m in members[:-1]}
    need: dict[str, Region] = {}
    for inp, r in zip(root.inputs, root_inputs):
        if inp.key in inside:
            need[inp.key] = _hull(need.get(inp.key), r)
    for m in reversed(members[:-1]):
        r = need.get(m.key)
        if r is None:
            raise ValueError(f"fused member {m.op.label()} is read by no later member")
        for inp, ir in zip(m.inputs, m.op.regions(m, r)):
            if inp.key in inside:
                need[inp.key] = _hull(need.get(inp.key), tuple(ir))
    return need


_READS: LRU[tuple[Read, ...]] = LRU(4096)
"""Groups' external reads kept by (members, inputs, regions): the placement pass and
the executor ask for the same blocks and parts of a plan, and walking the members'
region rules costs tens of microseconds each time."""


def external_reads(
    members: Sequence[Expr],
    input_exprs: Sequence[Expr],
    root_inputs: Sequence[Region],
    need: dict[str, Region] | None = None,
) -> list[Read]:
    """Each (input position, region) the group reads from outside, each once, in order."""
    if need is not None:
        return _external_reads(members, input_exprs, root_inputs, need)
    key = (
        tuple(m.key for m in members),
        tuple(e.key for e in input_exprs),
        tuple(tuple((r.start, r.stop) for r in region) for region in root_inputs),
    )
    found = _READS.get_or_make(
        key,
        lambda: tuple(
            _external_reads(members, input_exprs, root_inputs, member_regions(members, root_inputs))
        ),
    )
    return list(found)


def _external_reads(
    members: Sequence[Expr],
    input_exprs: Sequence[Expr],
    root_inputs: Sequence[Region],
    need: dict[str, Region],
) -> list[Read]:
    inside = {m.key for m in members}
    pos = positions(input_exprs)
    seen: set[tuple] = set()  # slices hash only from Python 3.12
    out: list[Read] = []

    def add(inp: Expr, r: Region) -> None:
        if inp.key in inside:
            return
        key = (pos[inp.key], tuple((s.start, s.stop) for s in r))
        if key not in seen:
            seen.add(key)
            out.append((key[0], tuple(r)))

    for m in members[:-1]:
        for inp, r in zip(m.inputs, m.op.regions(m, need[m.key])):
            add(inp, tuple(r))
    for inp, r in zip(members[-1].inputs, root_inputs):
        add(inp, tuple(r))
    return out
