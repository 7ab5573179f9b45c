"""Running a plan in this process, block by block, with any kernel set.

The reference ``numpy`` executor uses it serially; faster local executors
reuse the same block bookkeeping with their own kernels and a thread pool.
Blocks of a stage are freed as soon as the last stage reading them is done.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from itertools import product
from typing import Any

import numpy as np

from lazyarr.graph.chunks import block_index_iter, block_slices
from lazyarr.graph.expr import Expr
from lazyarr.kernels.blocks import assemble, tree_combine
from lazyarr.optimize.plan import Plan, Stage

from .base import NullProgress, Progress, RunStats

__all__ = ["BlockRunner", "gather", "reduce_inputs"]

Blocks = dict[tuple[int, ...], np.ndarray]


def reduce_inputs(expr: Expr, out_index: tuple[int, ...]) -> Iterable[tuple[int, ...]]:
    """The input block indices that a reduction's output block combines."""
    (x,) = expr.inputs
    axes = expr.op.axes
    keep = expr.op.keepdims
    ranges = []
    k = 0
    for ax in range(x.ndim):
        if ax in axes:
            ranges.append(range(x.numblocks[ax]))
            if keep:
                k += 1
        else:
            ranges.append(range(out_index[k], out_index[k] + 1))
            k += 1
    return product(*ranges)


def gather(expr: Expr, blocks: Blocks) -> np.ndarray:
    """One NumPy array from all the blocks of ``expr``."""
    if len(blocks) == 1:
        (only,) = blocks.values()
        return only
    nb = expr.numblocks
    pieces = np.empty(nb, dtype=object)
    for idx, b in blocks.items():
        pieces[idx] = b
    return np.block(pieces.tolist())


class BlockRunner:
    """Computes every block of every stage with a given kernel lookup.

    ``kernel_for(stage)`` returns the kernel of a stage (see
    ``kernels.reference.registry`` for the three signatures).
    ``map_blocks(fn, items)`` runs ``fn`` over items (serially by default;
    a thread pool's ``map`` for parallel executors).
    """

    def __init__(
        self,
        name: str,
        kernel_for: Callable[[Stage], Any],
        map_blocks: Callable[[Callable[[Any], Any], list[Any]], Iterable[Any]] | None = None,
    ) -> None:
        self.name = name
        self.kernel_for = kernel_for
        self.map_blocks = map_blocks or (lambda fn, items: [fn(i) for i in items])
        self.last_stats: RunStats | None = None

    def run(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> dict[str, Blocks]:
        """All blocks of the ``outputs`` stages (others are freed on the way)."""
        progress = progress or NullProgress()
        stats = RunStats(self.name)
        t_start = time.perf_counter()
        readers = plan.readers
        remaining = {n: len(r) for n, r in readers.items()}
        keep = set(outputs)
        store: dict[str, Blocks] = {}
        progress.start(plan.total_blocks)
        try:
            for name, stage in plan.stages.items():
                t0 = time.perf_counter()
                store[name] = self._run_stage(stage, store, progress)
                stats.stage_seconds[name] = time.perf_counter() - t0
                stats.blocks += stage.nblocks
                for i in dict.fromkeys(stage.inputs):
                    remaining[i] -= 1
                    if remaining[i] == 0 and i not in keep:
                        del store[i]
        finally:
            progress.finish()
        stats.seconds = time.perf_counter() - t_start
        self.last_stats = stats
        return {o: store[o] for o in outputs}

    def _run_stage(self, stage: Stage, store: dict[str, Blocks], progress: Progress) -> Blocks:
        expr = stage.expr
        kernel = self.kernel_for(stage)
        kind = stage.kind
        indices = list(block_index_iter(expr.numblocks))
        inputs = [(plan_in, store[plan_in]) for plan_in in stage.inputs]
        in_exprs = expr.inputs

        if kind == "source":

            def one(index: tuple[int, ...]) -> np.ndarray:
                return kernel(expr.op, expr, block_slices(expr.chunks, index))

        elif kind == "map":

            def one(index: tuple[int, ...]) -> np.ndarray:
                out = block_slices(expr.chunks, index)
                regions = expr.op.regions(expr, out)
                arrays = [
                    assemble(e.chunks, r, blocks.__getitem__)
                    for e, r, (_, blocks) in zip(in_exprs, regions, inputs)
                ]
                return kernel(expr.op, expr, out, *arrays)

        elif kind == "reduce":
            (x,) = in_exprs
            blocks_in = inputs[0][1]

            def one(index: tuple[int, ...]) -> np.ndarray:
                parts = [
                    kernel.partial(expr.op, expr, blocks_in[i], block_slices(x.chunks, i), x.shape)
                    for i in reduce_inputs(expr, index)
                ]
                state = tree_combine(parts, lambda a, b: kernel.combine(expr.op, a, b))
                return kernel.finalize(expr.op, expr, state)

        else:
            raise NotImplementedError(f"stage kind {kind!r} is not supported by {self.name}")

        def run_one(index: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
            block = one(index)
            progress.advance(1)
            return index, block

        return dict(self.map_blocks(run_one, indices))
