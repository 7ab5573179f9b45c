"""The reference executor: every block computed with NumPy, one at a time.

It defines the semantics: the other executors must return what it returns.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import numpy as np

from lazyarr.graph.ops import BlockStore
from lazyarr.optimize.plan import Plan

from .base import Progress, RunStats
from .blockwork import ReferenceKernels
from .local import BlockRunner, gather_owned

__all__ = ["NumpyExecutor"]


class NumpyExecutor:
    """Runs plans block by block with NumPy (the reference semantics)."""

    name = "numpy"

    def __init__(self) -> None:
        self.runner = BlockRunner(self.name, ReferenceKernels())

    @property
    def last_stats(self) -> RunStats | None:
        return self.runner.last_stats

    def execute(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[np.ndarray]:
        blocks = self.runner.run(plan, outputs, progress)
        results = []
        for o in outputs:
            results.append(gather_owned(plan.stages[o].expr, blocks[o]))
        return results

    def persist(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[BlockStore]:
        blocks = self.runner.run(plan, outputs, progress)
        stores = []
        for o in outputs:
            # own the data, so a persisted array never aliases a user's array
            kept = {i: b if b.flags.owndata else b.copy() for i, b in blocks[o].items()}
            stores.append(BlockStore(kept, self.name, uuid.uuid4().hex))
        return stores
