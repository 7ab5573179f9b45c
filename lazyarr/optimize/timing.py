"""Seconds per stage, predicted from the plan's bytes and flops and the machine's speeds.

The speeds are data (:class:`Costs`): measured once per cluster or process
by a short probe (``executors/calibrate.py``, ``executors/dask_calibrate.py``),
the bandwidth between workers read from Dask's transfer logs after each run;
without them, the constants of :mod:`lazyarr.optimize.cost`. A stage's work
on one worker is

    bytes touched / memory bandwidth + vector flops / flop rate
    + matrix flops / matmul rate

for the share of its blocks placed there (bytes touched: its inputs, each
once, and its output), plus ``call_seconds`` per task (the code around the
kernel, learnt from measured runs: :func:`task_residuals`), plus the bytes
copied into that worker over the network bandwidth. On a cluster
(``span=True``) a stage takes the busiest worker's work over its threads,
or, when longer, the time the scheduler takes to hand out its first tasks
one after another (``task_seconds`` each), plus one scheduler round trip
(``hop_seconds``) per level of its combine tree (a reduction's or split
contraction's parts, combined, then finished on the owner); in one process
it is the time its tasks take summed over threads, as the numba executor
measures it. A generated source whose blocks one task each reads is made
inside that task (the lowering's rule), so its work counts in its reader's
stage. The ``place`` pass weighs bytes moved against bytes held with the
measured bandwidths (:func:`placement_weights`). Pure: no executor, no
config.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Collection, Sequence

import numpy as np

from lazyarr.graph.ops import FromArray, FromBlocks
from lazyarr.graph.ops.creation import Windowed
from lazyarr.optimize.blockreads import StageReads
from lazyarr.optimize.cost import BYTE_NS, CHEAP_NS, MAX_COSTED_BLOCKS, work_flops
from lazyarr.optimize.placement.clustersim import host_ids
from lazyarr.optimize.placement.planner import WEIGHTS, combine_schedule, fan_in, gathers
from lazyarr.optimize.plan import Plan, Stage

__all__ = [
    "DEFAULT_COSTS",
    "DEFAULT_SPEED",
    "MAX_NETWORK_WEIGHT",
    "SMALL_TASK_SECONDS",
    "Costs",
    "Speed",
    "StageWork",
    "hop_residuals",
    "made_in_readers",
    "median_ratio",
    "placement_weights",
    "remake_seconds",
    "stage_seconds",
    "stage_work",
    "task_residuals",
]


@dataclasses.dataclass(frozen=True)
class Speed:
    """What one thread of one worker (or of this process) does per second."""

    memory_bandwidth: float
    """Bytes per second of a large copy (bytes read plus bytes written)."""
    flop_rate: float
    """Cheap floating-point operations per second (a multiply-add loop on cached data)."""
    matmul_rate: float
    """Floating-point operations per second of a matrix product (BLAS)."""

    def __post_init__(self) -> None:
        for name in ("memory_bandwidth", "flop_rate", "matmul_rate"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"Speed.{name} must be a positive finite number, not {value!r}")


DEFAULT_SPEED = Speed(
    memory_bandwidth=1e9 / BYTE_NS, flop_rate=1e9 / CHEAP_NS, matmul_rate=4e9 / CHEAP_NS
)
"""The cost model's constants as speeds (5 GB/s, 3.3 Gflop/s, 13 Gflop/s in BLAS)."""


@dataclasses.dataclass(frozen=True)
class Costs:
    """The speeds the cost model divides by: per worker, and between workers."""

    speeds: tuple[Speed, ...] = (DEFAULT_SPEED,)
    """One per worker (index = worker number, as ``plan.workers``); one for this process."""
    network_bandwidth: float | None = None
    """Bytes per second copied between two workers (None: not measured yet; then the
    memory bandwidth, which weighs bytes moved as the placement search always did)."""
    task_seconds: float = 0.0
    """Seconds the scheduler takes per task it hands out (0: no scheduler, one process)."""
    hop_seconds: float = 0.0
    """Seconds from a task's end to the start of a task that reads it on another worker
    (a scheduler round trip; 0: one process); probed, then learnt from the combine trees
    of measured runs (:func:`hop_residuals`)."""
    call_seconds: float = 0.0
    """Seconds each task takes besides its bytes and flops (the code around the kernel),
    learnt from measured runs (:func:`task_residuals`; 0 until a run was measured)."""
    cores: tuple[int, ...] = ()
    """Per worker (same index): the cores its process may run on (its host's, for a
    cluster on one machine); empty: unknown. More busy threads on one host than it has
    cores share them (:meth:`contention`)."""
    measured: bool = False
    """Whether the speeds come from a probe (False: the cost model's constants)."""

    def speed(self, worker: int) -> Speed:
        """The speeds of worker ``worker`` (the slowest known when it was not probed)."""
        if 0 <= worker < len(self.speeds):
            return self.speeds[worker]
        return self.slowest()

    def slowest(self) -> Speed:
        """Per quantity, the lowest speed over the workers."""
        return Speed(
            min(s.memory_bandwidth for s in self.speeds),
            min(s.flop_rate for s in self.speeds),
            min(s.matmul_rate for s in self.speeds),
        )

    def contention(self, busy: Sequence[int], hosts: Sequence[str], threads: int) -> float:
        """How much slower the first worker of ``busy`` runs when all of ``busy`` work at
        once with ``threads`` each: busy threads on its host over the host's cores (>= 1)."""
        if not busy or not self.cores:
            return 1.0
        w = busy[0]
        cores = self.cores[w] if w < len(self.cores) else 0
        if cores <= 0:
            return 1.0
        host = hosts[w] if w < len(hosts) else None
        same = [v for v in busy if host is not None and v < len(hosts) and hosts[v] == host]
        return max(1.0, max(1, len(same)) * threads / cores)

    def network(self) -> float:
        """Bytes per second between workers (the memory bandwidth until one is measured)."""
        if self.network_bandwidth is not None:
            return self.network_bandwidth
        return self.slowest().memory_bandwidth


DEFAULT_COSTS = Costs()


MAX_NETWORK_WEIGHT = 2.0
"""The most a byte moved weighs against a byte held in the placement search. Its memory row
is also its load balance: at three times the weight a 4-worker rechunk of 3.8 MB went
to one worker (160 kB moved instead of 3.8 MB) on the loopback bandwidth measured from
Dask's logs (latency-bound: 20-100 MB/s for small transfers)."""


def placement_weights(costs: Costs | None) -> tuple[float, float, float]:
    """Weights of (memory, network in, network out) for the placement search's objective.

    A byte held costs the time to touch it, a byte moved the time to send it: the
    network rows weigh ``memory bandwidth / network bandwidth``, at most
    :data:`MAX_NETWORK_WEIGHT`. Without costs, or before the network was measured, the
    search's own default weights.
    """
    if costs is None or costs.network_bandwidth is None:
        return (WEIGHTS[0], WEIGHTS[1], WEIGHTS[2])
    ratio = costs.slowest().memory_bandwidth / costs.network_bandwidth
    ratio = min(ratio, MAX_NETWORK_WEIGHT)
    return (1.0, ratio, ratio)


@dataclasses.dataclass(frozen=True)
class StageWork:
    """What one stage does, in the units the speeds divide."""

    bytes: float
    """Bytes touched: inputs read (each once) and output written."""
    vector_flops: float
    matrix_flops: float
    share: dict[int, float]
    """Fraction of the work per worker (by blocks or tree parts); ``{0: 1.0}`` unplaced."""
    moved: dict[int, float]
    """Bytes copied into each worker to compute the stage (the placement's prediction)."""
    tasks: int = 1
    """Tasks of the first level (blocks, or a tree's parts), handed out one by one."""
    levels: int = 0
    """Levels of the stage's combine tree after its parts (each waits a round trip)."""

    def seconds_on(self, speed: Speed, fraction: float = 1.0) -> float:
        """Seconds one thread of ``speed`` takes for ``fraction`` of the work."""
        return fraction * (
            self.bytes / speed.memory_bandwidth
            + self.vector_flops / speed.flop_rate
            + self.matrix_flops / speed.matmul_rate
        )


def _share(stage: Stage) -> dict[int, float]:
    """Fraction of ``stage``'s work per worker: its tree parts where it has them, else
    its blocks (unplaced: all on worker 0)."""
    placement = stage.placement
    parts = placement.parts if placement is not None else None
    where = parts if parts is not None and parts.size else stage.worker
    if where is None:
        return {0: 1.0}
    ids, counts = np.unique(np.asarray(where).ravel(), return_counts=True)
    total = float(counts.sum()) or 1.0
    return {int(i): float(c) / total for i, c in zip(ids, counts)}


def _moved(stage: Stage) -> dict[int, float]:
    if stage.worker is None or stage.est_bytes is None:
        return {}
    w = np.asarray(stage.worker).ravel()
    b = np.asarray(stage.est_bytes, dtype=np.float64).ravel()
    return {int(i): float(b[w == i].sum()) for i in np.unique(w)}


TREE_SAMPLE = 64
"""Blocks of a tree stage whose combine schedule is followed to count its levels."""


def _tree_shape(stage: Stage, hosts: Sequence[str]) -> tuple[int, int]:
    """(first-level tasks, combine levels after them) of ``stage`` as placed."""
    placement = stage.placement
    parts = placement.parts if placement is not None else None
    if parts is None or not parts.size or stage.worker is None:
        return stage.nblocks, 0
    host_of = host_ids(hosts, int(parts.max()) + 1) if hosts else None
    owners = np.asarray(stage.worker)
    levels = 0
    for k, idx in enumerate(np.ndindex(*stage.numblocks)):
        if k >= TREE_SAMPLE:
            break
        workers = [int(w) for w in parts[idx]]
        steps = combine_schedule(workers, int(owners[idx]), host_of, fan_in(stage), gathers(stage))
        depth = [0] * len(workers)
        for *slots, _ in steps:
            depth.append(1 + max(depth[a] for a in slots))
        # a reduction is finished by one more task on the owner
        levels = max(levels, max(depth) + (stage.kind == "reduce"))
    return int(parts.size), levels


def _own_work(stage: Stage) -> tuple[float, float, float]:
    """(bytes, vector flops, matrix flops) of ``stage`` alone."""
    seen = {e.key: e.nbytes for e in stage.input_exprs}
    vector = matrix = 0.0
    for m in stage.members:
        v, x = work_flops(m)
        vector += v
        matrix += x
    return float(sum(seen.values()) + stage.expr.nbytes), vector, matrix


def remake_seconds(stage: Stage, speed: Speed) -> float:
    """Seconds one thread of ``speed`` takes to make ``stage``'s whole array once more."""
    b, v, x = _own_work(stage)
    return StageWork(b, v, x, {0: 1.0}, {}).seconds_on(speed)


def _reads_once(plan: Plan, source: str, reader_name: str) -> bool:
    """Whether each block of ``source`` is read by at most one task of ``reader_name``."""
    reader = plan.stages[reader_name]
    if reader.nblocks > MAX_COSTED_BLOCKS:
        return False
    reads = StageReads(reader)
    positions = {p for p, name in enumerate(reader.inputs) if name == source}
    counts: dict[tuple[int, ...], int] = {}
    for index in np.ndindex(*reader.numblocks):
        if reader.kind == "reduce":
            refs = [r for b in reads.parts(index) for r in reads.partial(b)[1]]
        else:
            refs = reads.block(index)[1]
        for b in {b for p, b in refs if p in positions}:
            counts[b] = counts.get(b, 0) + 1
            if counts[b] > 1:
                return False
    return True


def made_in_readers(plan: Plan) -> frozenset[str]:
    """Generated or read sources the lowering makes inside their readers' tasks.

    Its rule: a windowed source that is not an output, marked ``regenerate`` by the
    memory pass or read once per block (here: by one stage, no block read twice). The
    executors, which lower, know it exactly (``TaskGraph.in_place``) and may say so.
    """
    out = set()
    outputs = set(plan.outputs)
    for name, s in plan.stages.items():
        if s.kind != "source" or name in outputs or not isinstance(s.expr.op, Windowed):
            continue
        readers = list(dict.fromkeys(plan.readers.get(name, [])))
        if s.regenerate or (len(readers) == 1 and _reads_once(plan, name, readers[0])):
            out.add(name)
    return frozenset(out)


def stage_work(plan: Plan, made_in: Collection[str] | None = None) -> dict[str, StageWork]:
    """Each stage's work; sources made inside their readers count there (and not apart),
    and data that already exists (user arrays, persisted blocks) costs no task.

    ``made_in``: those sources, as the lowering decided (default: :func:`made_in_readers`).
    """
    hosts = plan.hosts
    own = {name: _own_work(s) for name, s in plan.stages.items()}
    for source in made_in_readers(plan) if made_in is None else made_in:
        b, v, x = own.pop(source)
        for reader in dict.fromkeys(plan.readers.get(source, [])):
            rb, rv, rx = own[reader]
            # the reader makes the source's blocks in a buffer instead of reading them:
            # the same bytes (written there, read back), and the source's flops
            own[reader] = (rb + b - plan.stages[source].expr.nbytes, rv + v, rx + x)
    out = {}
    for name, (b, v, x) in own.items():
        s = plan.stages[name]
        if isinstance(s.expr.op, (FromArray, FromBlocks)):
            continue
        tasks, levels = _tree_shape(s, hosts)
        out[name] = StageWork(b, v, x, _share(s), _moved(s), tasks, levels)
    return out


def _busiest(work: StageWork, costs: Costs, threads: int, hosts: Sequence[str]) -> float:
    """The busiest worker's seconds for ``work``: its share over its threads (slowed when
    its host has fewer cores than busy threads), plus the bytes copied into it over the
    network bandwidth."""
    net = costs.network()
    busy = sorted(w for w, f in work.share.items() if f > 0)
    return max(
        (
            work.seconds_on(costs.speed(w), work.share.get(w, 0.0))
            + work.tasks * work.share.get(w, 0.0) * costs.call_seconds
        )
        / threads
        * costs.contention([w, *(v for v in busy if v != w)], hosts, threads)
        + work.moved.get(w, 0.0) / net
        for w in set(work.share) | set(work.moved)
    )


def stage_seconds(
    plan: Plan,
    costs: Costs,
    threads: int = 1,
    span: bool = False,
    made_in: Collection[str] | None = None,
) -> dict[str, float]:
    """Predicted seconds per stage of ``plan`` (sources made inside a reader left out).

    ``span``: the stage's wall time on a cluster (the busiest worker: its share of the
    work over ``threads``, plus the bytes copied into it over the network bandwidth, or
    the scheduler's handing out of the first tasks when longer; plus a round trip per
    combine level); else the time its tasks take summed over threads in one process.
    """
    out: dict[str, float] = {}
    threads = max(1, int(threads))
    for name, work in stage_work(plan, made_in).items():
        if not span:
            out[name] = work.seconds_on(costs.speed(0)) + work.tasks * costs.call_seconds
            continue
        handing = (work.tasks - 1) * costs.task_seconds
        busiest = _busiest(work, costs, threads, plan.hosts)
        out[name] = max(busiest, handing) + work.levels * costs.hop_seconds
    return out


def hop_residuals(
    plan: Plan,
    costs: Costs,
    spans: dict[str, float],
    threads: int = 1,
    made_in: Collection[str] | None = None,
) -> list[float]:
    """What measured stage spans say of the scheduler's round trip: per stage with
    combine levels, its span beyond its predicted work and handing out, per level."""
    hops: list[float] = []
    threads = max(1, int(threads))
    for name, work in stage_work(plan, made_in).items():
        measured = spans.get(name)
        if measured is None or not work.levels:
            continue
        busiest = _busiest(work, costs, threads, plan.hosts)
        before = max(busiest, (work.tasks - 1) * costs.task_seconds)
        hops.append(max(0.0, measured - before) / work.levels)
    return hops


SMALL_TASK_SECONDS = 1e-3
"""Tasks predicted shorter than this teach the seconds a task takes besides its work."""


def task_residuals(
    plan: Plan,
    costs: Costs,
    busy: dict[str, tuple[float, int]],
    made_in: Collection[str] | None = None,
) -> dict[str, float]:
    """Per stage of small tasks, the measured seconds per task beyond its predicted bytes
    and flops.

    ``busy``: per stage, the seconds its tasks ran (summed) and how many ran. Only stages
    whose tasks are predicted to take under :data:`SMALL_TASK_SECONDS` count: there the
    code around the kernel shows; in big tasks any error in the speeds would swamp it.
    Their median (over stages, over runs) is :attr:`Costs.call_seconds`.
    """
    out = {}
    speed = costs.slowest()
    for name, work in stage_work(plan, made_in).items():
        seconds, count = busy.get(name, (0.0, 0))
        if count and work.seconds_on(speed) / count < SMALL_TASK_SECONDS:
            out[name] = (seconds - work.seconds_on(speed)) / count
    return out


def median_ratio(predicted: dict[str, float], measured: dict[str, float]) -> float | None:
    """The median over stages of predicted / measured seconds (stages both have, > 0)."""
    ratios = [
        predicted[n] / measured[n]
        for n in predicted.keys() & measured.keys()
        if measured[n] > 0 and predicted[n] > 0
    ]
    return statistics.median(ratios) if ratios else None
