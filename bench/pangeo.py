"""Everyday xarray work on an OISST-shaped store: lazyarr against dask and cubed with flox.

The store: daily float32 sea-surface temperatures (time, lat, lon), chunked 20
days along time, written once with lazyarr and opened by each system with
``xr.open_zarr``. The full OISST shape (14532, 360, 720) is about 14 GiB
(``--gb 14``); the quick default (``--gb 0.5``) keeps about 7.5 years of days and
shrinks the grid. Workloads: the daily climatology
(``groupby("time.dayofyear").mean()``), anomalies against it, monthly means
(``resample(time="MS").mean()``), a 7-day rolling mean, the cos(lat)-weighted
area mean and a 2x2 ``coarsen``. Each result is written to a zarr store.

Systems, one child process per system and workload: lazyarr (numba), lazyarr
(dask, a LocalCluster of 2 workers), dask with flox (``method="cohorts"`` for
the climatology; dask's threads), cubed with flox (``method="map-reduce"``: flox
has no cohorts on cubed; through cubed-xarray; skipped with the reason when that
is not installed). lazyarr's arrays take xarray's own
groupby (flox's Dask path would hand back Dask arrays). lazyarr runs under
``memory-limit: 2GiB``, cubed with ``allowed_mem`` 2 GiB; dask has no limit.

Measured from outside (``childproc.run_sampled``): wall seconds of building the
result and of writing it, the peak RSS of the child and its workers; lazyarr's
planning seconds (``la.last_run()``); the largest chunk of the result (before
any rechunk for zarr) against the input chunk; whether the output matches
dask's (sampled). Also: lazyarr's planning time of the climatology and the
anomalies over a full-size store of about 11,600 blocks (planned, not run).

Usage: ``python bench/pangeo.py [--gb 0.5] [--systems ...] [--workloads ...]``.
Prints a table, writes ``bench/results/pangeo.json`` (and ``.md``).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from childproc import run_sampled
from report import RESULTS, Report, run_name, versions

FULL = (14532, 360, 720)
TIME_CHUNK = 20
SYSTEMS = ("lazyarr numba", "lazyarr dask", "dask flox", "cubed flox")
WORKLOADS = ("climatology", "anomalies", "monthly", "rolling7", "area_mean", "coarsen")
LIMIT = "2GiB"
PLAN_CHUNKS = (TIME_CHUNK, 90, 180)  # the full shape in ~11,600 blocks
METHODS = {"dask flox": "cohorts", "cubed flox": "map-reduce"}
"""flox's method for the climatology (flox runs only map-reduce and blockwise on cubed)."""


def shape_for(gb: float) -> tuple[int, int, int]:
    """A (time, lat, lon) float32 shape of about ``gb`` GiB: time shrinks by the square
    root of the ratio (several years stay, for the climatology), the grid by the rest."""
    full_gb = 4 * math.prod(FULL) / 2**30
    if gb >= full_gb:
        return FULL
    t = max(730, round(FULL[0] * (gb / full_gb) ** 0.5))
    pixels = gb * 2**30 / 4 / t
    scale = (pixels / (FULL[1] * FULL[2])) ** 0.5
    return (t, max(8, round(FULL[1] * scale)), max(16, round(FULL[2] * scale)))


# -- the child ---------------------------------------------------------------------------


def _open(system: str, args: dict) -> Any:
    import xarray as xr

    if system.startswith("lazyarr"):
        import lazyarr as la

        la.config.set(
            {
                "progress": False,
                "executor": system.split()[1],
                "memory-limit": LIMIT,
                "temporary-directory": args["scratch"],
                "dask.n-workers": 2,
                "dask.threads-per-worker": 1,
                "dask.dashboard": None,
            }
        )
        if system == "lazyarr dask":
            # the cluster starts before the timed part, its workers ready for tasks as
            # lazyarr starts them (Numba's CPU target, task code and zarr imported:
            # executors/dask_warmup.py), as this process is for Dask's threads
            la.dask_client()
        # Numba imported and the thread pool started before the timed part, as Dask's
        # scheduler is (the workload's own kernels still load or compile inside it)
        with la.config.set({"numba.compile-threshold": 0}):
            (la.ones(64, chunks=16) + 1).sum().compute()
        return xr.open_zarr(args["store"], chunks={}, chunked_array_type="lazyarr")
    if system == "cubed flox":
        import cubed

        # the default spec: arrays xarray makes (weights) share it with the store's
        cubed.config.set({"spec.work_dir": args["scratch"], "spec.allowed_mem": "2GB"})
        return xr.open_zarr(args["store"], chunks={}, chunked_array_type="cubed")
    return xr.open_zarr(args["store"], chunks={})


def build(workload: str, ds: Any, method: str | None) -> Any:
    """The workload's lazy result (a DataArray); ``method``: flox's, for the climatology."""
    sst = ds.sst
    cohorts = {"method": method} if method else {}
    if workload == "climatology":
        return sst.groupby("time.dayofyear").mean(**cohorts)
    if workload == "anomalies":
        days = sst.groupby("time.dayofyear")
        return days - days.mean(**cohorts)
    if workload == "monthly":
        return sst.resample(time="MS").mean()
    if workload == "rolling7":
        return sst.rolling(time=7).mean()
    if workload == "area_mean":
        return sst.weighted(np.cos(np.deg2rad(ds.lat))).mean(("lat", "lon"))
    if workload == "coarsen":
        return sst.coarsen(lat=2, lon=2, boundary="trim").mean()
    raise ValueError(f"unknown workload {workload!r}")


def child(system: str, args: dict) -> None:
    ds = _open(system, args)
    print("READY", flush=True)
    t0 = time.perf_counter()
    result = build(args["workload"], ds, METHODS.get(system))
    built = time.perf_counter() - t0
    biggest = math.prod(max(c) for c in result.chunks) * result.dtype.itemsize
    # zarr takes regular chunks only: flox's cohorts leave uneven ones (a rechunk, as a
    # user writing the result would need)
    uneven = {
        d: max(c)
        for d, c in zip(result.dims, result.chunks)
        if len(set(c[:-1])) > 1 or c[-1] > c[0]
    }
    if uneven:  # .chunk() without chunked_array_type would wrap a lazy array in Dask
        kind = {"lazyarr": "lazyarr", "cubed": "cubed"}.get(system.split()[0], "dask")
        result = result.chunk(uneven, chunked_array_type=kind)
    result.drop_vars(list(result.coords), errors="ignore").to_dataset(name="out").to_zarr(
        args["dst"], mode="w"
    )
    out: dict[str, Any] = {
        "seconds": time.perf_counter() - t0,
        "build_s": built,
        "out_chunk": biggest,
    }
    if system.startswith("lazyarr"):
        import lazyarr as la

        run = la.last_run()
        out["plan_s"] = getattr(run, "planning", None)
    print("RESULT " + json.dumps(out), flush=True)


def plan_child(args: dict) -> None:
    """Seconds lazyarr takes to plan the anomalies of a full-size store of ~11,600 blocks."""
    import pandas as pd
    import xarray as xr
    from xarray.namedarray.parallelcompat import guess_chunkmanager

    import lazyarr as la

    la.config.set({"progress": False, "memory-limit": LIMIT, "executor": "numba"})
    # xarray loads lazyarr's chunk manager (which keeps groupbys off flox) on first use
    guess_chunkmanager("lazyarr")
    data = la.random.random(FULL, chunks=PLAN_CHUNKS, seed=0, dtype=np.float32)
    time_ = pd.date_range("1981-09-01", periods=FULL[0], freq="D")
    ds = xr.Dataset(
        {"sst": (("time", "lat", "lon"), data)},
        coords={"time": time_, "lat": np.linspace(-89.875, 89.875, FULL[1])},
    )
    print("READY", flush=True)
    out = {"blocks": math.prod(len(c) for c in data.chunks)}
    for workload in ("climatology", "anomalies"):
        t0 = time.perf_counter()
        result = build(workload, ds, None)
        assert isinstance(result.data, la.LazyArray), type(result.data)
        out[f"{workload}_build_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        la.plan(result.data)
        out[f"{workload}_plan_s"] = time.perf_counter() - t1
    print("RESULT " + json.dumps(out), flush=True)


# -- the parent --------------------------------------------------------------------------


def make_store(path: Path, shape: tuple[int, int, int]) -> float:
    """Write the OISST-like store with lazyarr; return the input chunk's bytes."""
    import pandas as pd
    import xarray as xr

    import lazyarr as la

    la.config.set({"progress": False})
    chunks = (TIME_CHUNK, shape[1], shape[2])
    noise = la.random.random(shape, chunks=chunks, seed=0, dtype=np.float32)
    lat = np.linspace(-89.875, 89.875, shape[1])
    season = np.sin(np.arange(shape[0]) * 2 * np.pi / 365.25).astype(np.float32)
    sst = 15 + 10 * la.asarray(season.reshape(-1, 1, 1)) + 2 * noise
    ds = xr.Dataset(
        {"sst": (("time", "lat", "lon"), sst)},
        coords={
            "time": pd.date_range("1981-09-01", periods=shape[0], freq="D"),
            "lat": lat,
            "lon": np.linspace(0.125, 359.875, shape[2]),
        },
    )
    ds.to_zarr(str(path), mode="w", encoding={"sst": {"chunks": chunks}})
    return 4 * math.prod(chunks)


def sample(dst: str) -> np.ndarray:
    import zarr

    a = zarr.open_group(dst, mode="r")["out"]
    index = tuple(slice(0, 4) for _ in a.shape)
    return np.asarray(a[index])


def _skip_reason(system: str) -> str | None:
    import importlib.util

    if system == "cubed flox" and importlib.util.find_spec("cubed_xarray") is None:
        return "cubed-xarray is not installed (pip install cubed-xarray)"
    if system != "dask flox" and system != "cubed flox":
        return None
    return None if importlib.util.find_spec("flox") else "flox is not installed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=0.5, help="size of the store (14: the full one)")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--no-plan", action="store_true", help="skip the 11,600-block planning")
    ap.add_argument("--work", default=None, help="where the stores go (default: a temp dir)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        if a.child[0] == "plan":
            plan_child(json.loads(a.child[1]))
        else:
            child(a.child[0], json.loads(a.child[1]))
        return
    work = Path(tempfile.mkdtemp(prefix="lazyarr-bench-pangeo-", dir=a.work))
    try:
        shape = shape_for(a.gb)
        store = work / "oisst.zarr"
        in_chunk = make_store(store, shape)
        report = Report(
            run_name("pangeo", ap, a, ("gb", "systems", "workloads")),
            [
                "workload",
                "system",
                "seconds",
                "vs_dask",
                "build_s",
                "plan_s",
                "peak_MiB",
                "out_chunk_MiB",
                "matches_dask",
                "note",
            ],
            {
                "shape": shape,
                "input_chunk_MiB": in_chunk / 2**20,
                "memory_limit": LIMIT,
                "versions": versions(
                    "lazyarr", "dask", "distributed", "xarray", "flox", "cubed", "cubed-xarray"
                ),
            },
        )
        systems = a.systems.split(",")
        for workload in a.workloads.split(","):
            rows, reference = [], {}
            for system in systems:
                reason = _skip_reason(system)
                if reason:
                    rows.append({"system": system, "error": reason})
                    continue
                scratch = work / "scratch"
                shutil.rmtree(scratch, ignore_errors=True)
                scratch.mkdir()
                dst = str(work / f"out-{workload}-{system.replace(' ', '-')}.zarr")
                args = {"store": str(store), "workload": workload, "dst": dst}
                cmd = [
                    sys.executable,
                    __file__,
                    "--child",
                    system,
                    json.dumps(args | {"scratch": str(scratch)}),
                ]
                r = run_sampled(cmd, a.timeout, str(scratch))
                if "error" not in r:
                    reference[system] = sample(dst)
                rows.append({"system": system, **r})
            dask_row = next(
                (r for r in rows if r["system"] == "dask flox" and "error" not in r), None
            )
            for r in rows:
                if "error" in r:
                    report.add(workload=workload, system=r["system"], seconds=0.0, note=r["error"])
                    continue
                want = reference.get("dask flox")
                got = reference[r["system"]]
                report.add(
                    workload=workload,
                    system=r["system"],
                    seconds=r["seconds"],
                    vs_dask=r["seconds"] / dask_row["seconds"] if dask_row else "",
                    build_s=r["build_s"],
                    plan_s=r.get("plan_s") if r.get("plan_s") is not None else "",
                    peak_MiB=r["peak_MiB"],
                    out_chunk_MiB=r["out_chunk"] / 2**20,
                    matches_dask=bool(np.allclose(got, want, equal_nan=True, rtol=1e-5, atol=1e-4))
                    if want is not None and got.shape == want.shape
                    else "",
                    note="out chunk > input chunk" if r["out_chunk"] > in_chunk else "",
                )
        if not a.no_plan:
            cmd = [sys.executable, __file__, "--child", "plan", "{}"]
            r = run_sampled(cmd, a.timeout)
            report.meta["planning_at_full_size"] = r
            print(f"lazyarr planning at full size: {r}")
        report.write()
        (RESULTS / f"{report.name}.md").write_text(report.markdown() + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
