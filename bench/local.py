"""One machine, five workloads: lazyarr (numba executor) against what a user would pick instead.

Side by side in one process on the same data: lazyarr warm (kernels
compiled), lazyarr cold (a fresh process that finds its kernels in the disk
cache), NumPy, numexpr, Dask array (threaded scheduler, same chunks) and a
hand-written ``numba.njit(parallel=True)`` loop (what a Numba user would write;
not a ceiling: LLVM compiles its w1 and w4 loops to one latency-bound chain per
element, where lazyarr's kernels run several vector chains at once). For each:
median seconds of ``--repeat`` runs, GB/s of input read, speed relative to
NumPy (NumPy seconds / tool seconds) and peak memory above the inputs,
measured with ``tracemalloc`` in a separate untimed run (NumPy, numexpr,
Dask and lazyarr allocate their arrays through NumPy, which reports to
tracemalloc; the hand-written loop gets its output preallocated).

Workloads (issue 3): (1) ``sqrt((x - y)**2 / (1 + |y|)).sum()`` on two
float64 vectors; (2) ``a * b + c``; (3) standardize columns
``(x - x.mean(0)) / x.std(0)``; (4) a 200-op elementwise chain; (5) a mixed
float32/int64 expression.

    python bench/local.py [--quick] [--repeat 5] [--only 1,3]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from report import Report, timeit, versions

import lazyarr as la

HERE = Path(__file__).resolve().parent
THREADS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()

FULL = {1: 50_000_000, 2: 20_000_000, 3: (20_000, 2_000), 4: 10_000_000, 5: 20_000_000}
QUICK = {1: 1_000_000, 2: 1_000_000, 3: (2_000, 200), 4: 200_000, 5: 1_000_000}
CHAIN = 200


@dataclasses.dataclass
class Workload:
    """One benchmark: its data and the same computation written for every tool."""

    number: int
    name: str
    data: Callable[[Any], dict[str, np.ndarray]]
    expr: Callable[..., Any]  # expr(module, **arrays) for lazyarr, NumPy and Dask alike
    numexpr: Callable[..., Any]


def _rng() -> np.random.Generator:
    return np.random.default_rng(42)


# -- the workloads ---------------------------------------------------------------------


def _w1_data(n: int) -> dict[str, np.ndarray]:
    r = _rng()
    return {"x": r.random(n), "y": r.random(n)}


def _w1(m, x, y):
    return m.sqrt((x - y) ** 2 / (1 + abs(y))).sum()


def _w2_data(n: int) -> dict[str, np.ndarray]:
    r = _rng()
    return {"a": r.random(n), "b": r.random(n), "c": r.random(n)}


def _w3_data(shape: tuple[int, int]) -> dict[str, np.ndarray]:
    return {"x": _rng().standard_normal(shape) * 3 + 10}


def _chain(m, x):
    v = x
    for i in range(CHAIN):
        k = i % 4
        if k == 0:
            v = v * 0.999
        elif k == 1:
            v = v + 0.5
        elif k == 2:
            v = abs(v)
        else:
            v = v - 0.25
    return v


def _chain_text(var: str, start: int = 0, stop: int = CHAIN) -> str:
    """Ops ``start..stop`` of the chain as one nested expression (Python nests <= 200 deep)."""
    text = var
    for i in range(start, stop):
        k = i % 4
        text = [f"({text} * 0.999)", f"({text} + 0.5)", f"abs({text})", f"({text} - 0.25)"][k]
    return text


def _numexpr_chain(x):
    """numexpr in segments of 40 ops (its parser cannot take 200 nested ops at once)."""
    import numexpr as ne

    for start in range(0, CHAIN, 40):
        x = ne.evaluate(_chain_text("x", start, min(CHAIN, start + 40)), local_dict={"x": x})
    return x


def _w4_data(n: int) -> dict[str, np.ndarray]:
    return {"x": _rng().standard_normal(n)}


def _w5_data(n: int) -> dict[str, np.ndarray]:
    r = _rng()
    return {"f": r.random(n, dtype=np.float32), "i": r.integers(0, 1000, n, dtype=np.int64)}


def _w5(m, f, i):
    return (f * 2.5 + i) / (i % 7 + 1)


def _numexpr(text: str) -> Callable[..., Any]:
    import numexpr as ne

    def run(**arrays):
        return ne.evaluate(text, local_dict=arrays)

    return run


def _numexpr_w3(x):
    import numexpr as ne

    mean, std = x.mean(0), x.std(0)
    return ne.evaluate("(x - mean) / std", local_dict={"x": x, "mean": mean, "std": std})


# -- hand-written Numba loops (the obvious way to write them) ----------------------------


def _numba_loops() -> dict[int, Callable[..., Any]]:
    from numba import njit, prange

    @njit(parallel=True)
    def w1(x, y):
        s = 0.0
        for i in prange(x.size):
            d = x[i] - y[i]
            s += math.sqrt(d * d / (1.0 + abs(y[i])))
        return s

    @njit(parallel=True)
    def w2(a, b, c, out):
        for i in prange(a.size):
            out[i] = a[i] * b[i] + c[i]
        return out

    @njit(parallel=True)
    def w3(x, out):
        n, m = x.shape
        parts = 8  # row ranges summed in parallel, then combined
        step = (n + parts - 1) // parts
        sums = np.zeros((parts, m))
        for p in prange(parts):
            for i in range(p * step, min(n, (p + 1) * step)):
                for j in range(m):
                    sums[p, j] += x[i, j]
        mean = sums.sum(axis=0) / n
        sq = np.zeros((parts, m))
        for p in prange(parts):
            for i in range(p * step, min(n, (p + 1) * step)):
                for j in range(m):
                    d = x[i, j] - mean[j]
                    sq[p, j] += d * d
        std = np.sqrt(sq.sum(axis=0) / n)
        for i in prange(n):
            for j in range(m):
                out[i, j] = (x[i, j] - mean[j]) / std[j]
        return out

    namespace: dict[str, Any] = {"njit": njit, "prange": prange}
    steps = "".join(f"        v = {_chain_text('v', i, i + 1)}\n" for i in range(CHAIN))
    exec(
        "@njit(parallel=True)\n"
        "def w4(x, out):\n"
        "    for i in prange(x.size):\n"
        "        v = x[i]\n"
        f"{steps}"
        "        out[i] = v\n"
        "    return out\n",
        namespace,
    )

    @njit(parallel=True)
    def w5(f, i, out):
        for k in prange(f.size):
            out[k] = (np.float32(f[k] * np.float32(2.5)) + i[k]) / (i[k] % 7 + 1)
        return out

    return {
        1: lambda x, y: w1(x, y),
        2: lambda a, b, c: w2(a, b, c, np.empty_like(a)),
        3: lambda x: w3(x, np.empty_like(x)),
        4: lambda x: namespace["w4"](x, np.empty_like(x)),
        5: lambda f, i: w5(f, i, np.empty(f.size)),
    }


def workloads() -> list[Workload]:
    return [
        Workload(
            1,
            "1 sqrt((x-y)^2/(1+|y|)).sum()",
            _w1_data,
            _w1,
            lambda x, y: float(_numexpr("sum(sqrt((x - y)**2 / (1 + abs(y))))")(x=x, y=y)),
        ),
        Workload(
            2,
            "2 a*b+c",
            _w2_data,
            lambda m, a, b, c: a * b + c,
            lambda a, b, c: _numexpr("a * b + c")(a=a, b=b, c=c),
        ),
        Workload(
            3,
            "3 (x-mean(0))/std(0)",
            _w3_data,
            lambda m, x: (x - x.mean(0)) / x.std(0),
            _numexpr_w3,
        ),
        Workload(
            4, f"4 {CHAIN}-op chain", _w4_data, _chain, lambda x: _numexpr(_chain_text("x"))(x=x)
        ),
        Workload(
            5,
            "5 (f32*2.5+i64)/(i64%7+1)",
            _w5_data,
            _w5,
            lambda f, i: _numexpr("(f * 2.5 + i) / (i % 7 + 1)")(f=f, i=i),
        ),
    ]


# -- measuring -------------------------------------------------------------------------


def peak_above(fn: Callable[[], Any]) -> float:
    """Peak bytes allocated (through NumPy/Python) while ``fn`` runs, above what existed."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return max(0.0, float(peak - base))


def _same(got: Any, want: Any) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=1e-5, atol=1e-8))


BLOCKS = 8  # blocks along the first axis, for lazyarr and Dask alike


def lazy_inputs(data: dict[str, np.ndarray]) -> dict[str, Any]:
    def chunks(a: np.ndarray) -> tuple[int, ...]:
        return (max(1, -(-a.shape[0] // BLOCKS)), *a.shape[1:])

    return {k: la.asarray(v, chunks=chunks(v)) for k, v in data.items()}


def dask_inputs(data: dict[str, np.ndarray], lazy: dict[str, Any]) -> dict[str, Any]:
    import dask.array as da

    return {k: da.from_array(v, chunks=lazy[k].chunks) for k, v in data.items()}


def cold_run(number: int, size: Any) -> float | None:
    """Seconds of the first lazyarr compute in a fresh process (kernels from the disk cache)."""
    cmd = [sys.executable, str(Path(__file__)), "--child", str(number), "--size", json.dumps(size)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        print(done.stderr[-2000:], file=sys.stderr)
        return None
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def child(number: int, size: Any) -> None:
    w = next(w for w in workloads() if w.number == number)
    data = w.data(tuple(size) if isinstance(size, list) else size)
    lazy = lazy_inputs(data)
    result = w.expr(la, **lazy)
    t0 = time.perf_counter()
    result.compute(executor="numba")
    print(json.dumps({"seconds": time.perf_counter() - t0}))


def run(args: argparse.Namespace) -> Report:
    import dask
    import dask.array as da

    sizes = QUICK if args.quick else FULL
    loops = _numba_loops()
    only = {int(s) for s in args.only.split(",")} if args.only else set(sizes)
    name = "local" + ("-quick" if args.quick else "") + (f"-w{args.only}" if args.only else "")
    report = Report(
        name.replace(",", ""),
        ["workload", "tool", "seconds", "GB/s", "x NumPy", "peak MB", "ok"],
        {
            "threads": THREADS,
            "repeat": args.repeat,
            "sizes": {k: sizes[k] for k in only},
            "peak": "tracemalloc peak above the inputs, separate untimed run",
            "versions": versions("numpy", "numba", "numexpr", "dask", "lazyarr"),
        },
    )
    goals: dict[int, dict[str, float]] = {}
    for w in workloads():
        if w.number not in only:
            continue
        data = w.data(sizes[w.number])
        in_bytes = sum(a.nbytes for a in data.values())
        lazy = lazy_inputs(data)
        dsk = dask_inputs(data, lazy)
        lazy_result = w.expr(la, **lazy)
        dask_result = w.expr(da, **dsk)
        want = w.expr(np, **data)
        tools: dict[str, Callable[[], Any]] = {
            "lazyarr": lambda r=lazy_result: r.compute(executor="numba"),
            "numpy": lambda w=w, d=data: w.expr(np, **d),
            "numexpr": lambda w=w, d=data: w.numexpr(**d),
            "dask threads": lambda r=dask_result: dask.compute(
                r, scheduler="threads", num_workers=THREADS
            )[0],
            "numba loop": lambda f=loops[w.number], d=data: f(**d),
        }
        seconds: dict[str, float] = {}
        for tool, fn in tools.items():
            try:
                got = fn()  # warm-up: compile, check the answer
            except Exception as e:  # e.g. numexpr refusing a 200-deep expression
                print(f"  {w.name}: {tool} failed: {type(e).__name__}: {str(e)[:120]}")
                report.add(workload=w.name, tool=tool, ok=f"failed: {type(e).__name__}")
                continue
            t = timeit(fn, repeat=args.repeat)["median"]
            seconds[tool] = t
            peak = peak_above(fn)
            report.add(
                workload=w.name,
                tool=tool,
                seconds=t,
                **{"GB/s": in_bytes / t / 1e9, "peak MB": peak / 1e6, "ok": _same(got, want)},
            )
        if not args.no_cold:
            cold = cold_run(w.number, sizes[w.number])
            if cold is not None:
                seconds["lazyarr cold"] = cold
                report.add(
                    workload=w.name,
                    tool="lazyarr cold",
                    seconds=cold,
                    **{"GB/s": in_bytes / cold / 1e9, "ok": True},
                )
        for row in report.rows:
            if row["workload"] == w.name and "seconds" in row and "numpy" in seconds:
                row["x NumPy"] = seconds["numpy"] / row["seconds"]
        out_bytes = np.asarray(want).nbytes
        goals[w.number] = {**seconds, "output MB": out_bytes / 1e6}
        del data, lazy, dsk, lazy_result, dask_result, want
    report.meta["goals"] = _goals(goals)
    return report


def _goals(results: dict[int, dict[str, float]]) -> list[str]:
    """The issue's goals, each with the measured numbers and whether it holds."""
    lines = []
    for n, s in sorted(results.items()):
        lz = s.get("lazyarr")
        if lz is None:
            continue
        if n == 1 and "numba loop" in s:
            lines.append(
                f"w1: lazyarr throughput {s['numba loop'] / lz:.2f}x the hand-written loop's "
                f"(goal >= 0.9), {s.get('numpy', math.nan) / lz:.1f}x NumPy (goal >= 4)"
            )
        others = {t: s[t] for t in ("numpy", "numexpr", "dask threads") if t in s}
        slower = [t for t, v in others.items() if v <= lz]
        lines.append(f"w{n}: faster than {', '.join(others)}: {slower or 'yes'}")
        if n == 4 and "dask threads" in s:
            lines.append(f"w4: {s['dask threads'] / lz:.1f}x faster than Dask (goal >= 10)")
        if "lazyarr cold" in s:
            lines.append(f"w{n}: cold - warm = {s['lazyarr cold'] - lz:.2f} s (goal <= 1)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per tool (median)")
    parser.add_argument("--only", default="", help="comma-separated workload numbers")
    parser.add_argument("--no-cold", action="store_true", help="skip the fresh-process runs")
    parser.add_argument("--child", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--size", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, json.loads(args.size))
        return
    report = run(args)
    report.write(plot=("workload", "seconds", "tool"))
    print("\ngoals (issue 3):")
    for line in report.meta["goals"]:
        print("  " + line)


if __name__ == "__main__":
    main()
