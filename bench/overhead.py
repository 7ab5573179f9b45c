"""Per-compute overhead on tiny arrays, and graph-build cost per op.

lazyarr, Dask array and NumPy side by side in one process. The goal
(issue 2): a tiny ``.compute()`` costs <= 100 µs of lazyarr overhead.

    python bench/overhead.py [--quick]
"""

from __future__ import annotations

import argparse
import time

import dask
import dask.array as da
import numpy as np
from report import Report, timeit, versions

import lazyarr as la


def tiny_workloads(quick: bool) -> list[tuple[str, object, object, object]]:
    """(name, lazyarr thunk, dask thunk, numpy thunk) per tiny workload."""
    n = np.arange(10.0)
    lx = la.asarray(n)
    dx = da.from_array(n)
    cached = (lx * 2 + 1).sum()
    dcached = (dx * 2 + 1).sum()
    scalar = la.asarray(np.float64(3.0))
    return [
        ("float(x[3])", lambda: float(lx[3]), lambda: float(dx[3].compute()), lambda: float(n[3])),
        (
            "(x*2+1).sum() built+computed",
            lambda: (lx * 2 + 1).sum().compute(),
            lambda: (dx * 2 + 1).sum().compute(),
            lambda: (n * 2 + 1).sum(),
        ),
        (
            "same expression, computed again",
            cached.compute,
            dcached.compute,
            lambda: (n * 2 + 1).sum(),
        ),
        (
            "0-d: (s + 1).compute()",
            lambda: (scalar + 1).compute(),
            lambda: (da.from_array(np.float64(3.0)) + 1).compute(),
            lambda: np.float64(3.0) + 1,
        ),
    ]


def build_cost(n_ops: int) -> dict[str, float]:
    """Seconds per op to write an elementwise chain of ``n_ops`` ops (nothing computed)."""
    x0 = la.ones((1000,), chunks=100)
    t0 = time.perf_counter()
    x = x0
    for i in range(n_ops):
        x = x * 1.0001 + i
    t_la = (time.perf_counter() - t0) / (2 * n_ops)
    t0 = time.perf_counter()
    plan = la.plan(x)
    t_plan = (time.perf_counter() - t0) / (2 * n_ops)
    d = da.ones((1000,), chunks=100)
    t0 = time.perf_counter()
    for i in range(n_ops):
        d = d * 1.0001 + i
    t_da = (time.perf_counter() - t0) / (2 * n_ops)
    t0 = time.perf_counter()
    dask.optimize(d)
    t_dopt = (time.perf_counter() - t0) / (2 * n_ops)
    return {
        "lazyarr build": t_la,
        "lazyarr plan": t_plan,
        "dask build": t_da,
        "dask optimize": t_dopt,
        "stages": len(plan.stages),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = p.parse_args()
    number = 200 if args.quick else 2000
    report = Report(
        "overhead",
        ["workload", "tool", "median_us", "min_us", "x_numpy"],
        meta={
            "versions": versions("lazyarr", "numpy", "dask", "networkx", "numba"),
            "executor": la.config.get("executor"),
        },
    )
    with dask.config.set(scheduler="sync"), la.config.set(progress=False):  # default executor
        for name, f_la, f_da, f_np in tiny_workloads(args.quick):
            base = timeit(f_np, repeat=5, number=number)["median"]
            for tool, fn in (("numpy", f_np), ("lazyarr", f_la), ("dask (sync)", f_da)):
                fn()  # warm: imports, plan cache
                t = timeit(fn, repeat=5, number=number if tool != "dask (sync)" else number // 10)
                report.add(
                    workload=name,
                    tool=tool,
                    median_us=t["median"] * 1e6,
                    min_us=t["min"] * 1e6,
                    x_numpy=t["median"] / base,
                )
        cost = build_cost(500 if args.quick else 2000)
    for k in ("lazyarr build", "lazyarr plan", "dask build", "dask optimize"):
        report.add(workload="cost per op (2000-op chain)", tool=k, median_us=cost[k] * 1e6)
    report.write(plot=("workload", "median_us", "tool"))


if __name__ == "__main__":
    main()
