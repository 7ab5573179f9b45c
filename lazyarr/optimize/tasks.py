"""Typed block tasks: what the lowering of a plan hands every executor.

A :class:`TaskGraph` lists :class:`Task` objects in an order where every
task comes after the tasks it reads (task ids are list positions), plus,
per stage, which task produces each block. Executors only *run* it: the
numba executor on its threads, the dask executor as one Dask graph, the
numpy executor one task after another. The per-kind computation of a task
lives with the executors (``executors/blockwork.py``), the kernels with
``kernels``; nothing here runs anything.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
from collections import Counter
from collections.abc import Iterator, Sequence

import numpy as np

from lazyarr.graph.chunks import blocks_in_range
from lazyarr.graph.expr import Region
from lazyarr.optimize.plan import Plan, Stage

__all__ = [
    "BLOCK",
    "COMBINE",
    "FINALIZE",
    "JOINT",
    "PARTIAL",
    "PRODUCT",
    "SOURCE",
    "Schedule",
    "Task",
    "TaskGraph",
    "TaskKind",
]


class TaskKind(enum.IntEnum):
    """What a task computes."""

    SOURCE = 0
    """A block of a source stage, from its region alone (generated, read, or a slice)."""
    BLOCK = 1
    """A whole block of a map stage, from the input blocks it reads."""
    PARTIAL = 2
    """The partial state of a reduction over one block of its body."""
    PRODUCT = 3
    """A contraction's partial product over one range of its summed axes."""
    COMBINE = 4
    """Two partial states (or partial products) into one."""
    FINALIZE = 5
    """One or more partial states (products) combined, as the block (a reduction finalized)."""
    JOINT = 6
    """One block (map) or one body block's partials (reduce) of several sibling stages."""


# The kinds as module names too: executors' per-task paths compare them without looking
# them up on the enum class each time (``from lazyarr.optimize.tasks import PARTIAL``).
SOURCE = TaskKind.SOURCE
BLOCK = TaskKind.BLOCK
PARTIAL = TaskKind.PARTIAL
PRODUCT = TaskKind.PRODUCT
COMBINE = TaskKind.COMBINE
FINALIZE = TaskKind.FINALIZE
JOINT = TaskKind.JOINT


class Task:
    """One unit of work: a block, a partial, a product, a combine step.

    ``deps`` are the ids of the tasks whose values it reads, in order;
    ``slots`` (None for most tasks) picks value ``slots[k]`` out of a joint
    task's tuple for dependency ``k`` (-1: the whole value). Tasks that read
    input blocks (``SOURCE`` reads none) name them in ``inputs``, aligned
    with ``deps``: ``(input position, block index)`` of the stage's inputs
    (for ``JOINT`` tasks, positions in :attr:`TaskGraph.joint_inputs`).
    ``region`` is what the task computes: the output block's region, or the
    body block's for a reduction partial. ``regions``: a partial product's
    region of each contraction input. ``worker``: the planned worker (-1:
    any). ``nbytes``: the estimated size of its value.
    """

    __slots__ = (
        "deps",
        "index",
        "inputs",
        "kind",
        "members",
        "nbytes",
        "part",
        "region",
        "regions",
        "slots",
        "stage",
        "worker",
    )

    def __init__(
        self,
        kind: TaskKind,
        stage: int,
        index: tuple[int, ...],
        region: Region,
        deps: tuple[int, ...] = (),
        inputs: tuple[tuple[int, tuple[int, ...]], ...] | None = None,
        *,
        part: int = -1,
        regions: tuple[Region, ...] | None = None,
        worker: int = -1,
        nbytes: int = 0,
        slots: tuple[int, ...] | None = None,
        members: tuple[int, ...] = (),
    ) -> None:
        self.kind = kind
        self.stage = stage
        self.index = index
        self.region = region
        self.deps = deps
        self.inputs = inputs
        self.part = part
        self.regions = regions
        self.worker = worker
        self.nbytes = nbytes
        self.slots = slots
        self.members = members

    def __getstate__(self) -> tuple:
        return tuple(getattr(self, k) for k in self.__slots__)

    def __setstate__(self, state: tuple) -> None:
        for k, v in zip(self.__slots__, state):
            setattr(self, k, v)

    def __repr__(self) -> str:
        part = "" if self.part < 0 else f" part {self.part}"
        return (
            f"Task({self.kind.name}, stage {self.stage}, block {self.index}{part}, "
            f"{len(self.deps)} deps, worker {self.worker})"
        )


@dataclasses.dataclass
class Schedule:
    """Order facts per task id (made by :mod:`lazyarr.optimize.schedule`, which says what
    each means); empty when nothing asks for order."""

    priority: dict[int, int] = dataclasses.field(default_factory=dict)
    barriers: list[tuple[int, ...]] = dataclasses.field(default_factory=list)
    waits: dict[int, int] = dataclasses.field(default_factory=dict)
    """Task id -> index in ``barriers`` of the tasks it waits for."""
    after: dict[int, int] = dataclasses.field(default_factory=dict)
    """Task id -> the task (same worker) that must finish before it starts."""
    ready: np.ndarray | None = None
    """Per task id, the order a worker takes its ready tasks in (higher first) where no op
    ordered them (``priority`` empty): every executor's default order."""

    def priority_of(self, tid: int) -> int:
        return self.priority.get(tid, 0)


@dataclasses.dataclass
class TaskGraph:
    """The tasks of one plan, in dependency order, and who produces each block.

    ``producers[s]`` is an int64 array shaped like stage ``s``'s block grid:
    the id of the task whose value is that block, -1 for blocks no output
    needs (culled). A stage computed jointly with siblings has its blocks in
    slot ``slot_of[s]`` of its joint tasks' values.
    """

    plan: Plan
    stages: tuple[Stage, ...]
    tasks: list[Task]
    producers: list[np.ndarray]
    outputs: tuple[int, ...]
    slot_of: dict[int, int] = dataclasses.field(default_factory=dict)
    joint_inputs: dict[int, tuple[int, ...]] = dataclasses.field(default_factory=dict)
    """For a joint task's leading stage: the input stages its positions refer to."""
    stage_reads: tuple = ()
    """Each stage's :class:`~lazyarr.optimize.blockreads.StageReads` (its block rules)."""
    in_place: tuple[int, ...] = ()
    """Stages read in place (in-memory sources, generated sources read once): their blocks
    have no tasks; the tasks reading them cut or make the regions they need."""
    regions_computed: int = 0
    """Regions the lowering derived (a structural measure of its cost; linear in blocks)."""
    schedule: Schedule | None = None
    """The order facts the ops ask for (:mod:`lazyarr.optimize.schedule`), set by lowering."""

    def __len__(self) -> int:
        return len(self.tasks)

    @functools.cached_property
    def position(self) -> dict[str, int]:
        return {s.name: i for i, s in enumerate(self.stages)}

    @property
    def nblocks(self) -> int:
        """Blocks the run computes (culled blocks excluded)."""
        return int(sum(int((p >= 0).sum()) for p in self.producers))

    def progress_blocks(self) -> list[int]:
        """Per task, the blocks a progress bar counts for it: a block it makes (a joint task
        makes one per member), or the input blocks a partial reduction or product reads (a
        fused reduction over 120 blocks counts 120, not its one or two tasks). Worked out
        once per graph (executors ask for the total and per task); a copy."""
        return list(self._progress_blocks)

    @functools.cached_property
    def _progress_blocks(self) -> tuple[int, ...]:
        weights = [0] * len(self.tasks)
        in_parts = set()  # stages whose parts are counted: their finished blocks are not
        one_each = {}  # stage: each partial reads one block of its input (body = input grid)
        parts = (PARTIAL, PRODUCT)
        for tid, task in enumerate(self.tasks):
            if task.kind in parts:
                stage = self.stages[task.stage]
                single = one_each.get(task.stage)
                if single is None:
                    single = one_each[task.stage] = _one_block_per_part(stage)
                weights[tid] = 1 if single else _input_blocks(stage, task.region)
                in_parts.add(task.stage)
        for p in self.producers:
            for tid in p[p >= 0].tolist():
                task = self.tasks[tid]
                if task.kind == JOINT:
                    weights[tid] = len(task.members)
                elif task.stage not in in_parts:
                    weights[tid] = 1
        return tuple(weights)

    def read_in_place(self, stages: Sequence[int]) -> list[bool]:
        """For each of ``stages`` (positions), whether its readers make its values themselves."""
        here = set(self.in_place)
        return [s in here for s in stages]

    def inputs_in_place(self, stage: int) -> list[bool]:
        """For each input position of stage ``stage``, whether it is read in place."""
        position = self.position
        return self.read_in_place([position[n] for n in self.stages[stage].inputs])

    def block(self, stage: int, index: tuple[int, ...]) -> tuple[int, int]:
        """``(task id, slot)`` of the value of block ``index`` of stage ``stage``."""
        return int(self.producers[stage][index]), self.slot_of.get(stage, -1)

    def blocks_of(self, stage: int) -> Iterator[tuple[tuple[int, ...], int]]:
        """``(block index, task id)`` of every computed block of a stage, in C order."""
        prod = self.producers[stage]
        for index in np.ndindex(*prod.shape):
            tid = int(prod[index])
            if tid >= 0:
                yield index, tid

    def reader_counts(self) -> np.ndarray:
        """For each task, how many dependency entries of other tasks name it."""
        counts = np.zeros(len(self.tasks), dtype=np.int64)
        flat = [d for t in self.tasks for d in t.deps]
        if flat:
            np.add.at(counts, np.asarray(flat, dtype=np.int64), 1)
        return counts

    def kinds(self) -> dict[str, int]:
        """Task counts per kind (for statistics and structural tests)."""
        counts = Counter(t.kind for t in self.tasks)  # names once per kind, not per task
        return {TaskKind(k).name: n for k, n in sorted(counts.items())}

    def stage_tasks(self, names: Sequence[str] | None = None) -> dict[str, int]:
        """Task counts per stage name."""
        out: dict[str, int] = {}
        for t in self.tasks:
            name = self.stages[t.stage].name
            if names is None or name in names:
                out[name] = out.get(name, 0) + 1
        return out


def _one_block_per_part(stage: Stage) -> bool:
    """Each partial of a reduction stage tiles one block of its first input (its body grid
    is that input's grid), so it counts one block."""
    if stage.kind != "reduce":
        return False
    body = stage.expr.op.body_chunks(stage.expr)
    first = next((e for e in stage.input_exprs if e.ndim == len(body) and e.ndim), None)
    return first is not None and first.chunks == body


def _input_blocks(stage: Stage, region: Region) -> int:
    """Blocks of the stage's first input of ``region``'s rank that ``region`` overlaps."""
    for e in stage.input_exprs:
        if e.ndim == len(region) and e.ndim:
            return math.prod(
                len(blocks_in_range(c, s.start, s.stop)) for c, s in zip(e.chunks, region)
            )
    return 1
