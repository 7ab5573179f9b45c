"""A toy distributed run of a placed plan, for checking placement predictions.

:class:`Replay` runs a plan the way a distributed executor would: every
block task on its planned worker, reduction partials and partial products
on their planned workers (``stage.placement.parts``), combine steps
from ``combine_schedule``. A task fetches each input block it does not hold
and keeps the copy, as Dask workers do with replica dropping off. It counts
the bytes each block pulls in, to compare with ``stage.est_bytes``.
"""

from __future__ import annotations

import numpy as np

from lazyarr.executors.blockwork import ReferenceKernels, compute_block, stage_functions
from lazyarr.graph.chunks import block_slices
from lazyarr.kernels.blocks import assemble, blocks_for_region
from lazyarr.kernels.reference import kernel_for
from lazyarr.optimize.placement import (
    combine_schedule,
    contraction_parts,
    host_ids,
    reduce_parts,
)
from lazyarr.optimize.plan import Plan, Stage

__all__ = ["Replay"]


def _nbytes(value) -> int:
    if isinstance(value, tuple):
        return sum(_nbytes(v) for v in value)
    return value.nbytes if isinstance(value, np.ndarray) else 0


class Replay:
    """A toy distributed run of a placed plan that counts the bytes each block pulls in."""

    def __init__(self, plan: Plan, hosts=None):
        self.plan = plan
        self.values: dict = {}
        self.held: dict = {}  # block key -> workers holding a copy
        self.host_of = None if hosts is None else host_ids(hosts)
        self.moved = {n: np.zeros(s.numblocks, dtype=np.int64) for n, s in plan.stages.items()}
        for s in plan.stages.values():
            fns = stage_functions(s, ReferenceKernels())
            for idx in np.ndindex(*s.numblocks):
                self.count = 0
                if (s.placement and s.placement.tree):
                    value = self.tree(s, idx, fns)
                else:
                    value = compute_block(
                        s,
                        idx,
                        lambda p, r, s=s, idx=idx: self.fetch(s, p, r, int(s.worker[idx])),
                        fns,
                    )
                self.values[(s.name, idx)] = value
                self.held[(s.name, idx)] = {int(s.worker[idx])}
                self.moved[s.name][idx] = self.count

    def fetch(self, s: Stage, pos: int, region, at: int):
        name, e = s.inputs[pos], s.input_exprs[pos]
        for b, _ in blocks_for_region(e.chunks, region):
            if at not in self.held[(name, b)]:
                self.count += _nbytes(self.values[(name, b)])
                self.held[(name, b)].add(at)
        return assemble(e.chunks, region, lambda b: self.values[(name, b)])

    def bring(self, slot, at: int):
        value, where = slot
        if at not in where:
            self.count += _nbytes(value)
            where.add(at)
        return value

    def tree(self, s: Stage, idx, fns):
        owner = int(s.worker[idx])
        part_workers = [int(w) for w in s.placement.parts[idx]]
        op, expr = s.expr.op, s.expr
        if s.kind == "reduce":
            rk = kernel_for(op)
            body = expr.inputs[0]
            slots = [
                (
                    fns[0](block_slices(body.chunks, b), lambda p, r, w=w: self.fetch(s, p, r, w)),
                    {w},
                )
                for b, w in zip(reduce_parts(s, idx), part_workers)
            ]

            def combine(a, b):
                return rk.combine(op, a, b)
        else:
            fn, out = kernel_for(op), block_slices(expr.chunks, idx)
            slots = [
                (fn(op, expr, out, *(self.fetch(s, p, r, w) for p, r in enumerate(regions))), {w})
                for regions, w in zip(contraction_parts(s, idx), part_workers)
            ]

            def combine(a, b):
                return a + b

        for left, right, w in combine_schedule(part_workers, owner, self.host_of):
            slots.append((combine(self.bring(slots[left], w), self.bring(slots[right], w)), {w}))
        root = self.bring(slots[-1], owner)
        if s.kind == "reduce":
            return rk.finalize(op, expr, root)
        return root.astype(expr.dtype, copy=False)

    def results(self) -> list[np.ndarray]:
        out = []
        for o in self.plan.outputs:
            e = self.plan.stages[o].expr
            arr = np.empty(e.shape, dtype=e.dtype)
            for idx in np.ndindex(*e.numblocks):
                arr[block_slices(e.chunks, idx)] = self.values[(o, idx)]
            out.append(arr)
        return out
