"""Slice pushdown: a basic index moves below the ops that commute with it, into sources.

``(x * 2 + 1)[5]`` becomes ``x[5] * 2 + 1``, and ``x[5]`` of a generated
source (``la.random``, ``arange``, ``ones``, ``linspace``, ``eye``) becomes
that source with a :class:`~lazyarr.graph.window.Window`: it makes only the
indexed elements, with the values the whole array has there. An in-memory
source becomes a view of the indexed elements. So a peek at a 100 GB
virtual array costs what the peek's own elements cost, not a block's.

Rules, for a *basic* index (integers and slices; ``None`` and array indices
stay where they are):

* elementwise ops (ufuncs, ``astype``, ``where``, ``clip``...): each operand
  gets the index of its own axes (a broadcast axis of size one keeps its
  only element, missing leading axes drop their entries);
* transposes: the input is indexed on its own axes, then what is left is permuted;
* a basic index of a basic index: the two compose into one;
* generated sources and readers take a window; in-memory sources take a view.

Every rewritten index keeps its shape, dtype and chunks, so nothing
downstream changes. Without this pass results are the same; culling in the
lowering still skips blocks no output needs, only whole blocks are made.
``plan.notes["pushdown"]``: per pushed index, where it went.
"""

from __future__ import annotations

import dataclasses

from lazyarr.graph.build import build
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import Elementwise, FromArray
from lazyarr.graph.ops.creation import Windowed
from lazyarr.graph.ops.indexing import GetItem, getitem
from lazyarr.graph.ops.manipulation import Transpose, permute_dims
from lazyarr.graph.rewrite import rebuild
from lazyarr.graph.token import ArrayData
from lazyarr.graph.window import BasicIndex, Window, as_slices
from lazyarr.optimize.context import PassContext
from lazyarr.optimize.plan import Plan

__all__ = ["basic_index", "push", "run"]

MAX_DEPTH = 200
"""Ops an index moves through at most (deeper chains keep the rest as it is)."""


def basic_index(op: object) -> BasicIndex | None:
    """A getitem's index as one ``int`` or ``range`` per input axis, if it is basic."""
    if not isinstance(op, GetItem) or op.virtual:
        return None
    out: list[int | range] = []
    for e in op.entries:
        if isinstance(e, slice):
            out.append(range(e.start, e.stop, e.step))
        elif isinstance(e, int):
            out.append(e)
        else:  # None (new axis) or an array index
            return None
    return tuple(out)


def _compose(inner: BasicIndex, outer: BasicIndex) -> BasicIndex:
    """``x[inner][outer]`` as one index of ``x``."""
    it = iter(outer)
    out: list[int | range] = []
    for r in inner:
        if isinstance(r, int):
            out.append(r)
            continue
        e = next(it)
        if isinstance(e, int):
            out.append(r.start + r.step * e)
        else:
            start, step = r.start + r.step * e.start, r.step * e.step
            out.append(range(start, start + step * len(e), step))
    return tuple(out)


def _operand_index(
    index: BasicIndex, shape: tuple[int, ...], operand: tuple[int, ...]
) -> BasicIndex:
    """The entries of ``index`` (for ``shape``) that apply to a broadcast operand."""
    lead = len(shape) - len(operand)
    out: list[int | range] = []
    for d, n in enumerate(operand):
        entry = index[lead + d]
        if n == 1 and shape[lead + d] != 1:  # broadcast: its only element
            entry = 0 if isinstance(entry, int) else range(0, 1)
        out.append(entry)
    return tuple(out)


class _Pusher:
    """Pushes basic indices down, remembering each result (shared subgraphs stay shared)."""

    def __init__(self) -> None:
        self.memo: dict[str, Expr] = {}
        self.notes: dict[str, str] = {}

    def pushed(self, e: Expr, depth: int = 0) -> Expr:
        """``e`` (a getitem) with its index pushed as far down as it goes."""
        done = self.memo.get(e.key)
        if done is not None:
            return done
        index = basic_index(e.op)
        new = None
        if index is not None and depth < MAX_DEPTH:
            new = self._into(e.inputs[0], index, e, depth)
        result = e if new is None else new
        self.memo[e.key] = result
        return result

    def _into(self, x: Expr, index: BasicIndex, e: Expr, depth: int) -> Expr | None:
        """``x[index]`` (shape, dtype and chunks of ``e``) without the getitem, or None."""
        op = x.op
        if isinstance(op, Windowed):
            window = (op.window or Window.whole(x.shape)).then(index)
            new = Expr(dataclasses.replace(op, window=window), (), e.shape, e.dtype, e.chunks)
            self.notes[new.name] = f"{e.name}: {op.label()} makes only the indexed elements"
            return new
        if isinstance(op, FromArray):
            where = (*as_slices(index), Ellipsis)  # Ellipsis: a 0-d view, not a scalar
            data = ArrayData(op.data.array[where], f"{op.data.token}{list(as_slices(index))}")
            new = Expr(FromArray(data=data), (), e.shape, e.dtype, e.chunks)
            self.notes[new.name] = f"{e.name}: a view of the indexed elements"
            return new
        if isinstance(op, GetItem):
            inner = basic_index(op)
            if inner is None:
                return None
            g = getitem(x.inputs[0], as_slices(_compose(inner, index)))
            if g.shape != e.shape or g.chunks != e.chunks:
                return None
            return self.pushed(g, depth + 1) if isinstance(g.op, GetItem) else g
        if isinstance(op, Transpose):  # index the input's axes, then permute what is left
            y = x.inputs[0]
            yidx: list[int | range] = [0] * y.ndim
            for i, a in enumerate(op.axes):
                yidx[a] = index[i]
            g = getitem(y, as_slices(tuple(yidx)))
            rank = {
                a: r for r, a in enumerate(a for a in range(y.ndim) if isinstance(yidx[a], range))
            }
            perm = [rank[a] for a, entry in zip(op.axes, index) if isinstance(entry, range)]
            inner = self.pushed(g, depth + 1) if isinstance(g.op, GetItem) else g
            new = permute_dims(inner, perm)
            return new if (new.shape, new.chunks) == (e.shape, e.chunks) else None
        if isinstance(op, Elementwise):
            inputs = []
            for inp in x.inputs:
                g = getitem(inp, as_slices(_operand_index(index, x.shape, inp.shape)))
                inputs.append(self.pushed(g, depth + 1) if g is not inp else g)
            return Expr(op, tuple(inputs), e.shape, e.dtype, e.chunks)
        return None


def push(roots: list[Expr]) -> tuple[list[Expr], dict[str, str]]:
    """``roots`` with every basic index pushed down, and a note per push."""
    pusher = _Pusher()
    new = rebuild(roots, lambda e: pusher.pushed(e) if isinstance(e.op, GetItem) else None)
    return new, pusher.notes


def run(plan: Plan, ctx: PassContext) -> Plan:
    roots = [plan.stages[o].expr for o in plan.outputs]
    new, notes = push(roots)
    if all(a is b for a, b in zip(new, roots)):
        return plan
    out = Plan.from_graph(build(new)).replace(history=plan.history, notes=dict(plan.notes))
    out.notes["pushdown"] = dict(sorted(notes.items()))
    return out
