"""Running a plan in this process, block by block, with any kernel set.

The reference ``numpy`` executor uses it serially; faster local executors
reuse the same block bookkeeping with their own kernels and a thread pool.
Blocks of a stage are freed as soon as the last stage reading them is done.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.chunks import block_index_iter
from lazyarr.graph.expr import Expr, Region
from lazyarr.kernels.blocks import assemble
from lazyarr.optimize.plan import Plan, Stage

from .base import NullProgress, Progress, RunStats
from .blockwork import KernelSet, compute_block, stage_functions

__all__ = ["BlockRunner", "gather", "gather_owned"]

Blocks = dict[tuple[int, ...], np.ndarray]


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


def gather_owned(expr: Expr, blocks: Blocks) -> np.ndarray:
    """:func:`gather`, copied when the result is a view or read-only.

    A result never aliases a user's array or a kept block.
    """
    arr = gather(expr, blocks)
    if not arr.flags.owndata or not arr.flags.writeable:
        arr = arr.copy()
    return arr


class BlockRunner:
    """Computes every block of every stage with a given kernel lookup.

    ``kernels`` provides the code per stage (see ``blockwork.KernelSet``).
    ``map_blocks(fn, items)`` runs ``fn`` over items (serially by default;
    a thread pool's ``map`` for parallel executors).
    """

    def __init__(
        self,
        name: str,
        kernels: KernelSet,
        map_blocks: Callable[[Callable[[Any], Any], list[Any]], Iterable[Any]] | None = None,
    ) -> None:
        self.name = name
        self.kernels = kernels
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
        fns = stage_functions(stage, self.kernels)
        sources = [(e.chunks, store[name]) for e, name in zip(stage.input_exprs, stage.inputs)]

        def get_region(pos: int, region: Region) -> np.ndarray:
            chunks, blocks = sources[pos]
            return assemble(chunks, region, blocks.__getitem__)

        def run_one(index: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
            block = compute_block(stage, index, get_region, fns)
            progress.advance(1)
            return index, block

        return dict(self.map_blocks(run_one, list(block_index_iter(stage.numblocks))))
