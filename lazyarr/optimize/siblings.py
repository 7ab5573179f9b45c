"""Horizontal fusion: independent stages that read the same inputs over one block grid.

``x.mean(0)`` and ``x.std(0)``, or ``la.compute(a.sum(), a.max())``, are
separate stages that each read ``x`` (or ``a``) once. When they run over
the same block grid (the same body chunks and reduced axes for
reductions; the same shape and chunks for elementwise stages), share an
input and neither depends on the other, one pass over the shared input
can compute them all. :func:`sibling_groups` finds such sets; the
``fuse`` pass records them in ``plan.siblings`` and executors
that have a joint kernel compute each set's blocks together. Each stage
keeps its own expression, blocks and readers, so an executor that ignores
the note computes the same values.
"""

from __future__ import annotations

from lazyarr.graph.ops import Elementwise, Reduce
from lazyarr.optimize.plan import Plan, Stage

__all__ = ["grid_signature", "sibling_groups"]


def grid_signature(stage: Stage) -> tuple | None:
    """What must match for stages to run in one pass (None: never a sibling)."""
    e = stage.expr
    if isinstance(e.op, Reduce):
        body = e.inputs[0]
        if not all(isinstance(m.op, Elementwise) for m in stage.members[:-1]):
            return None
        return ("reduce", body.shape, body.chunks, e.op.axes, e.numblocks)
    if stage.kind == "map" and all(isinstance(m.op, Elementwise) for m in stage.members):
        return ("map", e.shape, e.chunks)
    return None


def _ancestors(plan: Plan) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for name, s in plan.stages.items():  # topological order
        acc: set[str] = set()
        for i in s.inputs:
            acc.add(i)
            acc |= out[i]
        out[name] = frozenset(acc)
    return out


def sibling_groups(plan: Plan) -> list[list[str]]:
    """Sets of two or more stages that one pass over their shared inputs can compute.

    In plan order, a stage joins every open set with its grid that it shares
    an input with and that holds none of its ancestors or descendants; sets
    it joins are merged (when no member of one depends on a member of the
    other), so the result does not depend on the order stages come in.
    """
    ancestors = _ancestors(plan)

    def related(a: list[str], b: list[str]) -> bool:
        return any(m in ancestors[n] or n in ancestors[m] for m in a for n in b)

    groups: list[tuple[tuple, list[str], set[str]]] = []  # signature, names, their inputs
    for name, s in plan.stages.items():
        sig = grid_signature(s)
        if sig is None or not s.inputs:
            continue
        joined: tuple[tuple, list[str], set[str]] | None = None
        for group in list(groups):
            gsig, names, inputs = group
            if gsig != sig or not inputs & set(s.inputs) or related(names, [name]):
                continue
            if joined is None:
                names.append(name)
                inputs.update(s.inputs)
                joined = group
            elif not related(names, joined[1]):
                joined[1].extend(names)
                joined[2].update(inputs)
                groups.remove(group)
        if joined is None:
            groups.append((sig, [name], set(s.inputs)))
    order = {n: i for i, n in enumerate(plan.stages)}
    return [sorted(names, key=order.get) for _, names, _ in groups if len(names) > 1]
