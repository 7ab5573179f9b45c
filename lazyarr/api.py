"""The one place that chains build -> optimize -> execute.

``compute`` and ``persist`` take expressions, make (or reuse) an optimized
plan and hand it to the executor named by the keyword, the config, or the
default. Plans are cached by the outputs' structural keys.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import gc
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from dask.utils import format_bytes

from lazyarr import config
from lazyarr._lru import LRU
from lazyarr.executors import registry, rss
from lazyarr.executors.base import Traits
from lazyarr.graph import build
from lazyarr.graph.build import user_names
from lazyarr.graph.expr import Expr, reached
from lazyarr.graph.ops import BlockStore, FromArray, FromBlocks
from lazyarr.graph.ops.store import Write
from lazyarr.graph.rewrite import swap_leaves
from lazyarr.io.scratch import new_scratch_dir
from lazyarr.optimize.fetches import largest_fetch
from lazyarr.optimize.memory import (
    MemoryEstimate,
    MemoryLimitError,
    estimate,
    gathered_bytes,
    largest_block_bytes,
    threads_that_fit,
)
from lazyarr.optimize.pipeline import PassContext, optimize
from lazyarr.optimize.plan import Plan, Stage
from lazyarr.optimize.tasks import TaskGraph
from lazyarr.optimize.timing import Costs, stage_seconds
from lazyarr.progress import make_progress
from lazyarr.staged_rechunk import Staging, stage_rechunks, task_budget
from lazyarr.viz.runsummary import RunSummary, run_summary

__all__ = [
    "clear_plan_cache",
    "compute_exprs",
    "last_run",
    "make_plan",
    "pass_context",
    "passes_for",
    "persist_exprs",
    "planning_facts",
    "predicted_seconds",
    "resolve_executor",
]

# Plans that hold more source data than this are not cached (the cache
# would keep the user's arrays alive).
_CACHE_SOURCE_LIMIT = 1 << 20
_plan_cache: LRU[Plan] = LRU(0)  # sized by plan-cache.size when a plan is stored
_LAST_RUN: dict[str, Any] = {}


@dataclasses.dataclass(frozen=True)
class Timing:
    """What predicting a plan's seconds needs besides the plan: the executor's measured
    speeds, its threads per worker, and whether it measures a stage's wall span (a
    cluster) or its tasks' time summed over threads (one process)."""

    costs: Costs
    threads: int = 1
    span: bool = False

    def predict(self, plan: Plan) -> dict[str, float]:
        """Predicted seconds per stage of ``plan``."""
        return stage_seconds(plan, self.costs, self.threads, self.span)


def timing_of(ctx: PassContext, traits: Traits) -> Timing | None:
    """The :class:`Timing` of plans made under ``ctx`` (None without measured speeds)."""
    if ctx.costs is None:
        return None
    return Timing(ctx.costs, max(1, ctx.threads), not traits.one_process)


def predicted_seconds(plan: Plan, ctx: PassContext, traits: Traits) -> dict[str, float] | None:
    """Predicted seconds per stage of ``plan`` on the executor ``ctx`` describes."""
    timing = timing_of(ctx, traits)
    return None if timing is None else timing.predict(plan)


@dataclasses.dataclass(frozen=True)
class LastRun:
    """The plan and the measurements of the latest compute or persist."""

    plan: Plan
    executor: str
    stats: Any  # the executor's RunStats, or None if it measures nothing
    planning: float | None = None
    """Seconds spent building and optimizing the plan (and checking its memory)."""
    total: float | None = None
    """Seconds the whole compute took: planning, compiling and running."""
    predicted_peak: int | None = None
    """The peak the memory check predicted (under ``memory-limit``; per worker on dask)."""
    timing: Timing | None = None
    """The speeds the plan was made under, for its predicted seconds (None: unknown)."""

    def predicted(self) -> dict[str, float] | None:
        """Predicted seconds per stage (:mod:`lazyarr.optimize.timing`), as measured ones
        are counted on this executor; None without measured speeds."""
        return None if self.timing is None else self.timing.predict(self.plan)

    def summary(self) -> RunSummary:
        """Executor, seconds, blocks, peak bytes (measured, and predicted where the memory
        check ran) and one row per stage (measured and predicted seconds), as both reprs
        show."""
        return run_summary(
            self.plan,
            self.executor,
            self.stats,
            self.planning,
            self.total,
            self.predicted_peak,
            self.predicted(),
        )

    def __repr__(self) -> str:
        return self.summary().text()

    def _repr_html_(self) -> str:
        return self.summary().html()


def last_run() -> LastRun | None:
    """The latest compute's plan and measured statistics (None before any compute)."""
    if "plan" not in _LAST_RUN:
        return None
    return LastRun(
        _LAST_RUN["plan"],
        _LAST_RUN["executor"],
        _LAST_RUN["stats"],
        _LAST_RUN.get("planning"),
        _LAST_RUN.get("total"),
        _LAST_RUN.get("predicted_peak"),
        _LAST_RUN.get("timing"),
    )


def _record_of(plan: Plan, exprs: Sequence[Expr]) -> Plan:
    """``plan`` as ``last_run`` keeps it: labelled with the user's names, persisted
    stores emptied, keys unchanged.

    The record is for looking at (explain, visualize); holding the blocks
    would keep persisted data (futures on a cluster) alive after the user
    dropped the arrays.
    """
    names = user_names(exprs)
    if names:
        plan = plan.with_labels(names)
    if not any(isinstance(s.expr.op, FromBlocks) for s in plan.stages.values()):
        return plan
    memo: dict[int, Expr] = {}

    def empty(e: Expr) -> Expr | None:
        op = e.op
        if not isinstance(op, FromBlocks):
            return None
        store = BlockStore({}, op.store.executor, op.store.token)
        return Expr(FromBlocks(store=store), (), e.shape, e.dtype, e.chunks)

    def light(e: Expr) -> Expr:
        return swap_leaves([e], empty, memo)[0]

    stages = {
        n: s.replace(
            expr=light(s.expr),
            members=tuple(light(m) for m in s.members),
            input_exprs=tuple(light(e) for e in s.input_exprs),
        )
        for n, s in plan.stages.items()
    }
    return plan.with_stages(stages)


def resolve_executor(name: str | None) -> Any:
    """The executor object for a keyword value, else the configured default."""
    return registry.get(config.resolve("executor", name))


def passes_for(optimize_: bool | None, passes: Sequence[str] | None) -> tuple[str, ...]:
    if passes is not None:
        return tuple(passes)
    enabled = config.resolve("optimize.enabled", optimize_)
    return tuple(config.get("optimize.passes")) if enabled else ()


def _cacheable(plan: Plan) -> bool:
    held = 0
    for s in plan.stages.values():
        op = s.expr.op
        if isinstance(op, FromBlocks):
            return False
        if isinstance(op, FromArray):
            held += op.data.array.nbytes
    return held <= _CACHE_SOURCE_LIMIT


def pass_context(executor: str, check: bool, extra: dict[str, Any] | None = None) -> PassContext:
    """The passes' context: the executor's facts (``extra``, its traits) and the settings
    passes follow."""
    ex = registry.get(executor)
    supports = getattr(ex, "supports", None)
    lowering = getattr(getattr(ex, "traits", None), "lowering", None)
    extra = {"joint": bool(lowering is not None and lowering.joint), **(extra or {})}
    limit = config.get("memory-limit")
    if limit is not None:  # the setting wins over what the executor reports
        extra["memory_limit"] = config.parse_bytes(limit)
    return PassContext(
        executor=executor,
        check=check,
        supports=supports,
        blocks_per_worker=int(config.get("placement.blocks-per-worker")),
        reblock_min_bytes=config.parse_bytes(config.get("placement.reblock-min-bytes")),
        chunk_size=config.parse_bytes(config.get("array.chunk-size")),
        min_block_bytes=config.parse_bytes(config.get("array.min-chunk-size")),
        **extra,
    )


def make_plan(
    exprs: Sequence[Expr],
    executor: str = "numpy",
    passes: Sequence[str] = (),
    check: bool | None = None,
    extra: dict[str, Any] | None = None,
    ctx: PassContext | None = None,
) -> Plan:
    """The optimized plan of ``exprs`` (cached by their keys, the passes and the context).

    ``extra`` holds ``PassContext`` fields the executor contributes
    (``plan_context()``: worker count, addresses, hosts); ``ctx``, a context already built
    from them (then ``check`` and ``extra`` are not read again).
    """
    if ctx is None:
        check = bool(config.resolve("optimize.check", check))
        ctx = pass_context(executor, check, extra)
    key = (tuple(e.key for e in exprs), tuple(passes), ctx)
    plan = _plan_cache.get(key)
    if plan is not None:
        return plan
    with _gc_paused():
        exprs = _localize(exprs, executor)
        graph = build(exprs)
        plan = optimize(Plan.from_graph(graph), passes, ctx)
    size = int(config.get("plan-cache.size"))
    if size > 0 and _cacheable(plan):
        _plan_cache.size = size
        plan = _plan_cache.put(key, plan)
    return plan


def _localize(exprs: Sequence[Expr], executor: str) -> Sequence[Expr]:
    """Blocks persisted by another executor (futures on a cluster) fetched for ``executor``.

    Each executor that keeps blocks where they were computed offers
    ``localize(exprs)``; only uncached plans pay for this walk (plans that
    read persisted blocks are never cached).
    """
    owners = {
        e.op.store.executor
        for e in reached(exprs)
        if isinstance(e.op, FromBlocks) and e.op.store.executor not in (executor, "numpy")
    }
    for name in sorted(owners):
        localize = getattr(registry.get(name), "localize", None)
        if localize is not None:
            exprs = localize(exprs)
    return exprs


def clear_plan_cache() -> None:
    """Forget every cached plan."""
    _plan_cache.clear()


_GC_LOCK = threading.Lock()
_GC_PAUSES = [0, False]  # computes under way that paused the collector; was it enabled


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a compute plans, lowers and runs.

    Planning 10^5 blocks makes millions of small acyclic objects; each gen-2
    collection then walks every live object of the process (a notebook's
    too), which cost a third of the planning time. Nested and concurrent
    computes count; the last one out turns the collector back on.
    """
    with _GC_LOCK:
        if _GC_PAUSES[0] == 0:
            _GC_PAUSES[1] = gc.isenabled()
            gc.disable()
        _GC_PAUSES[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES[0] -= 1
            if _GC_PAUSES[0] == 0 and _GC_PAUSES[1]:
                gc.enable()


class Prepared(NamedTuple):
    """What a compute runs: the executor, the checked plan, its task graph lowered for that
    executor (None: the executor lowers for itself), and the staging of rechunks through a
    scratch store (None: none; the caller closes it after the run)."""

    executor: Any
    plan: Plan
    graph: TaskGraph | None
    staging: Staging | None
    predicted_peak: int | None = None
    """The checked plan's predicted peak (None without ``memory-limit``)."""
    timing: Timing | None = None
    """What predicting the plan's seconds per stage needs (None: no measured speeds)."""

    def run_options(self) -> dict[str, Any]:
        """The keywords ``execute``/``persist`` take besides the plan: the task graph."""
        return {} if self.graph is None else {"graph": self.graph}


def _prepare(
    exprs: Sequence[Expr],
    executor: str | None,
    optimize_: bool | None,
    passes: Sequence[str] | None,
) -> Prepared:
    """The executor, the checked plan and its task graph, lowered once for the executor
    (:attr:`Traits.lowering`); rechunks that would hold more than the memory limit are
    staged through a scratch store (the caller closes the staging after the run)."""
    ex = resolve_executor(executor)
    extra = planning_facts(ex)
    chosen = passes_for(optimize_, passes)
    ctx = pass_context(ex.name, bool(config.get("optimize.check")), extra)
    traits = getattr(ex, "traits", Traits())
    bounded = traits.bounds_in_flight
    plan = make_plan(exprs, ex.name, chosen, ctx=ctx)
    _check_gathered(plan, ctx)

    def checked(plan: Plan) -> tuple[MemoryEstimate | None, TaskGraph | None]:
        """The plan checked, lowered once for the executor, and its tasks checked."""
        est = check_memory(plan, ctx, bounded)
        lowering = traits.lowering
        graph = lowering.lower(plan, plan.outputs, ctx.threads) if lowering else None
        if graph is not None and not traits.one_process:
            check_fetches(graph, ctx)
        return est, graph

    staging = None
    try:
        est, graph = checked(plan)
    except MemoryLimitError:
        staging = _staged_rechunks(exprs, ctx) if traits.scratch_local else None
        if staging is None:
            raise
        try:
            plan = make_plan(staging.exprs, ex.name, chosen, ctx=ctx)
            est, graph = checked(plan)
        except BaseException:
            staging.close()
            raise
    peak = None if est is None else est.peak
    return Prepared(ex, plan, graph, staging, peak, timing_of(ctx, traits))


def planning_facts(ex: Any) -> dict[str, Any] | None:
    """What executor ``ex`` tells the passes (``plan_context()``: threads, workers, speeds),
    or None for an executor that tells nothing."""
    context = getattr(ex, "plan_context", None)
    return context() if context else None


def plan_that_runs(exprs: Sequence[Expr], executor: str | None) -> Plan:
    """The plan a compute of ``exprs`` on ``executor`` runs: its rechunks staged through a
    scratch store where the memory check stages them (the scratch is removed again), or,
    where the check refuses the plan, the plan it refuses."""
    try:
        ready = _prepare(exprs, executor, None, None)
    except MemoryLimitError:
        ex = resolve_executor(executor)
        return make_plan(exprs, ex.name, passes_for(None, None), extra=planning_facts(ex))
    if ready.staging is not None:
        ready.staging.close()
    return ready.plan


def _staged_rechunks(exprs: Sequence[Expr], ctx: PassContext) -> Staging | None:
    """``exprs`` with their all-to-all rechunks through a scratch store (the executor's
    processes share this machine's disk: ``Traits.scratch_local``)."""
    if ctx.memory_limit is None:
        return None
    budget = task_budget(ctx.memory_limit, ctx.threads)
    parent = config.get("temporary-directory")
    return stage_rechunks(
        exprs, budget, lambda: new_scratch_dir("rechunk", parent), min_bytes=budget
    )


def _check_gathered(plan: Plan, ctx: PassContext) -> None:
    """On a cluster, the results gathered into this process must fit ``memory-limit`` too."""
    limit = config.get("memory-limit")
    if not ctx.workers or limit is None:
        return
    limit = config.parse_bytes(limit)
    results = gathered_bytes(plan)
    if results > limit:
        raise MemoryLimitError(
            f"the results gathered into this process take {results:,} bytes > memory-limit "
            f"{limit:,}: write them with lazyarr.store / to_zarr, or compute less at once"
        )


def memory_estimate(plan: Plan, ctx: PassContext) -> MemoryEstimate:
    """The predicted peak of one process (local executors) or one worker (dask) for ``plan``."""
    workers = max(1, ctx.n_workers)
    temporaries = ctx.supports is None  # NumPy kernels keep a temporary per fused op
    return estimate(plan, max(1, ctx.threads), workers, not ctx.workers, temporaries)


def fitted_estimate(
    plan: Plan, ctx: PassContext, bounded: bool = False
) -> tuple[MemoryEstimate, bool]:
    """The predicted peak of ``plan`` as it will run, and whether it fits the memory limit.

    ``bounded``: the executor runs fewer tasks at once when their working sets would not
    fit (the numba executor): the plan then fits when one task does, and its peak is that
    of the tasks that fit at once.
    """
    est = memory_estimate(plan, ctx)
    limit = ctx.memory_limit
    if limit is None or est.peak <= limit:
        return est, True
    threads = threads_that_fit(est, limit)
    if not (bounded and est.per_task and threads):
        return est, False
    # fewer threads where their chunk buffers leave no room; a task starts only while the
    # running ones' working sets fit what is left (one always may run)
    fixed = est.fixed + threads * est.io_buffer
    room = limit - fixed
    running = max(est.per_task, min(threads * est.per_task, room))
    fit = max(1, min(threads, room // est.per_task))
    return dataclasses.replace(est, tasks_at_once=fit, threads=threads, peak=fixed + running), True


def check_memory(plan: Plan, ctx: PassContext, bounded: bool = False) -> MemoryEstimate | None:
    """Refuse ``plan`` before it runs when its predicted peak exceeds the memory limit; the
    estimate it checked (None without a limit; :func:`fitted_estimate` says what ``bounded``
    allows)."""
    if ctx.memory_limit is None:
        return None
    est, fits = fitted_estimate(plan, ctx, bounded)
    if fits:
        return est
    # smaller blocks shrink the running tasks' working sets and the blocks a worker fetches
    # ahead; not what is held, the bookkeeping, nor the chunk buffers (pieces of at most
    # 1 MiB, zstd's windows and contexts: they follow the stored chunks, if anything)
    threads = 1 if bounded else est.tasks_at_once
    shrinks = threads * est.per_task + est.fetched
    room = ctx.memory_limit - (est.fixed - est.fetched) - threads * est.io_buffer
    if est.fanout and est.fanout >= max(est.held / 2, ctx.memory_limit / 8):
        advice = (
            f"{est.fanout:,} bytes are blocks kept for rechunks or transposes that gather "
            "pieces of many blocks; lazyarr runs such rechunks through a scratch store on this "
            "machine (temporary-directory), and with an external dask scheduler only when "
            "every worker shares that directory (dask.shared-scratch: true); else write the "
            "input to a zarr store first (lazyarr.to_zarr) and rechunk it from there"
        )
    elif (room <= 0 or est.per_task == 0) and _held_stages_dominate(plan, ctx, est, shrinks):
        biggest = max(est.held_stages, key=lambda n: plan.stages[n].expr.nbytes)
        name = plan.with_labels({}).labels.get(biggest, biggest)
        advice = (
            f"most of the {est.held:,} bytes held are stages kept whole until their last "
            f"reader has run (the largest: {name}, {plan.stages[biggest].expr.nbytes:,} "
            "bytes; a sort's sorted blocks, a stage two later stages read); "
            "with these blocks one task at a time needs "
            f"{format_bytes(est.peak_with(1))}: a larger memory-limit, or a cluster, where "
            "each worker keeps its share"
        )
    elif room <= 0 and threads * est.io_buffer > est.fixed - est.fetched:
        advice = (
            f"the chunk buffers of the stores read and written ({est.io_buffer:,} bytes "
            "per thread: zstd's window and compressor, pieces of chunks) leave no room: a "
            "larger memory-limit, or stores with smaller chunks"
        )
    elif room <= 0 or est.per_task == 0:
        advice = (
            f"the results and held stages alone take {est.held:,} bytes: compute less at "
            "once (write results with lazyarr.store / to_zarr instead of gathering them)"
        )
    else:
        scale = room / shrinks
        now = largest_block_bytes(_block_that_sizes(plan.stages[est.block_stage]))
        advice = (
            f"blocks of at most about {int(now * scale):,} bytes (now {now:,}; chunks= or "
            "array.chunk-size) would fit"
        )
    raise MemoryLimitError(f"{_blamed(plan, est)}: {est.explain(ctx.memory_limit)}; {advice}")


def _held_stages_dominate(plan: Plan, ctx: PassContext, est: MemoryEstimate, shrinks: int) -> bool:
    """Most of what a refused plan holds is stages kept for later readers: more than its
    results, and more than smaller blocks would shrink (``shrinks`` bytes: a concatenation
    on a cluster held 108 bytes of write counts while its fetched blocks overflowed)."""
    results = 0 if ctx.workers else gathered_bytes(plan)
    stages = est.held - results
    return bool(est.held_stages) and stages > results and stages > shrinks


def check_fetches(graph: TaskGraph, ctx: PassContext) -> None:
    """Refuse a cluster's task graph in which one task's inputs (fetched whole before it
    starts) and value exceed a worker thread's share of the memory limit."""
    if ctx.memory_limit is None:
        return
    worst = largest_fetch(graph)
    share = ctx.memory_limit // max(1, ctx.threads)
    if worst is None or worst.total <= share:
        return
    task = graph.tasks[worst.task]
    stage = graph.stages[task.stage]
    raise MemoryLimitError(
        f"stage {stage.name}: one task ({task.kind.name.lower()} {task.index}) fetches "
        f"{format_bytes(worst.inputs)} of whole input blocks and makes "
        f"{format_bytes(worst.output)}, over a worker thread's share "
        f"({format_bytes(share)}) of the memory limit; use smaller chunks (chunks= or "
        "array.chunk-size), or give the workers more memory"
    )


def _block_that_sizes(stage: Stage) -> Expr:
    """The array whose blocks make a stage's working set: what a write stores, the body a
    reduction reads (a reduction's own blocks are its small results), else the stage's."""
    expr = stage.expr
    if isinstance(expr.op, Write) or stage.kind == "reduce":
        return expr.inputs[0]
    return expr


def _blamed(plan: Plan, est: MemoryEstimate) -> str:
    """Where a refused plan's peak comes from, in the user's names (``x.rename``) where
    the arrays have them: ``stage z (reduce-…)``, or the results the compute gathers."""
    outputs = plan.with_labels({}).labels
    if not est.block_stage:  # no task holds blocks: only results or held stages
        named = [outputs.get(o, o) for o in plan.outputs]
        return f"the results ({', '.join(named)})"
    label = outputs.get(est.block_stage)
    return f"stage {label} ({est.block_stage})" if label else f"stage {est.block_stage}"


def _call_settings(memory_limit: Any) -> dict[str, Any]:
    """The settings a compute's keywords give for that call only (scoped by ``config.set``)."""
    return {} if memory_limit is None else {"memory-limit": memory_limit}


def _measured(ex: Any, watch: rss.RssWatch) -> Any:
    """The executor's stats of the run just watched, with the resident set it added to this
    process where the executor measured none of its own (its workers')."""
    stats = getattr(ex, "last_stats", None)
    if stats is not None and getattr(stats, "rss_growth", 0) is None:
        stats.rss_growth = watch.growth
    return stats


def compute_exprs(
    exprs: Sequence[Expr],
    executor: str | None = None,
    optimize: bool | None = None,
    passes: Sequence[str] | None = None,
    progress: Any = None,
    memory_limit: Any = None,
) -> list[np.ndarray]:
    """NumPy results of ``exprs``, computed together in one plan (``memory_limit``: the
    ``memory-limit`` setting for this call)."""
    t0 = time.perf_counter()
    with config.set(_call_settings(memory_limit)), _gc_paused():
        ready = _prepare(exprs, executor, optimize, passes)
        ex, plan, staging = ready.executor, ready.plan, ready.staging
        bar = make_progress(config.resolve("progress", progress), f"lazyarr[{ex.name}]")
        _LAST_RUN.update(plan=_record_of(plan, exprs), executor=ex.name, stats=None, total=None)
        _LAST_RUN.update(
            planning=time.perf_counter() - t0,
            predicted_peak=ready.predicted_peak,
            timing=ready.timing,
        )
        try:
            with rss.watched() as watch:
                results = ex.execute(plan, plan.outputs, bar, **ready.run_options())
        finally:
            if staging is not None:
                staging.close()
    _LAST_RUN.update(stats=_measured(ex, watch), total=time.perf_counter() - t0)
    return results


def persist_exprs(
    exprs: Sequence[Expr],
    executor: str | None = None,
    optimize: bool | None = None,
    passes: Sequence[str] | None = None,
    progress: Any = None,
    memory_limit: Any = None,
) -> list[Expr]:
    """Expressions whose blocks are kept where the executor computed them."""
    t0 = time.perf_counter()
    with config.set(_call_settings(memory_limit)), _gc_paused():
        ready = _prepare(exprs, executor, optimize, passes)
        ex, plan, staging = ready.executor, ready.plan, ready.staging
        bar = make_progress(config.resolve("progress", progress), f"lazyarr[{ex.name}]")
        _LAST_RUN.update(plan=_record_of(plan, exprs), executor=ex.name, stats=None, total=None)
        _LAST_RUN.update(
            planning=time.perf_counter() - t0,
            predicted_peak=ready.predicted_peak,
            timing=ready.timing,
        )
        try:
            with rss.watched() as watch:
                stores: list[BlockStore] = ex.persist(
                    plan, plan.outputs, bar, **ready.run_options()
                )
        except BaseException:
            if staging is not None:
                staging.close()
            raise
        if staging is not None:  # kept blocks may still be computing (dask): remove at exit
            atexit.register(staging.close)
    _LAST_RUN.update(stats=_measured(ex, watch), total=time.perf_counter() - t0)
    # the plan's chunks: a pass (reblock) may have chosen other blocks than the expression's
    chunks = [plan.stages[o].expr.chunks for o in plan.outputs]
    return [
        Expr(FromBlocks(store=s), (), e.shape, e.dtype, c) for e, s, c in zip(exprs, stores, chunks)
    ]
