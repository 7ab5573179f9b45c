"""The ``reblock`` pass: block shapes chosen for the cluster, for generated sources.

``chunks="auto"`` is decided when an expression is written, before any
executor is known. Generated sources (random with a seed, zeros, ones,
full, arange, linspace, eye: :class:`~lazyarr.graph.ops.creation.Generated`)
have values that do not depend on their blocks, so when the user left their
chunks to lazyarr (``op.auto_chunks``) and the plan runs on several workers,
this pass gives them NumS's block shapes instead
(:func:`~lazyarr.optimize.placement.layout.suggest_chunks`: about
``placement.blocks-per-worker`` blocks per worker, never blocks over
``array.chunk-size``, one block size per axis length across the whole plan
so matmul and elementwise operands align). Sources under
``placement.reblock-min-bytes`` keep their blocks.

Every stage downstream is rebuilt over the new inputs with its chunks
derived again by its op's own rule (:func:`~lazyarr.graph.rewrite.rederive`);
stage names stay. A rechunk keeps its given chunks (what follows it is
unchanged). When a changed grid would reach an op without such a rule
(scans, sorts, indexing, ...: their structure was built for their input's
grid), the sources behind it keep their blocks. Values never change.

Runs first (before ``cse`` and ``fuse``: stage grids depend on chunks) and
only when ``ctx.n_workers > 1`` (executors with workers: Dask; the local
executors report none). ``plan.notes["reblock"]``: per source stage, what
was done and why.
"""

from __future__ import annotations

from lazyarr.graph.chunks import Chunks
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops.creation import Generated
from lazyarr.graph.rewrite import follows_inputs, rederive
from lazyarr.optimize.context import PassContext
from lazyarr.optimize.placement.layout import suggest_chunks
from lazyarr.optimize.plan import Plan

__all__ = ["describe_chunks", "run"]


def describe_chunks(chunks: Chunks) -> str:
    """A short text of a block grid: ``(2x2000, 2x2000)``, ``(3x1334+1332)``."""
    parts = []
    for c in chunks:
        if len(c) == 1:
            parts.append(str(c[0]))
        elif len(set(c[:-1])) == 1 and c[-1] <= c[0]:
            body = f"{len(c) - 1}x{c[0]}" if len(c) > 2 else str(c[0])
            parts.append(f"{len(c)}x{c[0]}" if c[-1] == c[0] else f"{body}+{c[-1]}")
        else:
            parts.append("+".join(map(str, c)))
    return "(" + ", ".join(parts) + ")"


def _candidates(plan: Plan, min_bytes: int) -> list[str]:
    """Auto-chunked generated source stages worth re-blocking, largest first."""
    out = []
    for name, s in plan.stages.items():
        op = s.expr.op
        if (
            len(s.members) == 1
            and isinstance(op, Generated)
            and op.auto_chunks
            and s.expr.size > 0
            and s.expr.nbytes >= min_bytes
        ):
            out.append(name)
    return sorted(out, key=lambda n: (-plan.stages[n].expr.nbytes, n))


def _propagate(
    plan: Plan, chunks: dict[str, Chunks]
) -> tuple[dict[str, Expr], tuple[str, frozenset[str]] | None]:
    """New expressions of every stage that changes, or the first stage that cannot follow.

    ``chunks``: new chunks of source stages. On a conflict returns the stage
    whose op has no chunk rule and the sources whose grids reached it.
    """
    new: dict[str, Expr] = {}
    origin: dict[str, frozenset[str]] = {}
    for name, s in plan.stages.items():
        e = s.expr
        if name in chunks:
            new[name] = Expr(e.op, (), e.shape, e.dtype, chunks[name])
            origin[name] = frozenset((name,))
            continue
        if not any(i in new for i in s.inputs):
            continue
        src = frozenset().union(*(origin[i] for i in s.inputs if i in origin))
        if len(s.members) != 1:
            return new, (name, src)
        inputs = tuple(new.get(i, x) for i, x in zip(s.inputs, e.inputs, strict=True))
        if all(a.chunks == b.chunks for a, b in zip(inputs, e.inputs)):
            new[name] = Expr(e.op, inputs, e.shape, e.dtype, e.chunks)
        elif follows_inputs(e):
            new[name] = rederive(e, inputs)
        else:
            return new, (name, src)
        origin[name] = src
    return new, None


def run(plan: Plan, ctx: PassContext) -> Plan:
    n = ctx.n_workers
    if n <= 1:
        return plan
    per_worker, min_bytes, max_block = ctx.blocks_per_worker, ctx.reblock_min_bytes, ctx.chunk_size
    todo = _candidates(plan, min_bytes)
    if not todo:
        return plan
    notes: dict[str, str] = {}
    while True:
        memo: dict[int, int] = {}
        chunks: dict[str, Chunks] = {}
        for name in todo:
            e = plan.stages[name].expr
            c = suggest_chunks(e.shape, e.dtype.itemsize, n, per_worker, None, 0, memo, max_block)
            if c != e.chunks:
                chunks[name] = c
            else:
                notes[name] = f"kept {describe_chunks(c)}: already right for {n} workers"
        new, conflict = _propagate(plan, chunks)
        if conflict is None:
            break
        stage, sources = conflict
        op = plan.stages[stage].expr.op.label()
        for src in sources:
            old = describe_chunks(plan.stages[src].expr.chunks)
            notes[src] = f"kept {old}: feeds {op} ({stage}), whose blocks follow its input's"
        todo = [t for t in todo if t not in sources]
    for name, c in chunks.items():
        old = describe_chunks(plan.stages[name].expr.chunks)
        notes[name] = f"rechunked {old} -> {describe_chunks(c)} for {n} workers"
    if not new:
        out = plan.with_stages(dict(plan.stages))
    else:
        stages = {}
        for name, s in plan.stages.items():
            e = new.get(name)
            if e is None:
                stages[name] = s
            else:
                stages[name] = s.replace(expr=e, members=(e,), input_exprs=e.inputs)
        out = plan.with_stages(stages)
    out.notes["reblock"] = dict(sorted(notes.items()))
    return out
