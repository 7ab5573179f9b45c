"""User functions per block: lazyarr against NumPy and Dask array on the same data.

Two workloads, each written once per tool:

1. ``soft(x) * 2 + 1`` where ``soft`` is a user ``numba.vectorize`` ufunc:
   lazyarr fuses it into one generated kernel with the arithmetic around it
   (one pass over the data, no temporaries); the same function as plain
   Python per block (``map_blocks``, its own stage) shows what the fusion
   saves; NumPy and Dask call the ufunc and then the arithmetic.
2. ``map_overlap`` of a 5-point mean (``scipy.ndimage.uniform_filter``),
   depth 2, ``boundary="reflect"``, on a 2-d array of many blocks: lazyarr
   reads neighbours' edges per block, Dask builds the overlapped array.

Median seconds of ``--repeat`` runs (after one warm run: compiled kernels,
imports) and speed relative to NumPy.

    python bench/userfuncs.py [--quick] [--repeat 5]
"""

from __future__ import annotations

import argparse

import dask
import dask.array as da
import numba
import numpy as np
import scipy.ndimage as ndi
from report import Report, timeit, versions

import lazyarr as la


@numba.vectorize(["float64(float64)"])
def soft(v):
    return v / (1.0 + abs(v))


def soft_py(block):
    return block / (1.0 + np.abs(block))


def mean5(block):
    return ndi.uniform_filter(block, 5, mode="constant")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="small arrays")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    n = 2_000_000 if args.quick else 40_000_000
    side = 1_000 if args.quick else 6_000
    chunk = n // 8
    report = Report(
        "userfuncs",
        ["workload", "tool", "median_s", "x_numpy"],
        meta={"versions": versions("lazyarr", "numpy", "dask", "numba", "scipy"), "n": n},
    )
    x = np.random.default_rng(0).standard_normal(n)
    lx = la.asarray(x, chunks=chunk)
    dx = da.from_array(x, chunks=chunk)
    cases = {
        "numpy": lambda: soft(x) * 2 + 1,
        "lazyarr fused": lambda: (soft(lx) * 2 + 1).compute(),
        "lazyarr python per block": lambda: (la.map_blocks(soft_py, lx) * 2 + 1).compute(),
        "dask": lambda: (dx.map_blocks(soft) * 2 + 1).compute(),
    }
    _run(report, "soft(x) * 2 + 1", cases, args.repeat)
    img = np.random.default_rng(1).random((side, side))
    limg = la.asarray(img, chunks=side // 4)
    dimg = da.from_array(img, chunks=side // 4)
    cases = {
        "numpy": lambda: ndi.uniform_filter(img, 5, mode="reflect"),
        "lazyarr": lambda: la.map_overlap(mean5, limg, depth=2, boundary="reflect").compute(),
        "dask": lambda: dimg.map_overlap(mean5, depth=2, boundary="reflect").compute(),
    }
    _run(report, "map_overlap 5-point mean", cases, args.repeat)
    report.write(plot=("workload", "median_s", "tool"))


def _run(report: Report, name: str, cases: dict, repeat: int) -> None:
    with dask.config.set(scheduler="threads"), la.config.set(progress=False):
        base = None
        for tool, fn in cases.items():
            fn()  # warm: compiled kernels, imports, plan cache
            t = timeit(fn, repeat=repeat)["median"]
            base = t if base is None else base
            report.add(workload=name, tool=tool, median_s=t, x_numpy=base / t)


if __name__ == "__main__":
    main()
