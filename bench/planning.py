"""Seconds lazyarr spends planning the pangeo workloads, nothing computed.

The issue's goal: a plan built in at most one second at 10,000 blocks. The
arrays are those of ``bench/pangeo.py`` (daily float32 (time, lat, lon),
chunked 20 days along time, a 360x720 grid cut in 4x4 blocks), generated
(``la.random``) so nothing is read; ``--blocks`` sets the number of input
blocks (time grows, the grid stays). Each workload's xarray result is built
once, then planned as a compute on the numba executor plans it (the passes
and, under ``memory-limit``, the memory check with its fan-out sweep and the
executor's byte budget), with the plan cache cleared before each try, once
without a memory limit and once under ``memory-limit: 2GiB``. ``peak_MiB`` is
the predicted peak with the result gathered into the process (the pangeo
benchmark writes it to zarr instead, so its check is not made here).

Usage: ``python bench/planning.py [--blocks 2000] [--workloads ...] [--profile W]``
(``--blocks 10000`` for the goal's size).
``--profile climatology`` prints cProfile's top functions of that workload's
planning under the memory limit. Prints a table, writes
``bench/results/planning.json``.
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import time
from typing import Any

import numpy as np
from pangeo import LIMIT, TIME_CHUNK, WORKLOADS, build
from report import Report, versions

GRID = (360, 720)
BLOCKS_PER_STEP = 16  # the grid in 4x4 blocks of 90x180
QUICK_BLOCKS = 2000


def dataset(blocks: int) -> Any:
    """The pangeo dataset of about ``blocks`` input blocks, on lazyarr (nothing read)."""
    import pandas as pd
    import xarray as xr
    from xarray.namedarray.parallelcompat import guess_chunkmanager

    import lazyarr as la

    guess_chunkmanager("lazyarr")  # xarray loads lazyarr's chunk manager on first use
    days = max(1, blocks // BLOCKS_PER_STEP) * TIME_CHUNK
    shape = (days, *GRID)
    chunks = (TIME_CHUNK, GRID[0] // 4, GRID[1] // 4)
    data = la.random.random(shape, chunks=chunks, seed=0, dtype=np.float32)
    return xr.Dataset(
        {"sst": (("time", "lat", "lon"), data)},
        coords={
            "time": pd.date_range("1981-09-01", periods=days, freq="D"),
            "lat": np.linspace(-89.875, 89.875, GRID[0]),
            "lon": np.linspace(0.125, 359.875, GRID[1]),
        },
    )


def plan_once(expr: Any, limit: str | None) -> tuple[float, float, int, int | None]:
    """Seconds to plan ``expr`` as a compute on the numba executor would (the passes, and
    under ``limit`` the memory check and the executor's byte budget), its stages and
    predicted peak; wall and CPU seconds (CPU: what a loaded machine does not inflate).
    Results are not checked against the limit as gathered: the workloads write them."""
    import lazyarr as la
    from lazyarr import api
    from lazyarr.optimize.memory import in_flight_budget

    api.clear_plan_cache()
    with la.config.set({"memory-limit": limit, "executor": "numba"}):
        t0, c0 = time.perf_counter(), time.process_time()
        ex = api.resolve_executor(None)
        ctx = api.pass_context(ex.name, False, ex.plan_context())
        plan = api.make_plan([expr], ex.name, api.passes_for(None, None), ctx=ctx)
        peak = None
        if ctx.memory_limit is not None:
            peak = api.memory_estimate(plan, ctx).peak
            in_flight_budget(plan, ctx.memory_limit, True, False)
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return seconds, cpu, len(plan.stages), peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=QUICK_BLOCKS, help="input blocks (goal: 10000)")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--repeat", type=int, default=1, help="tries per setting (the best is kept)")
    ap.add_argument("--profile", default=None, help="a workload to profile under memory-limit")
    a = ap.parse_args()

    import lazyarr as la
    from lazyarr._convert import as_expr

    la.config.set({"progress": False})
    ds = dataset(a.blocks)
    blocks = math.prod(len(c) for c in ds.sst.data.chunks)
    report = Report(
        "planning",
        [
            "workload",
            "blocks",
            "stages",
            "build_s",
            "plan_s",
            "plan_limited_s",
            "plan_limited_cpu_s",
            "peak_MiB",
        ],
        {"memory_limit": LIMIT, "versions": versions("lazyarr", "xarray", "numpy")},
    )
    for workload in a.workloads.split(","):
        t0 = time.perf_counter()
        expr = as_expr(build(workload, ds, None).data)
        built = time.perf_counter() - t0
        free = min(plan_once(expr, None)[0] for _ in range(a.repeat))
        tries = [plan_once(expr, LIMIT) for _ in range(a.repeat)]
        report.add(
            workload=workload,
            blocks=blocks,
            stages=tries[0][2],
            build_s=built,
            plan_s=free,
            plan_limited_s=min(t[0] for t in tries),
            plan_limited_cpu_s=min(t[1] for t in tries),
            peak_MiB=tries[0][3] / 2**20,
        )
        if workload == a.profile:
            prof = cProfile.Profile()
            prof.runcall(plan_once, expr, LIMIT)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(30)
    report.write()


if __name__ == "__main__":
    main()
