"""The local Numba executor: generated kernels, run block by block on a thread pool.

Every map or reduce stage whose members are all elementwise (a fused group,
a single elementwise op, or a lone reduction of another stage's output) runs
a generated Numba kernel (:mod:`lazyarr.kernels.numba_fused`); everything
else runs the NumPy reference kernels. If a kernel cannot be generated or
compiled, its stage falls back to NumPy with one :class:`FallbackWarning`
per distinct reason: a compute never fails because of compilation.

Sibling stages (``plan.siblings``: reductions of one block grid, or
elementwise stages of one shape and chunks, that read the same inputs) run
as one generated kernel per block, so the shared inputs are read once for
all of them (``x.mean(0)`` with ``x.std(0)``; ``la.compute(a + b, a * b)``).

Scheduling is per block: a task is one block of a stage (or one reduction
partial, or the combine of an output block's partials, or one block of a
set of siblings), its dependencies come from ``blockwork.reads``. Ready
tasks run on ``numba.threads`` threads
(the kernels release the GIL), deepest stage first, so a chain of stages
over a big array streams block by block; a block is freed as soon as its
last reader is done. Each thread has a task queued behind the one it runs
(no idling while the calling thread collects results), and blocks that are
views of in-memory arrays are cut in the calling thread, not sent to the
pool. Progress is reported from the calling thread, and
Ctrl-C (or any error) drops pending tasks, waits for running ones and
leaves no thread behind.
"""

from __future__ import annotations

import contextvars
import heapq
import os
import threading
import time
import uuid
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import numpy as np

from lazyarr import config
from lazyarr.graph.chunks import block_index_iter, block_slices
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import BlockStore, Elementwise, Reduce
from lazyarr.kernels.blocks import assemble, blocks_for_region, tree_combine
from lazyarr.kernels.compile import Options
from lazyarr.kernels.emit_group import structure_text
from lazyarr.kernels.fused import external_regions
from lazyarr.kernels.numba_fused import (
    joint_map_function,
    joint_partial_function,
    map_function,
    partial_function,
)
from lazyarr.optimize.plan import Plan, Stage

from .base import NullProgress, Progress, RunStats
from .blockwork import (
    MapFn,
    PartialFn,
    ReferenceKernels,
    SourceFn,
    reads,
    reduce_inputs,
    stage_functions,
)
from .numpy import NumpyExecutor

__all__ = ["FallbackWarning", "NumbaExecutor", "NumbaKernels", "options_from_config"]


class FallbackWarning(UserWarning):
    """A stage runs with the NumPy kernels because its Numba kernel could not be built."""


_WARNED: set[str] = set()


def _warn_once(reason: str) -> None:
    if reason in _WARNED:
        return
    _WARNED.add(reason)
    warnings.warn(
        f"numba executor: a stage runs with NumPy kernels instead ({reason})",
        FallbackWarning,
        stacklevel=4,
    )


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

# Tasks handed to the pool per thread: one running and one queued behind it, so a
# worker that finishes starts its next task at once instead of idling until the
# calling thread wakes up, collects the result and submits more.
_IN_FLIGHT_PER_THREAD = 2


def compile_threshold() -> int:
    """Bytes a stage must touch before it gets a compiled kernel (``numba.compile-threshold``)."""
    return config.parse_bytes(config.get("numba.compile-threshold"))


def _threads() -> int:
    n = config.get("numba.threads")
    if n is None:
        n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, int(n or 1))


# What each block of a fused stage reads, by stage structure and block: walking
# every member's regions costs ~10 us per member and block (a 200-op chain of 8
# blocks: 8 ms per compute), and the same plan is typically computed again.
_READS: OrderedDict[tuple, list[tuple[int, Region]]] = OrderedDict()
_READS_SIZE = 1 << 15
_READS_LOCK = threading.Lock()


def _structure(stage: Stage) -> tuple:
    """What a fused stage's block reads depend on (keys cover ops, shapes and chunks)."""
    members = tuple(m.key for m in stage.members)
    return (stage.kind, members, tuple(e.key for e in stage.input_exprs))


def _remembered(
    structure: tuple, index: tuple, compute: Callable[..., list[tuple[int, Region]]], *args: Any
) -> list[tuple[int, Region]]:
    """``compute(*args)``: what block ``index`` of a stage of ``structure`` reads (cached)."""
    key = (structure, index)
    with _READS_LOCK:
        found = _READS.get(key)
        if found is not None:
            _READS.move_to_end(key)
            return found
    value = compute(*args)
    with _READS_LOCK:
        _READS[key] = value
        while len(_READS) > _READS_SIZE:
            _READS.popitem(last=False)
    return value


def _all_elementwise(exprs: Sequence[Any]) -> bool:
    return all(isinstance(m.op, Elementwise) for m in exprs)


class NumbaKernels:
    """A ``KernelSet``: compiled kernels where possible, NumPy reference kernels elsewhere.

    ``fallbacks`` records, per stage name, why it runs with NumPy.
    """

    def __init__(self, options: Options, min_bytes: int = 0) -> None:
        self.options = options
        self.min_bytes = min_bytes
        self.reference = ReferenceKernels()
        self.fallbacks: dict[str, str] = {}
        self.compiled: list[str] = []
        self.joint_refused: dict[str, str] = {}

    def _fallback(self, stage: Stage, error: Exception) -> None:
        reason = f"{type(error).__name__}: {error}"
        self.fallbacks[stage.name] = reason
        _warn_once(reason)

    def source(self, stage: Stage) -> SourceFn:
        return self.reference.source(stage)

    def _small(self, stage: Stage) -> bool:
        """Too little data to pay for a compiled kernel (config ``numba.compile-threshold``)."""
        touched = stage.expr.nbytes + sum(e.nbytes for e in stage.input_exprs)
        return touched < self.min_bytes

    def map(self, stage: Stage) -> MapFn:
        if _all_elementwise(stage.members) and not self._small(stage):
            try:
                fn = map_function(stage.members, stage.input_exprs, self.options)
            except Exception as e:  # Unsupported, CompileError, or a bug: never fail the compute
                self._fallback(stage, e)
            else:
                self.compiled.append(stage.name)
                return fn
        return self.reference.map(stage)

    def partial(self, stage: Stage) -> PartialFn:
        body = stage.members[:-1]
        if isinstance(stage.expr.op, Reduce) and _all_elementwise(body) and not self._small(stage):
            try:
                fn = partial_function(body, stage.input_exprs, stage.expr, self.options)
            except Exception as e:  # Unsupported, CompileError, or a bug: never fail the compute
                self._fallback(stage, e)
            else:
                self.compiled.append(stage.name)
                return fn
        return self.reference.partial(stage)

    def reduction(self, stage: Stage) -> Any:
        return self.reference.reduction(stage)

    def joint(self, stages: Sequence[Stage]) -> tuple[Callable, list[str], str, list[str]] | None:
        """One compiled pass computing several sibling stages, or None.

        Siblings (see ``optimize.siblings``) are reductions of the same axes of
        bodies on one block grid, or elementwise stages of one shape and
        chunks. The function maps ``(region, get)`` to the reductions' partial
        states (``"reduce"``: the body's region) or ``(region, get, outs)`` to
        the blocks (``"map"``), in the order of the returned stage names;
        ``get`` takes a position in the returned list of input stage names.
        None when a stage would not get a compiled kernel on its own, or the
        joint kernel cannot be built (each stage then runs its own kernel,
        and ``joint_refused`` says why).
        """
        if len(stages) < 2 or any(self._small(s) for s in stages):
            return None
        if all(s.kind == "map" and _all_elementwise(s.members) for s in stages):
            kind = "map"
            grids = {(s.expr.shape, s.expr.chunks) for s in stages}
        elif all(
            s.kind == "reduce"
            and isinstance(s.expr.op, Reduce)
            and _all_elementwise(s.members[:-1])
            for s in stages
        ):
            kind = "reduce"
            grids = {
                (s.expr.inputs[0].shape, s.expr.inputs[0].chunks, s.expr.op.axes) for s in stages
            }
        else:
            return None
        if len(grids) != 1:
            return None
        # parts in an order of their structure, not of node names: the same source text
        # (and the kernel compiled on disk) in every process
        stages = sorted(stages, key=lambda s: structure_text(s.members[:-1], s.expr))
        inputs: dict[str, Expr] = {}
        for s in stages:
            for name, e in zip(s.inputs, s.input_exprs):
                inputs.setdefault(name, e)
        try:
            if kind == "map":
                parts = [s.members for s in stages]
                fn = joint_map_function(parts, list(inputs.values()), self.options)
            else:
                bodies = [(s.members[:-1], s.expr) for s in stages]
                fn = joint_partial_function(bodies, list(inputs.values()), self.options)
        except Exception as e:  # Unsupported, CompileError, a bug: the stages run apart
            self.joint_refused[" ".join(s.name for s in stages)] = f"{type(e).__name__}: {e}"
            return None
        self.compiled.extend(s.name for s in stages)
        return fn, list(inputs), kind, [s.name for s in stages]


# Source ops whose blocks are views of arrays in memory (a slice, no work).
_VIEW_SOURCES = frozenset({"array", "persisted"})


def _is_view_source(stage: Stage, into: dict[str, np.ndarray]) -> bool:
    """A stage whose blocks cost nothing to make (an output's blocks are copied: not those)."""
    return stage.kind == "source" and stage.expr.op.name in _VIEW_SOURCES and stage.name not in into


def _nbytes(value: Any) -> int:
    """Bytes a block or partial state owns (views of other memory count zero)."""
    if isinstance(value, np.ndarray):
        return value.nbytes if value.flags.owndata else 0
    if isinstance(value, (tuple, list)):
        return sum(_nbytes(v) for v in value)
    return 0


Item = tuple  # ("b", stage position, block index) or ("p", stage position, block index, j)


class _Joint:
    """Sibling stages one compiled pass computes (see ``NumbaKernels.joint``)."""

    def __init__(
        self, fn: Callable, members: list[int], sources: list[tuple[Any, int]], kind: str
    ) -> None:
        self.fn = fn
        self.kind = kind  # "map": blocks; "reduce": partial states
        self.members = members  # stage positions, in the order ``fn`` returns their values
        self.leader = min(members)  # the sibling whose tasks compute them all
        self.sources = sources  # per input of ``fn``: (its chunks, its stage position)


class _Schedule:
    """The tasks of one run: what each computes, reads and unblocks."""

    def __init__(self, plan: Plan, kernels: NumbaKernels) -> None:
        self.stages = list(plan.stages.values())
        self.position = {s.name: i for i, s in enumerate(self.stages)}
        self.joints = self._joints(plan, kernels)
        joint_of = {si: j for j in self.joints for si in j.members}
        self.fns = [
            stage_functions(s, kernels) if i not in joint_of else self._joint_fns(s, kernels)
            for i, s in enumerate(self.stages)
        ]
        # (kind, stage position, block index, j, body block index of a partial)
        self.tasks: list[tuple[str, int, tuple, int, tuple]] = []
        self.deps: list[list[Item]] = []
        self.produces: list[tuple[Item, ...]] = []
        self.joint_task: dict[int, _Joint] = {}  # task id -> the siblings it computes
        for si, stage in enumerate(self.stages):
            if stage.kind == "reduce":
                self._reduce_tasks(si, stage, joint_of.get(si))
                continue
            joint = joint_of.get(si)
            for idx in block_index_iter(stage.numblocks):
                if joint is None:
                    self._add("block", si, idx, 0, (), self._block_reads(stage, idx))
                elif si == joint.leader:
                    self._add_joint(joint, si, idx, 0, ())

    @staticmethod
    def _joint_fns(stage: Stage, kernels: NumbaKernels) -> tuple[Any, ...]:
        """A sibling computed jointly has no kernel of its own; a reduction keeps its combine."""
        return (None, kernels.reduction(stage)) if stage.kind == "reduce" else (None,)

    def _block_reads(self, stage: Stage, idx: tuple) -> list[Item]:
        if not stage.fused:
            return self._blocks_read(stage, reads(stage, idx))
        return self._blocks_read(stage, _remembered(_structure(stage), idx, reads, stage, idx))

    def _joints(self, plan: Plan, kernels: NumbaKernels) -> list[_Joint]:
        """The sibling sets the fuse pass found that get one compiled pass."""
        out = []
        for names in plan.siblings:
            if not all(n in self.position for n in names):
                continue
            found = kernels.joint([plan.stages[n] for n in names])
            if found is None:
                continue
            fn, inputs, kind, order = found
            sources = [(plan.stages[n].expr.chunks, self.position[n]) for n in inputs]
            out.append(_Joint(fn, [self.position[n] for n in order], sources, kind))
        return out

    def _add(self, kind: str, si: int, idx: tuple, j: int, bi: tuple, deps: list[Item]) -> None:
        self.tasks.append((kind, si, idx, j, bi))
        self.deps.append(deps)
        self.produces.append((("p", si, idx, j) if kind == "partial" else ("b", si, idx),))

    def _add_joint(self, joint: _Joint, si: int, idx: tuple, j: int, bi: tuple) -> None:
        """One task computing block ``idx`` (map) or partial ``j`` (reduce) of every sibling."""
        deps: dict[Item, None] = {}
        for m in joint.members:
            sibling = self.stages[m]
            if joint.kind == "map":
                deps.update(dict.fromkeys(self._block_reads(sibling, idx)))
            else:
                deps.update(dict.fromkeys(self._partial_reads(sibling, bi)))
        self.joint_task[len(self.tasks)] = joint
        self.tasks.append(("joint", si, idx, j, bi))
        self.deps.append(list(deps))
        if joint.kind == "map":
            self.produces.append(tuple(("b", m, idx) for m in joint.members))
        else:
            self.produces.append(tuple(("p", m, idx, j) for m in joint.members))

    def _partial_reads(self, stage: Stage, bi: tuple) -> list[Item]:
        region = block_slices(stage.expr.inputs[0].chunks, bi)
        if not stage.fused:
            return self._blocks_read(stage, [(0, region)])
        body_members = stage.members[:-1]
        r = _remembered(
            _structure(stage), bi, external_regions, body_members, stage.input_exprs, region
        )
        return self._blocks_read(stage, r)

    def _reduce_tasks(self, si: int, stage: Stage, joint: _Joint | None) -> None:
        for idx in block_index_iter(stage.numblocks):
            parts = list(reduce_inputs(stage.expr, idx))
            for j, bi in enumerate(parts):
                if joint is None:
                    self._add("partial", si, idx, j, bi, self._partial_reads(stage, bi))
                elif si == joint.leader:
                    self._add_joint(joint, si, idx, j, bi)
            self._add("final", si, idx, 0, (), [("p", si, idx, j) for j in range(len(parts))])

    def _blocks_read(self, stage: Stage, regions: list[tuple[int, Region]]) -> list[Item]:
        out: dict[Item, None] = {}
        for pos, region in regions:
            src = self.position[stage.inputs[pos]]
            chunks = stage.input_exprs[pos].chunks
            if all(len(c) == 1 for c in chunks):  # assemble reads the only block
                out[("b", src, (0,) * len(chunks))] = None
                continue
            for bi, _ in blocks_for_region(chunks, region):
                out[("b", src, bi)] = None
        return list(out)

    def region_getter(
        self, stage: Stage, store: dict[Item, Any]
    ) -> Callable[[int, Region], np.ndarray]:
        sources = [
            (e.chunks, self.position[name]) for e, name in zip(stage.input_exprs, stage.inputs)
        ]

        def get(pos: int, region: Region) -> np.ndarray:
            chunks, src = sources[pos]
            return assemble(chunks, region, lambda bi: store[("b", src, bi)])

        return get

    def run_task(
        self, tid: int, store: dict[Item, Any], into: dict[str, np.ndarray]
    ) -> tuple[Any, float]:
        """Compute one task; blocks of an output in ``into`` land in that array (a view)."""
        t0 = time.perf_counter()
        kind, si, idx, _, bi = self.tasks[tid]
        stage = self.stages[si]
        fns = self.fns[si]
        expr = stage.expr
        target = into.get(stage.name) if kind in ("block", "final") else None
        view = None
        if target is not None:
            view = target[(*block_slices(expr.chunks, idx), Ellipsis)]
        if view is not None and kind == "block" and getattr(fns[0], "writes_into", False):
            fns[0](block_slices(expr.chunks, idx), self.region_getter(stage, store), out=view)
            return view, time.perf_counter() - t0
        if kind == "final":
            rk = fns[1]
            parts = [store[d] for d in self.deps[tid]]
            state = tree_combine(parts, lambda a, b: rk.combine(expr.op, a, b))
            value = rk.finalize(expr.op, expr, state)
        elif kind == "partial":
            body = expr.inputs[0]
            value = fns[0](block_slices(body.chunks, bi), self.region_getter(stage, store))
        elif kind == "joint":
            joint = self.joint_task[tid]
            sources = joint.sources

            def get(pos: int, region: Region) -> np.ndarray:
                chunks, src = sources[pos]
                return assemble(chunks, region, lambda b: store[("b", src, b)])

            if joint.kind == "reduce":
                value = joint.fn(block_slices(expr.inputs[0].chunks, bi), get)
            else:
                region = block_slices(expr.chunks, idx)
                outs = []
                for m in joint.members:
                    target = into.get(self.stages[m].name)
                    outs.append(None if target is None else target[(*region, Ellipsis)])
                value = joint.fn(region, get, outs)
        elif stage.kind == "source":
            value = fns[0](block_slices(expr.chunks, idx))
        else:
            value = fns[0](block_slices(expr.chunks, idx), self.region_getter(stage, store))
        if view is not None:
            view[...] = value
            value = view
        return value, time.perf_counter() - t0


class NumbaExecutor:
    """Runs fused stages as Numba-compiled loops on a thread pool (local, in process)."""

    name = "numba"

    def __init__(self) -> None:
        self.last_stats: RunStats | None = None
        self.last_kernels: NumbaKernels | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._pool_size = 0
        self._lock = threading.Lock()
        self._active = 0
        self._small = NumpyExecutor()

    # -- the thread pool: kept between computes, shut down after an error or Ctrl-C --
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
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[np.ndarray]:
        if self._tiny(plan):
            # tiny arrays (``float(x[3])``): no thread pool, no task graph, NumPy kernels
            results = self._small.execute(plan, outputs, progress)
            self.last_stats = self._small.last_stats
            return results
        # each output is allocated once; its blocks are computed into it (no gather copy)
        into = {}
        for o in dict.fromkeys(outputs):
            expr = plan.stages[o].expr
            into[o] = np.empty(expr.shape, dtype=expr.dtype)
        self._run(plan, outputs, progress, into)
        results, seen = [], set()
        for o in outputs:
            results.append(into[o].copy() if o in seen else into[o])
            seen.add(o)
        return results

    def persist(
        self, plan: Plan, outputs: Sequence[str], progress: Progress | None = None
    ) -> list[BlockStore]:
        blocks = self._run(plan, outputs, progress)
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
        into: dict[str, np.ndarray] | None = None,
    ) -> dict[str, dict[tuple[int, ...], np.ndarray]]:
        progress = progress or NullProgress()
        t_start = time.perf_counter()
        kernels = NumbaKernels(options_from_config(), compile_threshold())
        self.last_kernels = kernels
        sched = _Schedule(plan, kernels)
        compile_seconds = time.perf_counter() - t_start
        stats = RunStats(self.name)
        stats.extra.update(
            compile_seconds=compile_seconds,
            compiled_stages=list(kernels.compiled),
            fallback_stages=dict(kernels.fallbacks),
            joint_stages=[[sched.stages[m].name for m in j.members] for j in sched.joints],
            joint_refused=dict(kernels.joint_refused),
        )
        keep = {sched.position[o] for o in outputs}
        n = len(sched.tasks)
        readers: dict[Item, int] = {}
        dependents: dict[Item, list[int]] = {}
        waiting = [0] * n
        for tid, deps in enumerate(sched.deps):
            waiting[tid] = len(deps)
            for d in deps:
                readers[d] = readers.get(d, 0) + 1
                dependents.setdefault(d, []).append(tid)
        into = into or {}
        threads = min(_threads(), max(n, 1))
        if sum(st.expr.nbytes for st in sched.stages) < _INLINE_BYTES:
            threads = 1  # tiny data: thread hand-offs would cost more than they save
        stats.extra["threads"] = threads
        # ready tasks, deepest stage first; with a pool, blocks that are views of memory
        # at hand wait apart and run right here, before anything else (a pool round trip
        # costs more, and the blocks that read them become ready sooner)
        ready: list[tuple[int, int, int]] = []
        at_hand: list[int] = []
        here = [threads > 1 and _is_view_source(s, into) for s in sched.stages]

        def push(tid: int) -> None:
            kind, si = sched.tasks[tid][:2]
            if here[si]:
                at_hand.append(tid)
            else:
                heapq.heappush(ready, (-si, 0 if kind == "final" else 1, tid))

        for tid in range(n):
            if waiting[tid] == 0:
                push(tid)
        at_hand.reverse()  # first in, first run
        store: dict[Item, Any] = {}
        live = sum(a.nbytes for a in into.values())
        peak = live
        done = 0

        def complete(tid: int, value: Any, seconds: float) -> None:
            nonlocal live, peak, done
            kind, si = sched.tasks[tid][:2]
            items = sched.produces[tid]
            values = value if kind == "joint" else (value,)
            for item, v in zip(items, values):
                store[item] = v
                live += _nbytes(v)
            peak = max(peak, live)
            name = sched.stages[si].name
            stats.stage_seconds[name] = stats.stage_seconds.get(name, 0.0) + seconds
            done += 1
            for d in sched.deps[tid]:
                readers[d] -= 1
                if readers[d] == 0 and not (d[0] == "b" and d[1] in keep):
                    live -= _nbytes(store.pop(d))
            for item in items:
                for t in dependents.get(item, ()):
                    waiting[t] -= 1
                    if waiting[t] == 0:
                        push(t)
            blocks = sum(1 for i in items if i[0] == "b")  # partials are not blocks
            if blocks:
                stats.blocks += blocks
                progress.advance(blocks)

        pool = self._acquire_pool(threads) if threads > 1 else None
        running: dict[Future, int] = {}
        in_flight = threads * _IN_FLIGHT_PER_THREAD
        failed = True
        progress.start(plan.total_blocks)
        try:
            while done < n:
                while at_hand or (ready and (pool is None or len(running) < in_flight)):
                    if at_hand or pool is None:
                        tid = at_hand.pop() if at_hand else heapq.heappop(ready)[2]
                        complete(tid, *sched.run_task(tid, store, into))
                        continue
                    tid = heapq.heappop(ready)[2]
                    ctx = contextvars.copy_context()
                    running[pool.submit(ctx.run, sched.run_task, tid, store, into)] = tid
                if done == n:
                    break
                if not running:
                    raise RuntimeError("numba executor: no task is ready (a cycle in the plan?)")
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    tid = running.pop(fut)
                    complete(tid, *fut.result())
            failed = False
        finally:
            if pool is not None:
                for fut in running:
                    fut.cancel()
                if running:
                    wait(running)  # tasks already started finish before we return
                self._release_pool(failed)
            progress.finish()
        stats.seconds = time.perf_counter() - t_start
        stats.peak_bytes = peak
        self.last_stats = stats
        result: dict[str, dict[tuple[int, ...], np.ndarray]] = {}
        for o in outputs:
            si = sched.position[o]
            result[o] = {
                idx: store[("b", si, idx)] for idx in block_index_iter(plan.stages[o].numblocks)
            }
        return result
