"""Cost per block from 100 to 100,000 blocks: lazyarr's executors against dask.array (issue 10).

Every workload uses tiny blocks, so the arithmetic is negligible and the
time measures what each system spends per block (bookkeeping, tasks,
scheduling). All systems are driven from one process, on the same data and chunks:

* ``numpy (one array)``: the same computation in NumPy on the whole array,
  one call; the floor that the overhead goal subtracts;
* ``lazyarr numba``, ``lazyarr numpy``, ``lazyarr dask``: ``.compute(executor=...)``;
  the dask executor starts its own ``LocalCluster`` from config
  (``dask.n-workers`` 2, ``dask.threads-per-worker`` 1, processes, loopback) and
  runs each stage's blocks of one worker as a few batch tasks (issue 27);
  ``lazyarr dask per-block`` is the same with ``dask.batch-tasks: false`` (a Dask
  task per block, as before batches);
* ``dask.array threads``: ``dask.compute(..., scheduler="threads")``;
* ``dask.array distributed``: the same collection computed on that same
  LocalCluster (its client is ``la.cluster()``), so both distributed systems
  use the same two worker processes.

The in-process systems run first (every workload), the two distributed ones
after: the LocalCluster starts only then, since its scheduler lives in this
process and its event-loop thread, with the workers' processes, would load
the in-process systems' runs (``PHASES``).

Workloads (``n`` = blocks x 100 elements, float64):

1. ``(sin(x) * 2 + cos(x)).sum()`` over ``la.asarray(a, chunks=100)``;
2. the same over ``la.random.random(n, chunks=100, seed=...)`` (dask.array:
   ``da.random.default_rng(seed).random(n, chunks=100)``, its own values);
3. the same chain, then ``.sum(axis=0)``, over a 2-d array in 10 x 10 blocks on a
   ``g x g`` grid (``g = round(sqrt(blocks))``): a chunked result, per-column combines;
4. ``x @ x.T`` for ``x`` of 4 x ``c`` blocks of 10 x 10 (``c = blocks / 4``): 16
   output blocks, each a sum of ``c`` block products, so the block products grow
   linearly with the blocks of ``x`` (a square grid would grow them as blocks^1.5);
   lazyarr merges neighbouring products of tiny blocks into parts of about
   ``graph.blockrules.PART_MIN_BYTES`` of input (dask.array runs each product);
5. ``la.random.random(n, seed=...).sum()`` in 100-element blocks (5a) and in
   10^6-element blocks (5b): generating plus summing, compared by total time;
   5c is 5a with the default ``array.min-chunk-size`` (1 MiB), which lets the
   reblock pass merge the tiny blocks before they are run.

Settings for every run: ``array.min-chunk-size: 0`` (the blocks as written:
workloads 1-4 and 5a measure what a block costs) and ``numba.compile-threshold:
0`` (compiled kernels at every size, so a curve does not switch kernels
between sizes).

Per row: seconds to plan, to execute, in total, µs per block, and whether the
result matches NumPy. How each is measured:

* total: wall time of ``.compute(executor=name)`` with the plan cache cleared
  first (``lazyarr.api.clear_plan_cache``), so every compute plans from scratch;
* plan: wall time of ``la.plan(arr, executor=name)`` with the plan cache cleared:
  the same calls ``compute`` makes before it hands the plan to the executor
  (resolve the executor, its ``plan_context()``, ``api.make_plan`` with the
  configured passes). Timed apart, not inside the compute, because a compute
  cannot be stopped after planning through the public API; execute = total -
  plan (medians), and includes whatever the executor does with the plan
  (turning it into tasks, compiling or loading kernels, running, gathering);
* dask.array rows have no plan column: graph optimization is part of their total;
* repeats: the median of ``--repeat`` runs up to 3,000 blocks; above, one run,
  unless that run took under a second (a short run is cheap to repeat and the
  most disturbed by other load: the median of ``--repeat`` runs again)
  (``numpy (one array)``: the fastest of at least 5 runs at every size, since a
  call of a millisecond or less is the most disturbed by other load);
* warm: before a workload's first size every lazyarr executor computes it once,
  untimed, at 2,000 blocks (the Numba kernels are compiled or loaded), and
  dask.array once at 100 blocks;
* correct: ``allclose`` (rtol 1e-8) with NumPy; lazyarr's random values are taken
  from the same array computed as one block on the NumPy executor (lazyarr's
  random values do not depend on the chunks), dask.array's from its own array
  computed by the threaded scheduler.

Budget: a (system, workload) stops at the first size whose previous size took
longer than ``--budget-s``, or whose time predicted from the last two sizes
(growth exponent at least 1) exceeds 3 x ``--budget-s``; its rows say
``skipped (budget)``. A skipped lazyarr cell still times planning alone while
that stays under the budget, for the planning goal.

Then the growth exponent of total time vs blocks is fitted per (system,
workload) by least squares on log-log axes over the sizes >= 1,000 blocks, and
the goals of issue 10 are checked at the largest size of the run (where that
size was skipped, the numbers at the largest size measured are shown and the
goal reads "not measured"):

* exponent <= 1.1 for lazyarr on every executor (workloads 1-4 and 5a);
* numba executor overhead <= 30 µs per block: (lazyarr numba total - numpy (one
  array) total) / blocks, i.e. what splitting into blocks and scheduling them
  costs above doing the same arithmetic in one NumPy call;
* planning <= 20 µs per block, on every executor;
* lazyarr dask µs per block <= 0.5 x dask.array distributed's, same chunks and ops;
* issue 27: lazyarr dask <= 60 µs per block (workloads 1-4), and <= 3x the
  numba executor's µs per block at the same size;
* la.random in 100-element blocks within 2x of 10^6-element blocks (5b), with
  the blocks merged as by default (5c: ``array.min-chunk-size`` is 1 MiB, so the
  reblock pass merges blocks a user writes smaller). The same ratio with the
  blocks kept as written (5a, ``array.min-chunk-size: 0``) is printed as
  ``info``: 100,000 tasks of 100 elements cannot run within 2x of 10 tasks; what
  each of them costs is the per-block overhead goal above.

Results: printed tables, ``bench/results/scale.{json,md,png}`` (``scale-quick``
with ``--quick``); the PNG plots µs per block vs blocks on log-log axes, one
panel per workload (workload 5: total seconds vs elements, both block sizes).
The JSON rows also hold the process's peak RSS so far (``rss_MB``) and any
warnings raised during the timed runs.

    python bench/scale.py [--quick] [--max-blocks 3000] [--budget-s 60] [--repeat 3]
                          [--workloads 1,2,3,4,5] [--systems "lazyarr numba,dask.array threads"]
"""

from __future__ import annotations

import os

# One BLAS thread (set before NumPy loads BLAS; a setting of your own wins): the
# blocks here are 10 x 10, and on a loaded 2-core machine a multi-threaded
# OpenBLAS call of 0.1 ms (the whole-array x @ x.T floor) was seen to stall for
# 10-350 ms waiting for its second thread.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import functools  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Any  # noqa: E402

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
from report import RESULTS, Report, save_figure, versions  # noqa: E402

import lazyarr as la  # noqa: E402
from lazyarr import api  # noqa: E402
from lazyarr.executors import registry  # noqa: E402

SIZES = (100, 300, 1_000, 3_000, 10_000, 30_000, 100_000)
QUICK_MAX = 3_000
REPEAT_UP_TO = 3_000  # blocks; larger sizes run once unless a run is short
SHORT_S = 1.0  # seconds: a run this short is repeated at every size
WARM_BLOCKS = 2_000
FIT_FROM = 1_000
PREDICT_FACTOR = 3.0
NUMPY_REPEAT = 5
SEED = 42
RTOL = 1e-8

NUMPY = "numpy (one array)"
LAZY = {
    "lazyarr numba": "numba",
    "lazyarr numpy": "numpy",
    "lazyarr dask": "dask",
    "lazyarr dask per-block": "dask",
}
LAZY_SETTINGS = {"lazyarr dask per-block": {"dask.batch-tasks": False}}
"""Settings of a system beyond its executor: the dask executor with a Dask task per block
(issue 27's baseline; ``lazyarr dask`` runs a stage's blocks of one worker in batches)."""
DA_THREADS = "dask.array threads"
DA_DIST = "dask.array distributed"
SYSTEMS = (NUMPY, *LAZY, DA_THREADS, DA_DIST)
DISTRIBUTED = ("lazyarr dask", "lazyarr dask per-block", DA_DIST)
PHASES = (tuple(s for s in SYSTEMS if s not in DISTRIBUTED), DISTRIBUTED)
"""Systems in this process run first, every workload, before the LocalCluster starts: its
scheduler runs in this process (an event-loop thread that takes the GIL) and its workers
take CPU, a load that would be charged to the in-process systems' per-block cost."""


# -- workloads ---------------------------------------------------------------------------


def chain(m: Any, x: Any) -> Any:
    return m.sin(x) * 2 + m.cos(x)


@functools.cache
def lazy_random_values(n: int) -> np.ndarray:
    """lazyarr's random values for ``n`` elements, computed as one block (chunk-independent)."""
    return la.random.random(n, chunks=max(n, 1), seed=SEED).compute(executor="numpy")


@dataclass
class Case:
    """One workload at one size: the lazy array, its NumPy twin and references."""

    blocks: int
    elements: int
    lazy: Any  # the LazyArray to compute
    numpy: Callable[[], Any]  # the same computation on one NumPy array (the floor)
    want: Callable[[], Any]  # what lazyarr must return
    dask: Callable[[], Any] | None = None  # the dask.array collection (built untimed)
    dask_want: Callable[[], Any] | None = None  # what dask.array must return


def w1(blocks: int) -> Case:
    n = blocks * 100
    a = np.random.default_rng(SEED).random(n)
    want = functools.cache(lambda: chain(np, a).sum())
    return Case(
        blocks,
        n,
        chain(la, la.asarray(a, chunks=100)).sum(),
        lambda: chain(np, a).sum(),
        want,
        lambda: chain(da, da.from_array(a, chunks=100)).sum(),
        want,
    )


def w2(blocks: int) -> Case:
    n = blocks * 100

    def dask_x() -> Any:
        return da.random.default_rng(SEED).random(n, chunks=100)

    return Case(
        blocks,
        n,
        chain(la, la.random.random(n, chunks=100, seed=SEED)).sum(),
        lambda: chain(np, np.random.default_rng(SEED).random(n)).sum(),
        functools.cache(lambda: chain(np, lazy_random_values(n)).sum()),
        lambda: chain(da, dask_x()).sum(),
        functools.cache(lambda: chain(np, dask_x().compute(scheduler="threads")).sum()),
    )


def w3(blocks: int) -> Case:
    g = max(1, round(math.sqrt(blocks)))
    a = np.random.default_rng(SEED).random((10 * g, 10 * g))
    want = functools.cache(lambda: chain(np, a).sum(axis=0))
    return Case(
        g * g,
        a.size,
        chain(la, la.asarray(a, chunks=10)).sum(axis=0),
        lambda: chain(np, a).sum(axis=0),
        want,
        lambda: chain(da, da.from_array(a, chunks=10)).sum(axis=0),
        want,
    )


def w4(blocks: int) -> Case:
    c = max(1, round(blocks / 4))
    a = np.random.default_rng(SEED).random((40, 10 * c))
    x = la.asarray(a, chunks=10)
    want = functools.cache(lambda: a @ a.T)

    def dask_mm() -> Any:
        dx = da.from_array(a, chunks=10)
        return dx @ dx.T

    return Case(4 * c, a.size, x @ x.T, lambda: a @ a.T, want, dask_mm, want)


def w5(block: int) -> Callable[[int], Case]:
    def make(blocks: int) -> Case:
        n = blocks * 100
        return Case(
            -(-n // block),
            n,
            la.random.random(n, chunks=block, seed=SEED).sum(),
            lambda: np.random.default_rng(SEED).random(n).sum(),
            functools.cache(lambda: lazy_random_values(n).sum()),
        )

    return make


@dataclass(frozen=True)
class Workload:
    key: str
    name: str
    make: Callable[[int], Case]
    systems: tuple[str, ...] = SYSTEMS
    fit: bool = True  # fit the growth exponent vs blocks (5b has 1-10 blocks: no)
    settings: tuple = ()  # lazyarr settings for this workload (on top of main's)


WORKLOADS = (
    Workload("1", "1 asarray (sin*2+cos).sum()", w1),
    Workload("2", "2 random (sin*2+cos).sum()", w2),
    Workload("3", "3 2-d (sin*2+cos).sum(0)", w3),
    Workload("4", "4 x @ x.T", w4),
    Workload("5a", "5a random.sum() 100-el blocks", w5(100), (NUMPY, *LAZY)),
    Workload("5b", "5b random.sum() 1e6-el blocks", w5(10**6), (NUMPY, *LAZY), fit=False),
    Workload(
        "5c",
        "5c random.sum() 100-el blocks, merged",
        w5(100),
        (NUMPY, *LAZY),
        fit=False,
        settings=(("array.min-chunk-size", "1MiB"),),
    ),
)


# -- measuring ---------------------------------------------------------------------------


def runner(system: str, case: Case) -> tuple[Callable[[], Any], Callable[[], Any] | None, Any]:
    """(compute, plan or None, expected value) of ``case`` on ``system``."""
    if system == NUMPY:
        return case.numpy, None, None
    if system in LAZY:
        name = LAZY[system]
        settings = LAZY_SETTINGS.get(system, {})

        def compute() -> Any:
            api.clear_plan_cache()
            with la.config.set(settings):
                return case.lazy.compute(executor=name)

        def plan() -> Any:
            api.clear_plan_cache()
            return la.plan(case.lazy, executor=name)

        return compute, plan, case.want
    assert case.dask is not None and case.dask_want is not None
    coll = case.dask()
    scheduler = "threads" if system == DA_THREADS else la.cluster()
    return (lambda: dask.compute(coll, scheduler=scheduler)[0]), None, case.dask_want


def timed(fn: Callable[[], Any], seen: set[str]) -> tuple[float, Any]:
    """Seconds of one call of ``fn`` and its value; warnings it raises are added to ``seen``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        value = fn()
        seconds = time.perf_counter() - t0
    seen.update(f"{w.category.__name__}: {str(w.message)[:160]}" for w in caught)
    return seconds, value


def rss_mb() -> float:
    """Peak resident memory of this process so far, MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _correct(got: Any, want: Callable[[], Any] | None) -> Any:
    if want is None:
        return "reference"
    expected = want()
    got = np.asarray(got)
    return got.shape == np.shape(expected) and bool(np.allclose(got, expected, rtol=RTOL))


@dataclass
class Track:
    """What one (system, workload) measured so far, for the budget rule."""

    sizes: list[tuple[int, float]]  # (blocks, total seconds) measured
    plan_s: float = 0.0
    stopped: str = ""  # why later sizes are skipped ("" = still running)

    def skip_reason(self, blocks: int, budget: float) -> str:
        if self.stopped:
            return self.stopped
        if not self.sizes:
            return ""
        b1, t1 = self.sizes[-1]
        if t1 > budget:
            return f"skipped (budget: {b1:,} blocks took {t1:.0f} s)"
        slope = 1.0
        if len(self.sizes) >= 2:
            b0, t0 = self.sizes[-2]
            if t0 > 0 and b1 > b0:
                slope = max(1.0, math.log(t1 / t0) / math.log(b1 / b0))
        predicted = t1 * (blocks / b1) ** slope
        if predicted > PREDICT_FACTOR * budget:
            return f"skipped (budget: predicted {predicted:.0f} s)"
        return ""


def measure(
    system: str, wl: Workload, size: int, case: Case, track: Track, args: argparse.Namespace
) -> dict[str, Any]:
    """One row: ``system`` running ``case`` (the workload at nominal ``size`` blocks)."""
    row: dict[str, Any] = {
        "system": system,
        "workload": wl.name,
        "size": size,
        "blocks": case.blocks,
        "elements": case.elements,
    }
    seen: set[str] = set()
    reason = track.skip_reason(case.blocks, args.budget_s)
    try:
        compute, plan, want = runner(system, case)
        if reason:
            track.stopped = reason
            row["correct"] = reason
            if plan is not None and track.plan_s <= args.budget_s:  # planning goal
                track.plan_s, _ = timed(plan, seen)
                row["plan_s"] = track.plan_s
                row["plan_us_per_block"] = track.plan_s / case.blocks * 1e6
            return row
        reps = args.repeat if case.blocks <= REPEAT_UP_TO else 1
        if system == NUMPY:  # the floor: short and noisy, so more runs
            reps = max(reps, NUMPY_REPEAT)
        totals, plans, got = [], [], None
        while len(totals) < reps:
            seconds, got = timed(compute, seen)
            totals.append(seconds)
            if plan is not None:
                plans.append(timed(plan, seen)[0])
            if seconds < SHORT_S:
                reps = max(reps, args.repeat)
        # the NumPy floor takes the fastest run: its short calls suffer most from other load
        total = min(totals) if system == NUMPY else statistics.median(totals)
        row.update(total_s=total, us_per_block=total / case.blocks * 1e6)
        if plan is not None:
            track.plan_s = statistics.median(plans)
            row.update(
                plan_s=track.plan_s,
                execute_s=max(0.0, total - track.plan_s),
                plan_us_per_block=track.plan_s / case.blocks * 1e6,
            )
        elif system != NUMPY:
            row["execute_s"] = total
        row["correct"] = _correct(got, want)
        track.sizes.append((case.blocks, total))
    except Exception as e:  # recorded in the table; later sizes of this pair are skipped
        msg = f"error: {type(e).__name__}: {str(e)[:120]}"
        print(f"  {system} / {wl.name} / {case.blocks:,}: {msg}", flush=True)
        row["correct"] = track.stopped = msg
    finally:
        row["rss_MB"] = rss_mb()
        if seen:
            row["warnings"] = sorted(seen)
    return row


def warm(wl: Workload, systems: list[str], max_blocks: int) -> None:
    """One untimed compute per system: Numba kernels compiled or loaded, imports, clusters."""
    for system in systems:
        blocks = 100 if system not in LAZY else min(WARM_BLOCKS, max_blocks)
        try:
            compute, plan, _ = runner(system, wl.make(blocks))
            compute()
            if plan is not None:
                plan()
        except Exception as e:  # measure() records it at the first size
            print(f"  warm-up {system} / {wl.name}: {type(e).__name__}: {e}", flush=True)


# -- fits and goals ----------------------------------------------------------------------


def fit(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) vs log(blocks) over blocks >= FIT_FROM."""
    pts = [(b, t) for b, t in points if b >= FIT_FROM and t > 0]
    if len({b for b, _ in pts}) < 2:
        return None
    x, y = np.log([b for b, _ in pts]), np.log([t for _, t in pts])
    return float(np.polyfit(x, y, 1)[0])


def exponents(rows: list[dict], workloads: list[Workload]) -> list[dict]:
    out = []
    for wl in workloads:
        if not wl.fit:
            continue
        for system in wl.systems:
            mine = [r for r in rows if r["system"] == system and r["workload"] == wl.name]
            total = [(r["blocks"], r["total_s"]) for r in mine if "total_s" in r]
            plans = [(r["blocks"], r["plan_s"]) for r in mine if "plan_s" in r]
            if not total:
                continue
            e, pe = fit(total), fit(plans)
            out.append(
                {
                    "system": system,
                    "workload": wl.name,
                    "fitted blocks": f"{max(FIT_FROM, min(b for b, _ in total)):,}"
                    f"-{max(b for b, _ in total):,}",
                    "points": sum(1 for b, _ in total if b >= FIT_FROM),
                    "exponent": e if e is not None else "n/a",
                    "plan exponent": ("n/a" if pe is None else pe) if plans else "",
                }
            )
    return out


def _by_size(rows: list[dict], system: str, wl: str, key: str = "total_s") -> dict[int, dict]:
    """The rows of (system, workload) that measured ``key``, by nominal size."""
    return {
        r["size"]: r for r in rows if r["system"] == system and r["workload"] == wl and key in r
    }


def _largest_common(*by: dict[int, dict]) -> int | None:
    common = set(by[0]).intersection(*by[1:])
    return max(common) if common else None


def goals(
    rows: list[dict], exps: list[dict], workloads: list[Workload], top: int, systems: list[str]
) -> list[dict]:
    """Each goal of issue 10 with its numbers; a goal is judged at the run's largest size.

    Where that size was skipped, the numbers at the largest size measured are
    shown and the status is "not measured".
    """
    out: list[dict] = []
    lazy = [s for s in LAZY if s in systems]

    def add(goal: str, measured: str, target: str, value: float | None, size: int | None) -> None:
        limit = float(target.split()[1])
        if value is None or size != top:
            status = "not measured"
        elif "(as written)" in goal:  # not a goal: see the docstring
            status = "info"
        else:
            status = "met" if value <= limit else "not met"
        out.append({"goal": goal, "measured": measured, "target": target, "status": status})

    for system in lazy:
        mine = [e for e in exps if e["system"] == system and isinstance(e["exponent"], float)]
        text = ", ".join(f"w{e['workload'].split()[0]} {e['exponent']:.2f}" for e in mine)
        worst = max((e["exponent"] for e in mine), default=None)
        add(f"{system}: growth exponent, worst workload", text or "no fit", "<= 1.1", worst, top)

    main = [w for w in workloads if w.key in ("1", "2", "3", "4")]
    for wl in main if {"lazyarr numba", NUMPY} <= set(systems) else ():
        nb, base = _by_size(rows, "lazyarr numba", wl.name), _by_size(rows, NUMPY, wl.name)
        size = _largest_common(nb, base)
        over, text = None, "not measured"
        if size is not None:
            r = nb[size]
            over = (r["total_s"] - base[size]["total_s"]) / r["blocks"] * 1e6
            text = f"{over:.1f} µs/block at {r['blocks']:,} blocks"
        add(f"w{wl.key} numba executor overhead", text, "<= 30 µs/block", over, size)

    for wl in (w for w in workloads if w.fit and lazy):
        plans = [_by_size(rows, s, wl.name, "plan_s") for s in lazy]
        size = _largest_common(*plans)
        worst, text = None, "not measured"
        if size is not None:
            got = [(s.removeprefix("lazyarr "), p[size]) for s, p in zip(lazy, plans)]
            worst = max(r["plan_us_per_block"] for _, r in got)
            text = ", ".join(f"{s} {r['plan_us_per_block']:.1f}" for s, r in got)
            text += f" µs/block at {got[0][1]['blocks']:,} blocks"
        add(f"w{wl.key} planning, every executor", text, "<= 20 µs/block", worst, size)

    for wl in main if {"lazyarr dask", DA_DIST} <= set(systems) else ():
        lz, dk = _by_size(rows, "lazyarr dask", wl.name), _by_size(rows, DA_DIST, wl.name)
        size = _largest_common(lz, dk)
        ratio, text = None, "no common size"
        if size is not None:
            ratio = lz[size]["total_s"] / dk[size]["total_s"]
            text = (
                f"{ratio:.2f} ({lz[size]['us_per_block']:.0f} vs {dk[size]['us_per_block']:.0f} "
                f"µs/block at {lz[size]['blocks']:,} blocks)"
            )
        add(f"w{wl.key} lazyarr dask / dask.array distributed", text, "<= 0.5", ratio, size)

    # issue 27: the dask executor's cost per block, and against the numba executor's
    for wl in main if "lazyarr dask" in systems else ():
        lz = _by_size(rows, "lazyarr dask", wl.name)
        size = max(lz, default=None)
        us, text = None, "not measured"
        if size is not None:
            us = lz[size]["us_per_block"]
            text = f"{us:.1f} µs/block at {lz[size]['blocks']:,} blocks"
        add(f"w{wl.key} lazyarr dask per block (issue 27)", text, "<= 60 µs/block", us, size)
        nb = _by_size(rows, "lazyarr numba", wl.name)
        size = _largest_common(lz, nb)
        ratio, text = None, "no common size"
        if size is not None:
            ratio = lz[size]["us_per_block"] / nb[size]["us_per_block"]
            text = (
                f"{ratio:.1f} ({lz[size]['us_per_block']:.1f} vs {nb[size]['us_per_block']:.1f} "
                f"µs/block at {lz[size]['blocks']:,} blocks)"
            )
        add(f"w{wl.key} lazyarr dask / lazyarr numba (issue 27)", text, "<= 3", ratio, size)

    big = next((w for w in workloads if w.key == "5b"), None)
    for key, how in (("5c", "merged (default)"), ("5a", "as written")):
        small = next((w for w in workloads if w.key == key), None)
        for system in lazy if small and big else ():
            a, b = _by_size(rows, system, small.name), _by_size(rows, system, big.name)
            size = _largest_common(a, b)
            ratio, text = None, "no common size"
            if size is not None:
                ratio = a[size]["total_s"] / b[size]["total_s"]
                text = (
                    f"{ratio:.1f} ({a[size]['total_s']:.3g} s vs {b[size]['total_s']:.3g} s, "
                    f"{a[size]['elements']:,} elements)"
                )
            goal = f"{system}: random in 100-el ({how}) / 1e6-el blocks"
            add(goal, text, "<= 2", ratio, size)
    return out


# -- plot --------------------------------------------------------------------------------


def plot(rows: list[dict], workloads: list[Workload], name: str) -> None:
    """µs per block vs blocks, log-log, one line per system and one panel per workload."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (pip install -e '.[bench]')")
        return
    panels = list(dict.fromkeys(w.key[0] for w in workloads))
    cols = min(3, len(panels))
    nrows = -(-len(panels) // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 4 * nrows), squeeze=False)
    for ax, panel in zip(axes.flat, panels):
        mine = [w for w in workloads if w.key[0] == panel]
        random_panel = len(mine) > 1
        for wl in mine:
            for system in wl.systems:
                pts = sorted(
                    (
                        r["elements"] if random_panel else r["blocks"],
                        r["total_s"] if random_panel else r["us_per_block"],
                    )
                    for r in rows
                    if r["system"] == system and r["workload"] == wl.name and "total_s" in r
                )
                if pts:
                    label = f"{system} ({wl.key})" if random_panel else system
                    ax.plot(
                        *zip(*pts),
                        marker="o" if wl.fit else "s",
                        label=label,
                        color=f"C{SYSTEMS.index(system)}",
                        linestyle="--" if system == NUMPY else "-" if wl.fit else ":",
                    )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(
            mine[0].name.removeprefix("5a ")
            if not random_panel
            else "5 la.random(n).sum(): 100-el vs 1e6-el blocks",
            fontsize=9,
        )
        ax.set_xlabel("elements" if random_panel else "blocks")
        ax.set_ylabel("total seconds" if random_panel else "µs per block")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    fig.suptitle(name)
    save_figure(fig, name)


# -- main --------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"sizes up to {QUICK_MAX:,} blocks")
    parser.add_argument("--max-blocks", type=int, default=0, help="largest size to run")
    parser.add_argument("--budget-s", type=float, default=60.0, help="per-cell time budget")
    parser.add_argument("--repeat", type=int, default=3, help=f"runs up to {REPEAT_UP_TO:,} blocks")
    parser.add_argument("--workloads", default="1,2,3,4,5", help="comma-separated (5 = 5a,5b,5c)")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated")
    args = parser.parse_args()
    cap = args.max_blocks or (QUICK_MAX if args.quick else SIZES[-1])
    sizes = [s for s in SIZES if s <= cap]
    keys = set(args.workloads.split(","))
    workloads = [w for w in WORKLOADS if w.key in keys or w.key[0] in keys]
    chosen = [s.strip() for s in args.systems.split(",")]
    unknown = set(chosen) - set(SYSTEMS)
    if unknown:
        parser.error(f"unknown systems {sorted(unknown)}; known: {list(SYSTEMS)}")
    name = "scale-quick" if args.quick else "scale"
    t_start = time.perf_counter()
    la.config.set(
        {
            "progress": False,
            "dask.n-workers": 2,
            "dask.threads-per-worker": 1,
            # blocks as written (the reblock pass would merge these tiny blocks; 5c lets it)
            "array.min-chunk-size": 0,
            # compiled kernels at every size (the default leaves stages under 1 MiB to NumPy)
            "numba.compile-threshold": 0,
        }
    )
    report = Report(
        name,
        [
            "workload",
            "system",
            "blocks",
            "elements",
            "plan_s",
            "execute_s",
            "total_s",
            "us_per_block",
            "correct",
        ],
        {
            "versions": versions("lazyarr", "numpy", "numba", "dask", "distributed"),
            "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "sizes": sizes,
            "budget_s": args.budget_s,
            "repeat": args.repeat,
            "repeat_up_to_blocks": REPEAT_UP_TO,
            "warm_blocks": WARM_BLOCKS,
            "dask_cluster": "lazyarr's LocalCluster: 2 workers x 1 thread, processes, loopback",
            "load_average_start": os.getloadavg(),
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        },
    )
    try:
        for phase in PHASES:
            for wl in workloads:
                systems = [s for s in wl.systems if s in chosen and s in phase]
                if not systems:
                    continue
                print(f"\n== {wl.name}: {', '.join(systems)}", flush=True)
                with la.config.set(dict(wl.settings)):
                    warm(wl, systems, sizes[-1])
                    tracks = {s: Track([]) for s in systems}
                    for blocks in sizes:
                        case = wl.make(blocks)
                        for system in systems:
                            report.add(**measure(system, wl, blocks, case, tracks[system], args))
                        del case
                        gc.collect()
                lazy_random_values.cache_clear()
    finally:
        registry.get("dask").close()

    rows = report.rows
    exps = exponents(rows, workloads)
    goal_rows = goals(rows, exps, workloads, sizes[-1], chosen)
    report.meta.update(
        exponents=exps,
        goals=goal_rows,
        total_s=time.perf_counter() - t_start,
        load_average_end=os.getloadavg(),
    )
    order = {s: i for i, s in enumerate(SYSTEMS)}
    wl_order = {w.name: i for i, w in enumerate(WORKLOADS)}
    rows.sort(key=lambda r: (wl_order[r["workload"]], order[r["system"]], r["blocks"]))
    report.write()
    plot(rows, workloads, name)
    exp_table = Report(
        f"{name}-exponents",
        ["workload", "system", "fitted blocks", "points", "exponent", "plan exponent"],
    )
    exp_table.rows = exps
    goal_table = Report(f"{name}-goals", ["goal", "measured", "target", "status"])
    goal_table.rows = goal_rows
    print(f"\ngrowth exponents (total seconds vs blocks, sizes >= {FIT_FROM:,}):\n")
    print(exp_table.markdown())
    print(f"\ngoals (issues 10, 27) at {sizes[-1]:,} blocks:\n")
    print(goal_table.markdown())
    warned = sorted({w for r in rows for w in r.get("warnings", ())})
    if warned:
        print("\nwarnings raised during timed runs:")
        for w in warned:
            print("  " + w)
    md = RESULTS / f"{name}.md"
    md.write_text(
        f"# {name}\n\n{report.markdown()}\n\n## growth exponents\n\n{exp_table.markdown()}\n\n"
        f"## goals (issues 10, 27)\n\n{goal_table.markdown()}\n"
    )
    print(f"\nwrote {md}\ntotal {report.meta['total_s']:.0f} s")


if __name__ == "__main__":
    main()
