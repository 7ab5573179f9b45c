"""The local Numba executor: the lowered task graph on a thread pool, generated kernels.

Kernels come from :class:`~lazyarr.kernels.numba_set.NumbaKernels`: a
generated Numba kernel for every stage of elementwise members (a fused
group, one elementwise op, a reduction of elementwise members), NumPy
reference kernels elsewhere. Sibling stages (``plan.siblings``: reductions
of one block grid, or elementwise stages of one grid, that read the same
inputs) are lowered as joint tasks and run as one generated kernel per
block, so shared inputs are read once (``x.mean(0)`` with ``x.std(0)``); if
that kernel cannot be built, each joint task computes its siblings one by
one.

The plan is lowered once (:func:`lazyarr.optimize.lower.lower`): only the
blocks the outputs need, each task naming the tasks it reads. The tasks run
on ``numba.threads`` threads (:mod:`.taskpool`; the kernels release the
GIL), deepest stage first, so a chain of stages streams block by block; a
value is freed as soon as its last reader is done. An output's blocks are
written straight into its final array. Progress is reported from the
calling thread; Ctrl-C (or any error) lets running tasks finish, starts no
new one and leaves no thread behind.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from lazyarr import config
from lazyarr.graph.ops import BlockStore
from lazyarr.kernels.compile import Options
from lazyarr.kernels.numba_set import FallbackWarning, NumbaKernels
from lazyarr.optimize.memory import estimate, in_flight_budget, threads_that_fit
from lazyarr.optimize.plan import Plan, Stage
from lazyarr.optimize.tasks import JOINT, PARTIAL, Task, TaskGraph

from .base import Lowering, NullProgress, Progress, RunStats, Traits, available_cores
from .blas import blas_threads_for
from .blockwork import JointCode, StageCode, joint_code, run_task
from .calibrate import LocalCalibration
from .malloc import bound_allocator
from .numpy import NumpyExecutor
from .taskpool import run_graph

__all__ = ["FallbackWarning", "NumbaExecutor", "NumbaKernels", "options_from_config"]


def options_from_config() -> Options:
    """Compile options from the ``numba.*`` settings."""
    cache_dir: str | None = None
    if config.get("numba.cache"):
        configured = config.get("numba.cache-dir")
        if configured is None:
            import platformdirs

            configured = str(Path(platformdirs.user_cache_dir("lazyarr")) / "numba")
        cache_dir = str(configured)
    fastmath = bool(config.get("numba.fastmath"))
    return Options(cache_dir, fastmath, config.digest(["numba.fastmath"]))


# Plans whose arrays hold fewer bytes than this run in the calling thread.
_INLINE_BYTES = 1 << 20
# ... and plans whose tasks touch fewer bytes than this on average (about 20 us of
# kernel time: less than the Python overhead of a task, during which the GIL is held).
_THREAD_TASK_BYTES = 64 << 10


def compile_threshold() -> int:
    """Bytes a stage must touch before it gets a compiled kernel (``numba.compile-threshold``)."""
    return config.parse_bytes(config.get("numba.compile-threshold"))


def _threads() -> int:
    n = config.get("numba.threads")
    return available_cores() if n is None else max(1, int(n or 1))


class _Run:
    """One compute: the lowered graph, each stage's code, and how to run one task."""

    def __init__(self, graph: TaskGraph, into: dict[str, np.ndarray]) -> None:
        self.kernels = NumbaKernels(options_from_config(), compile_threshold())
        self.graph = graph
        self.codes = [
            StageCode(s, self.kernels, graph.inputs_in_place(i)) for i, s in enumerate(graph.stages)
        ]
        self.joints: dict[int, JointCode] = {}
        self.joint_members: dict[int, tuple[int, ...]] = {}
        for task in graph.tasks:
            if task.kind == JOINT and task.stage not in self.joints:
                self.joints[task.stage] = joint_code(graph, task.stage, self.kernels)
                self.joint_members[task.stage] = task.members
        self.into = [into.get(s.name) for s in graph.stages]
        self.values: list[Any] = [None] * len(graph.tasks)

    def inputs(self, task: Task) -> list[Any]:
        values = self.values
        if task.slots is None:
            return [values[d] for d in task.deps]
        return [values[d] if s < 0 else values[d][s] for d, s in zip(task.deps, task.slots)]

    def run(self, tid: int) -> Any:
        """Compute one task; blocks of an output land in its final array (a view)."""
        task = self.graph.tasks[tid]
        kind = task.kind
        if kind == JOINT:
            joint = self.joints[task.stage]
            outs = [None] * len(task.members)
            if joint.kind == "map":
                for slot, m in enumerate(task.members):
                    target = self.into[m]
                    if target is not None:
                        outs[slot] = target[(*task.region, Ellipsis)]
            return joint.run(task, self.inputs(task), outs)
        target = self.into[task.stage] if kind != PARTIAL else None
        view = None
        if target is not None and self.graph.producers[task.stage][task.index] == tid:
            view = target[(*task.region, Ellipsis)]
        value = run_task(task, self.codes[task.stage], self.inputs(task), out=view)
        if view is not None and value is not view:
            view[...] = value
            value = view
        return value


class NumbaExecutor:
    """Runs fused stages as Numba-compiled loops on a thread pool (local, in process)."""

    name = "numba"
    joint = True
    """Compute sibling sets with joint kernels (tests switch it off to compare)."""

    @property
    def traits(self) -> Traits:
        """Blocks in this process, read in place where they can be; under ``memory-limit``
        the tasks at once are bounded by bytes, not only threads."""
        lowering = Lowering(joint=type(self).joint, in_place=True, split=True)
        return Traits(one_process=True, bounds_in_flight=True, lowering=lowering)

    def __init__(self) -> None:
        self.last_stats: RunStats | None = None
        self.last_kernels: NumbaKernels | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_size = 0
        self._lock = threading.Lock()
        self._active = 0
        self._small = NumpyExecutor()
        self.calibration = LocalCalibration()
        """This process's speeds, probed at the first plan (the cost model's data)."""

    @staticmethod
    def supports(expr: Any) -> bool:
        """Whether this executor's kernels compile ``expr`` (the ``fuse`` pass asks)."""
        return NumbaKernels.supports(expr)

    # -- the thread pool: kept between computes, shut down after an error or Ctrl-C --
    def plan_context(self) -> dict[str, Any]:
        """Tasks that run at once (the threads), for memory planning; this process's
        measured speeds (``costs``), for predicted seconds."""
        return {"threads": _threads(), "costs": self.calibration.costs()}

    def _acquire_pool(self, threads: int) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None or (self._pool_size != threads and self._active == 0):
                if self._pool is not None:
                    self._pool.shutdown(wait=True)
                self._pool = ThreadPoolExecutor(threads, "lazyarr-numba")
                self._pool_size = threads
            self._active += 1
            return self._pool

    def _release_pool(self, failed: bool) -> None:
        with self._lock:
            self._active -= 1
            if failed and self._active == 0 and self._pool is not None:
                # pending tasks are dropped, running ones finish: no thread is left behind
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None

    def close(self) -> None:
        """Stop the worker threads (a later compute starts new ones)."""
        with self._lock:
            if self._pool is not None and self._active == 0:
                self._pool.shutdown(wait=True)
                self._pool = None

    # -- the public contract -------------------------------------------------
    def _tiny(self, plan: Plan) -> bool:
        """A plan too small to compile anything: the lean serial runner is cheapest."""
        limit = min(compile_threshold(), _INLINE_BYTES)
        return sum(s.expr.nbytes for s in plan.stages.values()) < limit

    def execute(
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None = None,
        graph: TaskGraph | None = None,
    ) -> list[np.ndarray]:
        """One NumPy array per output; ``graph``: the plan lowered for this executor
        (:attr:`traits`), else it is lowered here."""
        if self._tiny(plan):
            # tiny arrays (``float(x[3])``): no thread pool, no compiles, NumPy kernels (and
            # the NumPy executor's own lowering)
            results = self._small.execute(plan, outputs, progress)
            self.last_stats = self._small.last_stats
            return results
        # each output is allocated once; its blocks are computed into it (no gather copy)
        into = {}
        for o in dict.fromkeys(outputs):
            expr = plan.stages[o].expr
            into[o] = np.empty(expr.shape, dtype=expr.dtype)
        self._run(plan, outputs, progress, graph, into)
        results, seen = [], set()
        for o in outputs:
            results.append(into[o].copy() if o in seen else into[o])
            seen.add(o)
        return results

    def persist(
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None = None,
        graph: TaskGraph | None = None,
    ) -> list[BlockStore]:
        blocks = self._run(plan, outputs, progress, graph)
        stores = []
        for o in outputs:
            kept = {i: b if b.flags.owndata else b.copy() for i, b in blocks[o].items()}
            stores.append(BlockStore(kept, self.name, uuid.uuid4().hex))
        return stores

    # -- the scheduler -------------------------------------------------------
    def _run(
        self,
        plan: Plan,
        outputs: Sequence[str],
        progress: Progress | None,
        graph: TaskGraph | None = None,
        into: dict[str, np.ndarray] | None = None,
    ) -> dict[str, dict[tuple[int, ...], np.ndarray]]:
        progress = progress or NullProgress()
        t_start = time.perf_counter()
        into = into or {}
        if graph is None:
            graph = self.traits.lowering.lower(plan, outputs, _threads())
        run = _Run(graph, into)
        t_lowered = time.perf_counter()
        graph = run.graph
        tasks = graph.tasks
        n = len(tasks)
        jointly = {m for ms in run.joint_members.values() for m in ms}
        for si, code in enumerate(run.codes):  # compile before the first block runs
            if si not in jointly and (graph.producers[si] >= 0).any():
                _prepare(code)
        kernels = run.kernels
        self.last_kernels = kernels
        stats = RunStats(self.name)
        stats.extra.update(
            lower_seconds=t_lowered - t_start,
            compile_seconds=time.perf_counter() - t_lowered,
            compiled_stages=list(kernels.compiled),
            fallback_stages=dict(kernels.fallbacks),
            joint_stages=[
                [graph.stages[m].name for m in run.joint_members[lead]]
                for lead, j in run.joints.items()
                if j.fn is not None
            ],
            joint_refused=dict(kernels.joint_refused),
            tasks=n,
            task_kinds=graph.kinds(),
        )
        keep = set()
        for o in graph.outputs:
            keep.update(int(t) for t in graph.producers[o].ravel() if t >= 0)
        threads = min(_threads(), max(n, 1))
        touched = sum(s.expr.nbytes + sum(e.nbytes for e in s.input_exprs) for s in graph.stages)
        # a contraction block sums its partial products one kernel call at a time
        calls = n + sum(
            (r.contraction_parts - 1) * int((p >= 0).sum())
            for r, p in zip(graph.stage_reads, graph.producers)
            if r.contraction_parts > 1
        )
        if touched < _INLINE_BYTES or touched < _THREAD_TASK_BYTES * calls:
            # tiny data, or tiny tasks: a kernel runs for less time than the Python around
            # it, which holds the GIL, so a second thread only adds contention
            threads = 1
        if threads > 1 and plan.memory_limit is not None:  # as many as their buffers allow
            est = estimate(plan, threads, 1, True, False)
            threads = max(1, threads_that_fit(est, plan.memory_limit))
        stats.extra["threads"] = threads
        bound = _in_flight_bound(plan, graph, threads) if threads > 1 else {}
        if bound:
            stats.extra["in_flight_budget"] = bound["budget"]
        live = sum(a.nbytes for a in into.values())
        pool = self._acquire_pool(threads) if threads > 1 else None
        failed = True
        progress.start(sum(graph.progress_blocks()))
        try:
            with blas_threads_for(threads):
                peak, seconds, blocks, at_once = run_graph(
                    graph, run.run, run.values, keep, pool, threads, progress, live, **bound
                )
            failed = False
        finally:
            if pool is not None:
                self._release_pool(failed)
            progress.finish()
        stats.blocks = blocks
        stats.extra["most_at_once"] = at_once
        values = run.values
        ran = [i for i, p in enumerate(graph.producers) if (p >= 0).any()]
        stats.stage_seconds = {graph.stages[i].name: seconds[i] for i in ran}
        stats.seconds = time.perf_counter() - t_start
        stats.peak_bytes = peak
        self.last_stats = stats
        result: dict[str, dict[tuple[int, ...], np.ndarray]] = {}
        for o in graph.outputs:
            slot = graph.slot_of.get(o, -1)
            result[graph.stages[o].name] = {
                idx: values[tid] if slot < 0 else values[tid][slot]
                for idx, tid in graph.blocks_of(o)
            }
        return result


def _in_flight_bound(plan: Plan, graph: TaskGraph, threads: int) -> dict[str, Any]:
    """``run_graph``'s byte bound under the plan's memory limit: what the held stages,
    results and the ``threads``' chunk buffers leave, and each stage's working set per task
    (generated kernels keep no temporaries)."""
    if plan.memory_limit is None:
        return {}
    bound_allocator()
    budget, need = in_flight_budget(plan, plan.memory_limit, True, False, threads)
    return {"budget": budget, "need": [need[s.name] for s in graph.stages]}


def _prepare(code: StageCode) -> None:
    """Look up (compile) a stage's kernels before any block runs, for the kinds it will run."""
    stage: Stage = code.stage
    if stage.kind == "map":
        code.map  # noqa: B018 (the property compiles)
    elif stage.kind == "reduce":
        code.partial  # noqa: B018
