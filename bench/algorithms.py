"""Top-k, unique, tall-skinny QR and sort: lazyarr against NumPy and dask.array (issue 13).

Every system runs in one process and one run, side by side on the same sizes
and chunks:

* ``numpy``: one NumPy call on an in-memory array (the array is made before,
  untimed; it holds lazyarr's values, which do not depend on the chunks);
* ``lazyarr numba``: ``.compute(executor="numba")``;
* ``lazyarr dask``: ``.compute(executor="dask")`` on lazyarr's own
  ``LocalCluster`` (``dask.n-workers`` 4, ``dask.threads-per-worker`` 1,
  ``dask.processes`` True, loopback);
* ``dask.array distributed``: the same collection computed on that same
  cluster (its client is ``la.cluster()``), so both distributed systems use the
  same four worker processes;
* ``dask.array threads``: ``dask.compute(..., scheduler="threads")``.

Operations (``blocks`` = 32 blocks along the long axis, for every system):

1. ``topk``: the k = 100 largest of N float64 generated in the plan
   (``la.topk(la.random.random(N, chunks=N/32, seed=0), 100)``;
   ``da.topk(da.random.default_rng(0).random(N, chunks=N/32), 100)``; NumPy:
   ``np.partition`` of the in-memory array, then a sort of the last 100);
2. ``unique``: the sorted unique values of M int64 drawn from 10^6 values
   (``la.unique_values(la.random.integers(0, 10**6, M, ...))``; ``da.unique``
   of ``da.random.default_rng(1).integers``; ``np.unique``). ``la.unique_values``
   is lazy: a sample sort keeping the blocks, a count of the distinct values per
   block, then their selection (a deferred array); checked as a set;
3. ``tsqr``: ``(Q, R)`` of an R x 50 float64 array in 32 row blocks
   (``la.linalg.tsqr``; ``da.linalg.tsqr``; ``np.linalg.qr``), both factors
   brought back to this process; checked as ``Q[:s] @ R == A[:s]`` on the
   first rows (``s`` = 2,000);
4. ``sort``: S float64 in 32 blocks (``la.sort``; ``np.sort``). ``la.sort`` is a
   sample sort whose output keeps the 32 blocks (the note column gives the
   output's block count; inter-worker bytes show each element moving about
   once); dask.array has no global sort, so it has no row. ``la.sort`` is
   stable by default and ``np.sort`` (default kind) is not: NumPy's stable
   sort of 2e7 float64 was about 3.5x its default on the 2-core machine this
   was written on.

Sizes: default N = 2e8, M = 2e7, R = 2,000,000, S = 2e7 (a few minutes on a
2-core machine); ``--quick`` is 100x smaller (a smoke run); ``--full`` is
issue 13's sizes: N = 10^9 (needs about 20 GB for NumPy's copy and
partition), M = 10^8, R = 4,000,000, S = 2e8.

Per row:

* ``seconds``: median of ``--repeat`` (3) timed runs after one untimed
  warm-up run (kernels compiled, cluster started, data not cached: every run
  generates its input again);
* ``vs numpy``: seconds / NumPy's seconds on the same operation (below 1 is
  faster than NumPy; NumPy's time excludes making its input);
* ``inter-worker MB``: bytes workers fetched from other workers during the
  last timed run, the sum of the ``"total"`` of every entry of each worker's
  ``Worker.transfer_incoming_log`` (distributed 2026.8; cleared with
  ``client.run`` before the run, read after), the same count for lazyarr and
  dask.array. Results sent to this process are not included. For lazyarr the
  JSON also keeps ``la.last_run().stats.extra["measured_bytes"]`` (its own
  worker plugin's count, ``lazyarr_measured_MB``);
* ``max MB into one worker``: the largest per-worker share of that sum;
* ``peak worker MB``: the largest peak of managed memory (Dask's
  ``worker.state.nbytes``, the sizes of the blocks held, not RSS) on any
  worker during the run, from lazyarr's stats plugin (``executors.dask_stats``),
  reset before each run and read after, for both lazyarr and dask.array;
* ``correct``: lazyarr rows equal NumPy's result on the same values (topk and
  sort exactly, unique as a set; tsqr as ``Q @ R`` close to ``A`` with rtol 1e-8 on the
  sample); dask.array's values are its own, so its rows compare
  distributed with threads (``== threads``) and tsqr reconstructs its input.

BLAS threads are left as installed for NumPy and lazyarr numba (Dask's
nanny sets one thread per worker process).

Results: the printed table, ``bench/results/algorithms.{json,md,png}``
(``algorithms-quick`` with ``--quick``, ``algorithms-full`` with ``--full``).

    python bench/algorithms.py [--quick | --full] [--repeat 3] [--ops topk,unique,tsqr,sort]
                               [--systems "numpy,lazyarr numba,..."]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dask
import dask.array as da
import numpy as np
from report import RESULTS, Report, save_figure, versions

import lazyarr as la
from lazyarr.executors import dask_stats, registry

K = 100
DISTINCT = 10**6
COLS = 50
BLOCKS = 32
SAMPLE = 2_000
WORKERS = 4
MB = 1e6

SIZES = {
    "quick": {"topk": 2_000_000, "unique": 200_000, "tsqr": 20_000, "sort": 200_000},
    "default": {"topk": 200_000_000, "unique": 20_000_000, "tsqr": 2_000_000, "sort": 20_000_000},
    "full": {"topk": 10**9, "unique": 10**8, "tsqr": 4_000_000, "sort": 200_000_000},
}

NUMPY = "numpy"
LA_NUMBA = "lazyarr numba"
LA_DASK = "lazyarr dask"
DA_DIST = "dask.array distributed"
DA_THREADS = "dask.array threads"
SYSTEMS = (NUMPY, LA_NUMBA, LA_DASK, DA_DIST, DA_THREADS)
DISTRIBUTED = (LA_DASK, DA_DIST)
OPS = ("topk", "unique", "tsqr", "sort")


# -- per-worker counters ------------------------------------------------------------------


def _clear_log(dask_worker: Any) -> None:
    dask_worker.transfer_incoming_log.clear()


def _log_bytes(dask_worker: Any) -> int:
    return int(sum(e["total"] for e in list(dask_worker.transfer_incoming_log)))


def counters_reset(client: Any) -> None:
    client.run(_clear_log)
    dask_stats.ensure_plugin(client)
    dask_stats.reset(client)


def counters_read(client: Any) -> dict[str, float]:
    per = client.run(_log_bytes)
    _, workers, _ = dask_stats.summarize(dask_stats.snapshot(client))
    return {
        "inter_worker_MB": sum(per.values()) / MB,
        "max_into_one_MB": max(per.values(), default=0) / MB,
        "peak_worker_MB": max((w["peak_memory"] for w in workers.values()), default=0) / MB,
    }


# -- operations ---------------------------------------------------------------------------


@dataclass
class Case:
    """One operation at one size: a callable per system, and how to check each result."""

    op: str
    size: str
    runs: dict[str, Callable[[], Any]]
    check: dict[str, Callable[[Any, dict[str, Any]], Any]]
    note: dict[str, str] = field(default_factory=dict)


def np_topk(a: np.ndarray, k: int) -> np.ndarray:
    part = np.partition(a, a.size - k)[a.size - k :]
    return np.sort(part)[::-1]


def same_as(other: str) -> Callable[[Any, dict[str, Any]], Any]:
    def check(got: Any, results: dict[str, Any]) -> Any:
        if other not in results:
            return "no reference"
        want = results[other]
        if isinstance(got, tuple):
            return all(np.allclose(g, w, rtol=1e-8) for g, w in zip(got, want))
        return bool(np.array_equal(got, want))

    return check


def equals(want: Callable[[], Any], order: bool = True) -> Callable[[Any, dict[str, Any]], Any]:
    """Equal to ``want()``; with ``order=False`` as sets (sorted first)."""
    return lambda got, _: bool(np.array_equal(got if order else np.sort(got), want()))


def dask_runs(build: Callable[[], Any]) -> dict[str, Callable[[], Any]]:
    def dist() -> Any:
        out = dask.compute(*build(), scheduler=la.cluster())
        return out if len(out) > 1 else out[0]

    def threads() -> Any:
        out = dask.compute(*build(), scheduler="threads")
        return out if len(out) > 1 else out[0]

    return {DA_DIST: dist, DA_THREADS: threads}


def lazy_runs(build: Callable[[], Any]) -> dict[str, Callable[[], Any]]:
    def run(executor: str) -> Callable[[], Any]:
        def go() -> Any:
            with la.config.set({"executor": executor}):
                arrays = build()
                out = la.compute(*arrays, executor=executor)
            return out if len(out) > 1 else out[0]

        return go

    return {LA_NUMBA: run("numba"), LA_DASK: run("dask")}


def case_topk(n: int) -> Case:
    c = -(-n // BLOCKS)
    a = la.random.random(n, chunks=c, seed=0).compute(executor="numba")
    want = np_topk(a, K)
    runs = {
        NUMPY: lambda: np_topk(a, K),
        **lazy_runs(lambda: (la.topk(la.random.random(n, chunks=c, seed=0), K),)),
        **dask_runs(lambda: (da.topk(da.random.default_rng(0).random(n, chunks=c), K),)),
    }
    check = {LA_NUMBA: equals(lambda: want), LA_DASK: equals(lambda: want)}
    check |= {DA_DIST: same_as(DA_THREADS), DA_THREADS: same_as(DA_DIST)}
    return Case("topk", f"{n:.3g} float64, k={K}", runs, check)


def case_unique(m: int) -> Case:
    c = -(-m // BLOCKS)

    def lazy_x() -> Any:
        return la.random.integers(0, DISTINCT, m, chunks=c, seed=1)

    a = lazy_x().compute(executor="numba")
    want = np.unique(a)
    runs = {
        NUMPY: lambda: np.unique(a),
        **lazy_runs(lambda: (la.unique_values(lazy_x()),)),
        **dask_runs(
            lambda: (da.unique(da.random.default_rng(1).integers(0, DISTINCT, m, chunks=c)),)
        ),
    }
    same_set = {s: equals(lambda: want, order=False) for s in (LA_NUMBA, LA_DASK)}
    check = same_set | {DA_DIST: same_as(DA_THREADS), DA_THREADS: same_as(DA_DIST)}
    text = "sample sort, counted per block, then selected (sorted, blocks kept)"
    note = {LA_NUMBA: text, LA_DASK: text}
    return Case("unique", f"{m:.3g} int64 in [0, {DISTINCT:.0e})", runs, check, note)


def case_tsqr(rows: int) -> Case:
    c = (-(-rows // BLOCKS), COLS)

    def lazy_x() -> Any:
        return la.random.random((rows, COLS), chunks=c, seed=2)

    def dask_x() -> Any:
        return da.random.default_rng(2).random((rows, COLS), chunks=c)

    a = lazy_x().compute(executor="numba")
    dask_sample = dask_x()[:SAMPLE].compute(scheduler="threads")

    def reconstructs(sample: np.ndarray) -> Callable[[Any, dict[str, Any]], Any]:
        def check(got: Any, _: dict[str, Any]) -> Any:
            q, r = got
            return bool(np.allclose(q[:SAMPLE] @ r, sample, rtol=1e-8, atol=1e-10))

        return check

    runs = {
        NUMPY: lambda: np.linalg.qr(a),
        **lazy_runs(lambda: la.linalg.tsqr(lazy_x())),
        **dask_runs(lambda: da.linalg.tsqr(dask_x())),
    }
    check = {s: reconstructs(a[:SAMPLE]) for s in (NUMPY, LA_NUMBA, LA_DASK)}
    check |= {s: reconstructs(dask_sample) for s in (DA_DIST, DA_THREADS)}
    return Case("tsqr", f"{rows:,} x {COLS} float64", runs, check)


def case_sort(s: int) -> Case:
    c = -(-s // BLOCKS)

    def lazy_sorted() -> Any:
        return la.sort(la.random.random(s, chunks=c, seed=3))

    a = la.random.random(s, chunks=c, seed=3).compute(executor="numba")
    want = np.sort(a)
    runs = {NUMPY: lambda: np.sort(a), **lazy_runs(lambda: (lazy_sorted(),))}
    check = {LA_NUMBA: equals(lambda: want), LA_DASK: equals(lambda: want)}
    out_blocks = len(lazy_sorted().chunks[0])
    how = "sample sort" if out_blocks > 1 else "one-block sort"
    text = (
        f"{how}: output in {out_blocks} block(s) from {BLOCKS}; "
        "stable (np.sort's default kind is not)"
    )
    note = {LA_NUMBA: text, LA_DASK: text, NUMPY: ""}
    return Case("sort", f"{s:.3g} float64", runs, check, note)


CASES = {"topk": case_topk, "unique": case_unique, "tsqr": case_tsqr, "sort": case_sort}


# -- measuring ----------------------------------------------------------------------------


def measure(case: Case, system: str, repeat: int, results: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"op": case.op, "size": case.size, "system": system}
    run = case.runs[system]
    client = la.cluster() if system in DISTRIBUTED else None
    run()  # warm-up (untimed)
    times, counters, got = [], {}, None
    for _ in range(repeat):
        if client is not None:
            counters_reset(client)
        t0 = time.perf_counter()
        got = run()
        times.append(time.perf_counter() - t0)
        if client is not None:
            counters = counters_read(client)
    row["seconds"] = statistics.median(times)
    row["runs_s"] = times
    row |= counters
    if system == LA_DASK:
        last = la.last_run()
        measured = last.stats.extra.get("measured_bytes") if last and last.stats else None
        row["lazyarr_measured_MB"] = measured / MB if measured is not None else None
    results[system] = got
    checker = case.check.get(system)
    row["correct"] = checker(got, results) if checker else "reference"
    row["note"] = case.note.get(system, "")
    return row


def plot(rows: list[dict], name: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no chart (pip install -e '.[bench]')")
        return
    ops = list(dict.fromkeys(r["op"] for r in rows))
    fig, axes = plt.subplots(1, len(ops), figsize=(4 * len(ops), 4), squeeze=False)
    for ax, op in zip(axes.flat, ops):
        mine = [r for r in rows if r["op"] == op and "seconds" in r]
        ax.bar(
            range(len(mine)),
            [r["seconds"] for r in mine],
            color=[f"C{SYSTEMS.index(r['system'])}" for r in mine],
        )
        ax.set_xticks(range(len(mine)), [r["system"] for r in mine], rotation=35, ha="right")
        ax.set_ylabel("seconds (median)")
        ax.set_title(f"{op}: {mine[0]['size']}" if mine else op, fontsize=9)
    fig.suptitle(name)
    save_figure(fig, name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="100x smaller sizes (smoke run)")
    size.add_argument("--full", action="store_true", help="issue 13's sizes")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs after one warm-up")
    parser.add_argument("--ops", default=",".join(OPS), help="comma-separated")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated")
    args = parser.parse_args()
    mode = "quick" if args.quick else "full" if args.full else "default"
    name = {"quick": "algorithms-quick", "full": "algorithms-full"}.get(mode, "algorithms")
    ops = [o.strip() for o in args.ops.split(",")]
    chosen = [s.strip() for s in args.systems.split(",")]
    unknown = (set(ops) - set(OPS)) | (set(chosen) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown {sorted(unknown)}; ops {list(OPS)}, systems {list(SYSTEMS)}")
    la.config.set(
        {
            "progress": False,
            "dask.n-workers": WORKERS,
            "dask.threads-per-worker": 1,
            "dask.processes": True,
        }
    )
    t_start = time.perf_counter()
    report = Report(
        name,
        [
            "op",
            "size",
            "system",
            "seconds",
            "vs numpy",
            "inter_worker_MB",
            "max_into_one_MB",
            "peak_worker_MB",
            "correct",
            "note",
        ],
        {
            "versions": versions("lazyarr", "numpy", "numba", "dask", "distributed"),
            "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "sizes": SIZES[mode],
            "blocks": BLOCKS,
            "repeat": args.repeat,
            "dask_cluster": f"lazyarr's LocalCluster: {WORKERS} workers x 1 thread, processes, "
            "loopback; dask.array distributed runs on the same cluster",
            "bytes": "sum of Worker.transfer_incoming_log 'total' per worker (last timed run)",
            "peak": "max over workers of peak managed memory (worker.state.nbytes)",
            "load_average_start": os.getloadavg(),
        },
    )
    try:
        for op in ops:
            print(f"\n== {op} ({SIZES[mode][op]:,})", flush=True)
            case = CASES[op](SIZES[mode][op])
            results: dict[str, Any] = {}
            base = None
            for system in [s for s in SYSTEMS if s in chosen and s in case.runs]:
                row = measure(case, system, args.repeat, results)
                if system == NUMPY:
                    base = row["seconds"]
                row["vs numpy"] = row["seconds"] / base if base else None
                report.add(**row)
            if DA_DIST in results and DA_THREADS in results:  # threads was checked first
                for r in report.rows:
                    if r["op"] == op and r["system"] == DA_DIST:
                        r["correct"] = same_as(DA_THREADS)(results[DA_DIST], results)
            del case, results
    finally:
        registry.get("dask").close()
    report.meta.update(total_s=time.perf_counter() - t_start, load_average_end=os.getloadavg())
    report.write()
    plot(report.rows, name)
    md = RESULTS / f"{name}.md"
    md.write_text(f"# {name}\n\n{report.markdown()}\n")
    print(f"wrote {md}\ntotal {report.meta['total_s']:.0f} s")


if __name__ == "__main__":
    main()
