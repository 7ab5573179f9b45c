"""The memory promise across plan shapes: predicted peak against measured, under a limit.

lazyarr promises that a plan fits ``memory-limit`` or is refused before it
runs, and the memory check's predicted peak is what that promise rests on:
it must never be below what the run takes. ``rechunk.py`` checks two
workloads; this sweeps the shapes plans come in (elementwise chains, axis
reductions, a stage read by two others, two stored stages read by one, a
contraction, rechunks in memory and through a scratch store, transposed and
concatenated writes, scans, sorting, stored inputs with edge chunks, a window
over a time-chunked store, anomalies through pencil chunks), each
in its own child process under ``--limit``.

Per case the child first runs the same code on a small array (kernels
compiled or loaded, the executor's threads started: one-time costs of a
process, not of a plan; not measured), then the measured run. Measured twice:
the growth of the resident set while the run lasts as lazyarr measures it
(``la.last_run().stats.rss_growth``: sampled every 5 ms, with the kernel's
high-water mark; per worker on dask, its largest), and from outside by the
parent (every 50 ms, the sum of the child and its workers, less its value
at the start). ``ratio`` is the larger measured over predicted: above 1.0
the prediction was broken, and the row says so.

Usage: ``python bench/memory_promise.py [--limit 64MiB] [--executors numba,dask]
[--cases ...] [--mb 200]``. Prints a table, writes ``bench/results/memory_promise.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from childproc import run_sampled
from report import RESULTS, Report, run_name, versions

# -- the cases: (scale in elements, work dir) -> (thunk that computes, checks and returns) --


def _sin(b: np.ndarray) -> np.ndarray:
    return np.sin(b)


def _cos(b: np.ndarray) -> np.ndarray:
    return np.cos(b)


def _square(n: int) -> int:
    return max(64, int(np.sqrt(n)) // 64 * 64)


def chain(la: Any, n: int, work: Path) -> Callable[[], Any]:
    x = la.random.random(n, seed=1)
    return lambda: (la.sin(x) * 2 + la.cos(x)).sum().compute()


def axis_mean(la: Any, n: int, work: Path) -> Callable[[], Any]:
    k = _square(n)
    x = la.random.random((k, k), seed=2)
    return lambda: x.mean(axis=0).compute()


def standardize_to_zarr(la: Any, n: int, work: Path) -> Callable[[], Any]:
    k = _square(n)
    x = la.random.random((k, k), seed=3)
    return lambda: la.to_zarr((x - x.mean(axis=0)) / x.std(axis=0), str(work / "std.zarr"))


def two_stored_stages(la: Any, n: int, work: Path) -> Callable[[], Any]:
    k = _square(n)
    x = la.random.random((k, k), chunks=(max(1, k // 40), -1), seed=4)
    y = la.map_blocks(_sin, x, dtype=x.dtype) + la.map_blocks(_cos, x, dtype=x.dtype)
    return lambda: y.sum(axis=1).compute()


def matmul(la: Any, n: int, work: Path) -> Callable[[], Any]:
    k = _square(n // 2)
    a = la.random.random((k, k), seed=5)
    b = la.random.random((k, 256), seed=6)
    return lambda: (a @ b).compute()


def rechunk_in_memory(la: Any, n: int, work: Path) -> Callable[[], Any]:
    k = _square(n)
    x = la.random.random((k, k), chunks=(max(1, k // 16), -1), seed=7)
    return lambda: la.to_zarr(x.rechunk((-1, max(1, k // 16))), str(work / "cols.zarr"))


def pencil_from_zarr(la: Any, n: int, work: Path) -> Callable[[], Any]:
    t, s = 240, max(48, int(np.sqrt(n / 240)))
    src = str(work / "src.zarr")
    la.to_zarr(la.random.random((t, s, s), chunks=(24, s, s), seed=8, dtype=np.float32), src)
    x = la.from_zarr(src)
    return lambda: la.to_zarr(x.rechunk((t, 40, 40)), str(work / "pencil.zarr"))


def transpose_to_zarr(la: Any, n: int, work: Path) -> Callable[[], Any]:
    k = _square(n)
    x = la.random.random((k, k), chunks=(max(1, k // 16), -1), seed=9)
    return lambda: la.to_zarr(x.T, str(work / "t.zarr"))


def concat_rechunk(la: Any, n: int, work: Path) -> Callable[[], Any]:
    k = _square(n // 2)
    a = la.random.random((k, k), chunks=(max(1, k // 8), -1), seed=10)
    b = la.random.random((k, k), chunks=(max(1, k // 5), -1), seed=11)
    y = la.concatenate([a, b], axis=0).rechunk((-1, max(1, k // 8)))
    return lambda: la.to_zarr(y, str(work / "cat.zarr"))


def cumsum_to_zarr(la: Any, n: int, work: Path) -> Callable[[], Any]:
    k = _square(n)
    x = la.random.random((k, k), seed=12)
    return lambda: la.to_zarr(la.cumsum(x, axis=0), str(work / "cum.zarr"))


def sort_1d(la: Any, n: int, work: Path) -> Callable[[], Any]:
    x = la.random.random(n // 4, seed=13)
    return lambda: la.sort(x)[:: max(1, n // 400)].compute()


def zarr_edges_mean(la: Any, n: int, work: Path) -> Callable[[], Any]:
    rows = max(8, n // (181 * 359) // 25 * 25 + 7)  # an edge chunk along every axis
    src = str(work / "edges.zarr")
    x = la.random.standard_normal((rows, 181, 359), chunks=(25, 181, 359), seed=14)
    la.to_zarr(x, src)
    u = la.from_zarr(src)
    return lambda: la.stack([(u * u).mean(0), u.std(0)]).compute()


def _time_store(la: Any, n: int, work: Path) -> Any:
    """A (time, lat, lon) float32 zarr store chunked 20 steps along time, of ``n`` float64
    elements' bytes (the Pangeo shape: ``bench/pangeo.py``), opened lazily."""
    lat = max(16, int(np.sqrt(n / 600)))
    src = str(work / "time.zarr")
    x = la.random.random((600, lat, 2 * lat), chunks=(20, lat, 2 * lat), seed=15, dtype=np.float32)
    la.to_zarr(x, src)
    return la.from_zarr(src)


def _trailing_mean(b: np.ndarray) -> np.ndarray:
    return np.cumsum(b, axis=0, dtype=np.float32)  # a window's stand-in: block plus halo


def window_from_zarr(la: Any, n: int, work: Path) -> Callable[[], Any]:
    x = _time_store(la, n, work)
    y = la.map_overlap(_trailing_mean, x, depth={0: 6}, boundary="none", dtype=np.float32)
    return lambda: la.to_zarr(y, str(work / "window.zarr"))


def anomaly_pencils(la: Any, n: int, work: Path) -> Callable[[], Any]:
    x = _time_store(la, n, work)
    pencils = x.rechunk((-1, max(1, x.shape[1] // 4), max(1, x.shape[2] // 7)))
    y = x - pencils.mean(axis=0)
    return lambda: la.to_zarr(y, str(work / "anomaly.zarr"))


WARM_ELEMENTS = 2_000_000
"""The warm-up's size: enough data that the executor starts its threads (a run of less than
a MiB runs in the calling thread)."""

CASES: dict[str, Callable[..., Callable[[], Any]]] = {
    f.__name__: f
    for f in (
        chain,
        axis_mean,
        standardize_to_zarr,
        two_stored_stages,
        matmul,
        rechunk_in_memory,
        pencil_from_zarr,
        transpose_to_zarr,
        concat_rechunk,
        cumsum_to_zarr,
        sort_1d,
        zarr_edges_mean,
        window_from_zarr,
        anomaly_pencils,
    )
}


# -- the child ---------------------------------------------------------------------------


def child(args: dict) -> None:
    import lazyarr as la

    work = Path(args["work"])
    la.config.set(
        {
            "progress": False,
            "memory-limit": args["limit"],
            "temporary-directory": str(work / "scratch"),
            "dask.n-workers": 2,
            "dask.threads-per-worker": 1,
        }
    )
    la.config.set({"executor": args["executor"]})
    make = CASES[args["case"]]
    (work / "small").mkdir()
    with la.config.set({"numba.compile-threshold": 0}):  # compiled or loaded, the executor's
        make(la, WARM_ELEMENTS, work / "small")()  # threads started: not measured
    if args["executor"] == "dask":  # and in every worker (a small plan's tasks reach few)
        client = la.api.resolve_executor("dask").client()
        client.run(_warm_worker, args["case"], str(work / "small-worker"))
    big = work / "big"
    big.mkdir()
    run = make(la, args["elements"], big)
    print("READY", flush=True)
    t0 = time.perf_counter()
    run()
    seconds = time.perf_counter() - t0
    last = la.last_run()
    out = {
        "seconds": seconds,
        "predicted": last.predicted_peak,
        "self": last.stats.rss_growth,
        "held": last.stats.peak_bytes,
    }
    print("RESULT " + json.dumps(out), flush=True)


def _warm_worker(case: str, where: str) -> None:
    """The small case run inside a Dask worker on its own threads: its kernels compiled."""
    import os

    import lazyarr as la

    work = Path(f"{where}-{os.getpid()}")
    work.mkdir(parents=True, exist_ok=True)
    with la.config.set({"numba.compile-threshold": 0, "executor": "numba", "memory-limit": None}):
        CASES[case](la, WARM_ELEMENTS, work)()
    shutil.rmtree(work, ignore_errors=True)


# -- the parent --------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", default="64MiB")
    ap.add_argument("--mb", type=float, default=200, help="float64 MB of each case's data")
    ap.add_argument("--executors", default="numba,dask")
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(json.loads(a.child))
        return
    report = Report(
        run_name("memory_promise", ap, a, ("limit", "mb", "executors", "cases")),
        [
            "case",
            "executor",
            "seconds",
            "predicted_MiB",
            "self_MiB",
            "outside_MiB",
            "held_MiB",
            "ratio",
            "kept",
        ],
        {"limit": a.limit, "mb": a.mb, "versions": versions("lazyarr", "numba", "dask", "zarr")},
    )
    elements = int(a.mb * 1e6 / 8)
    for executor in a.executors.split(","):
        for case in a.cases.split(","):
            work = Path(tempfile.mkdtemp(prefix=f"lazyarr-promise-{case}-"))
            try:
                args = {
                    "case": case,
                    "executor": executor,
                    "limit": a.limit,
                    "elements": elements,
                    "work": str(work),
                }
                cmd = [sys.executable, __file__, "--child", json.dumps(args)]
                r = run_sampled(cmd, a.timeout, str(work / "scratch"))
            finally:
                shutil.rmtree(work, ignore_errors=True)
            if "error" in r:
                report.add(case=case, executor=executor, kept=r["error"][-120:])
                continue
            pred, own = r.get("predicted"), r.get("self")
            outside = (r["peak_MiB"] - r["base_MiB"]) * 2**20
            worst = max(own or 0, outside if executor == "numba" else 0)
            ratio = worst / pred if pred else None
            report.add(
                case=case,
                executor=executor,
                seconds=r["seconds"],
                predicted_MiB=pred / 2**20 if pred else "",
                self_MiB=own / 2**20 if own is not None else "",
                outside_MiB=outside / 2**20,
                held_MiB=r["held"] / 2**20 if r.get("held") else "",
                ratio=ratio if ratio is not None else "",
                kept="" if ratio is None else ("yes" if ratio <= 1.0 else "BROKEN"),
            )
    report.write()
    (RESULTS / f"{report.name}.md").write_text(report.markdown() + "\n")


if __name__ == "__main__":
    main()
