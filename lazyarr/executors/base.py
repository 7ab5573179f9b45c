"""The executor contract and the progress events every executor reports.

``execute(plan, outputs)`` returns one NumPy array per output name;
``persist(plan, outputs)`` returns, per output, the blocks where they were
computed (a :class:`~lazyarr.graph.ops.BlockStore`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from lazyarr.graph.ops import BlockStore
from lazyarr.optimize.lower import lower
from lazyarr.optimize.plan import Plan
from lazyarr.optimize.tasks import TaskGraph

__all__ = [
    "Executor",
    "Lowering",
    "NullProgress",
    "Progress",
    "RunStats",
    "Traits",
    "available_cores",
]


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS has one)."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, n or 1)


class Progress(Protocol):
    """Callbacks an executor calls while it runs a plan."""

    def start(self, total_blocks: int) -> None: ...

    def advance(self, blocks: int = 1) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    """Reports nothing."""

    def start(self, total_blocks: int) -> None:
        pass

    def advance(self, blocks: int = 1) -> None:
        pass

    def finish(self) -> None:
        pass


@dataclasses.dataclass
class RunStats:
    """What one run measured: seconds per stage and blocks computed."""

    executor: str
    seconds: float = 0.0
    stage_seconds: dict[str, float] = dataclasses.field(default_factory=dict)
    blocks: int = 0
    peak_bytes: int = 0
    """The most bytes of blocks the executor held at once (its own accounting)."""
    rss_growth: int | None = None
    """Measured: what the run added to the resident set at its peak, in this process (local
    executors) or in the worker that grew most (dask); None where not measured."""
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Executor-specific measurements (per-worker bytes and memory on Dask)."""


@dataclasses.dataclass(frozen=True)
class Lowering:
    """How an executor's tasks are lowered (the options of :func:`~lazyarr.optimize.lower.lower`,
    declared once so that ``api`` lowers a plan once, for whichever executor runs it)."""

    joint: bool = False
    """Sibling sets as ``JOINT`` tasks (shared inputs read once for all siblings)."""
    in_place: bool = False
    """Arrays in this process, and generated sources each block of which one task reads,
    are read in place by their readers (no task, no stored block)."""
    generate_in_place: bool | None = None
    """Only the generated half of ``in_place`` (executors in other processes); None: as
    ``in_place``."""
    split: bool = False
    """Contractions of fewer blocks than the executor's threads run as separate products."""

    def lower(self, plan: Plan, outputs: Sequence[str], threads: int) -> TaskGraph:
        """The task graph of ``outputs`` of ``plan`` for an executor of ``threads`` threads."""
        return lower(
            plan,
            outputs,
            joint=self.joint,
            in_place=self.in_place,
            split=threads if self.split else 0,
            generate_in_place=self.generate_in_place,
        )


@dataclasses.dataclass(frozen=True)
class Traits:
    """What the planner needs to know of an executor, declared by it (``Executor.traits``)."""

    one_process: bool = True
    """Blocks live in this process (numba, numpy); False: in worker processes (dask)."""
    bounds_in_flight: bool = False
    """Tasks at once are bounded by bytes under ``memory-limit`` (the numba pool): a plan
    needs only one task at a time to fit."""
    scratch_local: bool = True
    """A scratch store under ``temporary-directory`` is on every process's disk (this
    machine, a LocalCluster), so rechunks may be staged through it."""
    lowering: Lowering | None = None
    """How ``api`` lowers plans for it (its ``execute`` and ``persist`` then take the task
    graph as ``graph=``); None: the executor lowers for itself."""


@runtime_checkable
class Executor(Protocol):
    """Runs plans. ``name`` is the registry name.

    ``api`` lowers the plan once (:attr:`Traits.lowering`) and hands the
    executor the task graph as ``graph=``; an executor runs its typed tasks
    (``executors.blockwork.run_task`` computes one).
    Optional members: ``traits`` (a :class:`Traits`; default ``Traits()``),
    ``plan_context() -> dict`` (extra ``PassContext``
    fields such as ``n_workers``, ``workers``, ``hosts``), ``supports(expr)
    -> bool`` (whether its kernels compile an op; the ``fuse`` pass asks),
    ``last_stats`` (the :class:`RunStats` of the latest run) and
    ``differential_tests`` (False for executors too slow for the whole
    differential suite; they run the conformance suite and a sample instead).
    """

    name: str

    def execute(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[np.ndarray]: ...

    def persist(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[BlockStore]: ...
