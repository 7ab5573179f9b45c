"""Which members and inputs a generated kernel computes and reads, in a fixed order.

A kernel's text must depend only on the structure of what it computes, not
on node names or keys (those of in-memory arrays differ between processes):
else a new process generates other text for the same group and misses the
kernel compiled on disk. :func:`canonical_order` orders members,
:func:`structure_text` orders the parts of a joint kernel, :func:`slots`
numbers the external inputs by first use. :mod:`lazyarr.kernels.emit`
writes the source from them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from lazyarr.graph.expr import Expr
from lazyarr.graph.token import canonical

__all__ = ["Slot", "canonical_order", "joint_slots", "slots", "structure_text", "union"]


@dataclasses.dataclass(frozen=True)
class Slot:
    """An external input the kernel reads: its stage input position and how to get its region.

    ``member``/``arg``: the member (index in ``members``) that reads it and
    which of that member's inputs it is (its region comes from the member's
    ``regions``); ``member == -1`` for a reduction with an empty body, which
    reads its input over the body block itself.
    """

    position: int
    expr: Expr
    member: int
    arg: int


def slots(members: Sequence[Expr], input_exprs: Sequence[Expr]) -> list[Slot]:
    """The external inputs of a group, in order of first use (deterministic)."""
    first = {e.key: i for i, e in reversed(list(enumerate(input_exprs)))}
    inside = {m.key for m in members}
    seen: dict[str, Slot] = {}
    for j, m in enumerate(members):
        for q, inp in enumerate(m.inputs):
            if inp.key not in inside and inp.key not in seen:
                seen[inp.key] = Slot(first[inp.key], inp, j, q)
    return list(seen.values())


def canonical_order(members: Sequence[Expr], roots: Sequence[Expr]) -> list[Expr]:
    """``members`` in a dependency order that depends only on the expressions' structure.

    A post-order walk from ``roots`` through each member's inputs in order.
    Plans order members by node name, and names of in-memory arrays differ
    between processes: without this, a new process would generate other
    text for the same group and miss the compiled kernel on disk.
    """
    by_key = {m.key: m for m in members}
    out: list[Expr] = []
    seen: set[str] = set()
    for root in roots:
        stack: list[tuple[Expr, bool]] = [(root, False)]
        while stack:
            e, done = stack.pop()
            if done:
                out.append(e)
                continue
            if e.key in seen or e.key not in by_key:
                continue
            seen.add(e.key)
            stack.append((e, True))
            stack.extend((i, False) for i in reversed(e.inputs) if i.key not in seen)
    out += [m for m in members if m.key not in seen]  # not reachable from a root: keep them
    return out


def structure_text(members: Sequence[Expr], root: Expr) -> str:
    """``root`` as text of its ops and constants, inputs from outside ``members`` as dtype+shape.

    Independent of node names and keys (which differ between processes for
    in-memory arrays): callers order the parts of a joint kernel by it, so a
    new process generates the same source and finds the compiled kernel on disk.
    """
    inside = {m.key for m in members} | {root.key}
    texts: dict[str, str] = {}
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:  # iterative post-order: long chains stay within the recursion limit
        e, done = stack.pop()
        if e.key in texts:
            continue
        if e.key not in inside:
            texts[e.key] = f"in[{e.dtype.str}{e.shape}]"
        elif done:
            args = ",".join(texts[i.key] for i in e.inputs)
            texts[e.key] = f"{canonical(e.op)}({args})"
        else:
            stack.append((e, True))
            stack.extend((i, False) for i in e.inputs if i.key not in texts)
    return texts[root.key]


def union(groups: Sequence[Sequence[Expr]], roots: Sequence[Expr]) -> list[Expr]:
    """The members of several groups, each once, in :func:`canonical_order` from ``roots``."""
    members: dict[str, Expr] = {}
    for group in groups:
        for m in group:
            members.setdefault(m.key, m)
    return canonical_order(list(members.values()), roots)


def joint_slots(
    parts: Sequence[tuple[Sequence[Expr], Expr]], input_exprs: Sequence[Expr]
) -> tuple[list[Expr], list[Slot]]:
    """The members of several reductions' bodies (shared ones once) and the inputs they read.

    A body without members reads its reduction's input over the body block
    itself (a slot of member ``-1``), unless another body reads it already.
    """
    combined = union([body for body, _ in parts], [root.inputs[0] for _, root in parts])
    inside = {m.key for m in combined}
    group_slots = slots(combined, input_exprs)
    first = {e.key: i for i, e in reversed(list(enumerate(input_exprs)))}
    for body, root in parts:
        x = root.inputs[0]
        if not body and x.key not in inside and all(g.expr.key != x.key for g in group_slots):
            group_slots.append(Slot(first[x.key], x, -1, 0))
    return combined, group_slots
