"""All-to-all movement under a memory limit: the pencil rechunk and quadratic means (issue 23).

(a) An ERA5-like float32 zarr store (time, lat, lon) chunked ``(24, lat, lon)``
(one day of hourly maps per chunk) rechunked to ``(time, 48, 48)`` pencils
(one time series per 48 x 48 pixels) and written to a new store, under
``--limit`` of memory. The default is a quick 0.66 GiB (1460 x 241 x 480)
under 256 MiB; ``--gb 17`` is the full (4380, 721, 1440) store under 2 GiB.
(b) Quadratic means: the time means of u*u, v*v and u*v of two (time, lat,
lon) float64 stores, in one pass.

Each system runs in its own child process; the parent samples, every 50 ms,
the RSS of the child and of every process it started (dask's workers) and
reports the peak of the sum (and what it added to the RSS the processes had
when the timed part started: imports, a started cluster), with the bytes read and written from
``/proc/<pid>/io`` (``rchar``/``wchar`` since the timed part started: before,
dask workers' imports and warm-up counted 1.4 GB; every process summed at its last
sample) and the largest size of the scratch directory (lazyarr's
``temporary-directory``, cubed's ``work_dir``). lazyarr reports the peak it
predicted for the plan it ran, and what it measured itself (``self_MiB``: the
growth of its process's resident set, or of its largest worker's on dask, from
``la.last_run()``). Before each child the parent flushes the last
run's writes and reads the inputs once (:func:`_settle`): a run right after
one that wrote gigabytes was slowed by their write-back (lazyarr's quadratic
means after cubed's rechunk: 2.52 s; settled: 1.06 s).

Systems: lazyarr (numba), lazyarr (dask, 2 worker processes), dask.array
(threads scheduler), dask.array on a 2-worker LocalCluster (task rechunk and
P2P), cubed (threads executor, ``allowed_mem`` = the limit), rechunker
(dask's threads scheduler with 2 threads, ``max_mem`` = half the limit: it bounds one
task, and the process runs two; the quick run at the whole limit peaked at 2.6x it;
and ``rechunker cluster``,
the 2-worker LocalCluster). On a cluster the
limit is split between the workers (each plans for half); each worker
process may hold 512 MiB more for itself (Python, Dask, Numba), as lazyarr's
own LocalCluster allows.

rechunker pins zarr < 3, so it runs in a venv of its own, made once with::

    python3 -m venv /work/rechunker-venv
    /work/rechunker-venv/bin/pip install rechunker "zarr<3" distributed

Its rows run ``bench/_rechunker_child.py`` under that interpreter
(``--rechunker-python``, else ``$LAZYARR_BENCH_RECHUNKER_PYTHON``, else
``/work/rechunker-venv/bin/python`` if it exists; with none the rows say
they were skipped) and read a zarr v2 copy of the source, written by
lazyarr with the inputs (not timed); the v2 target is checked with zarr 3.

Usage: ``python bench/rechunk.py [--gb 0.66] [--limit 256MiB] [--systems ...] [--repeat 1]``
(``--repeat N``: N rounds of every system in turn; a row is the median run, with every
run's seconds in its note and the largest memory of any run).
Prints a table, writes ``bench/results/rechunk.{json,md,png}``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from childproc import run_sampled
from report import RESULTS, Report, run_name, versions

SYSTEMS = (
    "lazyarr numba",
    "lazyarr dask",
    "dask threads",
    "dask tasks",
    "dask p2p",
    "cubed",
    "rechunker",
    "rechunker cluster",
)
RECHUNKER_VENV = Path("/work/rechunker-venv/bin/python")
FULL = (4380, 721, 1440)


def shape_for(gb: float) -> tuple[int, int, int]:
    """A (time, lat, lon) float32 shape of about ``gb`` GiB with ERA5's proportions."""
    scale = (gb * 2**30 / (4 * np.prod(FULL))) ** (1 / 3)
    t, la_, lo = (max(48, round(n * scale)) for n in FULL)
    return (t // 24 * 24, la_, lo)


# -- the child ---------------------------------------------------------------------------


def _parse(limit: str) -> int:
    from dask.utils import parse_bytes

    return parse_bytes(limit)


def _lazyarr(args: dict, executor: str):
    import lazyarr as la
    from lazyarr import api

    limit = _parse(args["limit"])
    per = limit if executor == "numba" else limit // 2
    la.config.set(
        {
            "progress": False,
            "memory-limit": per,
            "temporary-directory": args["scratch"],
            "dask.n-workers": 2,
            "dask.threads-per-worker": 1,
        }
    )
    _warm_lazyarr(la, args, executor)
    if args["task"] == "a":
        import zarr

        src = la.from_zarr(args["src"])
        y = src.rechunk(args["target"])
        dst = zarr.create_array(
            args["dst"], shape=y.shape, dtype=y.dtype, chunks=args["target"], overwrite=True
        )
        planned = la.store(y, dst, compute=False)

        def run():
            la.store(y, dst, executor=executor)
    else:
        u, v = la.from_zarr(args["u"]), la.from_zarr(args["v"])
        planned = la.stack([(u * u).mean(0), (v * v).mean(0), (u * v).mean(0)])

        def run():
            np.save(args["dst"] + ".npy", planned.compute(executor=executor))

    def predicted():
        """The memory check's own prediction (per worker on dask: times the workers)."""
        ready = api._prepare([planned._expr], executor, None, None)
        if ready.staging is not None:
            ready.staging.close()
        return ready.predicted_peak * (1 if executor == "numba" else 2)

    return run, predicted


def _warm_lazyarr(la, args: dict, executor: str) -> None:
    """The same kernels on a small array first: compiling (or loading) them is not timed, nor
    counted in the peak. On dask every worker warms itself (a small plan's few tasks reach
    one worker only, and the other then paid its imports and compiles inside the timed run:
    +160 MiB on a worker that held 47 MiB of blocks)."""
    _warm_here(la, args["scratch"] + "/warm", executor)
    if executor == "dask":
        from lazyarr import api

        client = api.resolve_executor("dask").client()
        client.run(_warm_here, None, args["scratch"] + "/warm-worker", "numba")


def _warm_here(la, where: str, executor: str) -> None:
    """Rechunk, write and mean a small array, as the timed plans do (``la`` None: import it)."""
    if la is None:
        import lazyarr as la
    where = f"{where}-{os.getpid()}"
    with la.config.set({"numba.compile-threshold": 0, "memory-limit": None}):
        small = la.asarray(np.ones((96, 8, 8), np.float32), chunks=(24, 8, 8))
        la.to_zarr(small.rechunk((96, 4, 4)), where + ".zarr", executor=executor)
        u = la.asarray(np.ones((96, 8, 8)), chunks=(24, 8, 8))
        la.stack([(u * u).mean(0), (u * u).mean(0), (u * u).mean(0)]).compute(executor=executor)
    # and a rechunk staged through a scratch store, as the timed one is (its write, staged
    # read and chunk writes compiled, or loaded from numba's cache, here: not timed)
    staged = {"numba.compile-threshold": 0, "memory-limit": "16MiB", "temporary-directory": where}
    with la.config.set(staged):
        big = la.asarray(np.ones((96, 256, 256), np.float32), chunks=(4, 256, 256)) + 0
        la.to_zarr(big.rechunk((96, 8, 8)), where + "-staged.zarr", executor=executor)
    for done in (where + ".zarr", where + "-staged.zarr", where):
        shutil.rmtree(done, ignore_errors=True)


def _dask(args: dict, how: str):
    import dask
    import dask.array as da

    limit = _parse(args["limit"])
    if how == "threads":
        dask.config.set(scheduler="threads")
    else:
        from distributed import Client, LocalCluster

        from lazyarr.executors.dask_cluster import WORKER_BASELINE

        cluster = LocalCluster(  # as lazyarr's LocalCluster: half the limit + the process
            n_workers=2,
            threads_per_worker=1,
            memory_limit=limit // 2 + WORKER_BASELINE,
            dashboard_address=None,
        )
        Client(cluster)
    method = "p2p" if how == "p2p" else "tasks"
    if args["task"] == "a":
        y = da.from_zarr(args["src"]).rechunk(args["target"], method=method)
        return lambda: da.to_zarr(y, args["dst"], overwrite=True), None
    u, v = da.from_zarr(args["u"]), da.from_zarr(args["v"])
    y = da.stack([(u * u).mean(0), (v * v).mean(0), (u * v).mean(0)])
    return lambda: np.save(args["dst"] + ".npy", y.compute()), None


def _cubed(args: dict):
    import cubed
    import cubed.array_api as xp

    spec = cubed.Spec(
        work_dir=args["scratch"], allowed_mem=_parse(args["limit"]), executor_name="threads"
    )
    if args["task"] == "a":
        y = cubed.from_zarr(args["src"], spec=spec).rechunk(args["target"])
        return lambda: cubed.to_zarr(y, args["dst"]), None
    u, v = cubed.from_zarr(args["u"], spec=spec), cubed.from_zarr(args["v"], spec=spec)
    y = xp.stack([xp.mean(u * u, axis=0), xp.mean(v * v, axis=0), xp.mean(u * v, axis=0)])
    return lambda: np.save(args["dst"] + ".npy", y.compute()), None


def child(system: str, args: dict) -> None:
    if system.startswith("lazyarr"):
        run, predicted = _lazyarr(args, system.split()[1])
    elif system == "cubed":
        run, predicted = _cubed(args)
    else:
        run, predicted = _dask(args, system.split()[1])
    out = {"predicted": predicted() if predicted else None}
    print("READY", flush=True)
    t0 = time.perf_counter()
    run()
    out["seconds"] = time.perf_counter() - t0
    if system.startswith("lazyarr"):  # what lazyarr measured itself (per worker on dask)
        import lazyarr as la

        out["rss_growth"] = la.last_run().stats.rss_growth
    print("RESULT " + json.dumps(out), flush=True)


# -- the parent --------------------------------------------------------------------------


def _run_once(
    system: str, task: str, work: Path, inputs: dict, target: tuple, a: Any, python: Any
) -> dict:
    """One measured run of ``system`` on ``task`` in its own child: a row's fields."""
    from lazyarr.executors.dask_cluster import WORKER_BASELINE

    scratch = work / "scratch"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir()
    args = {
        **inputs,
        "task": task,
        "target": target,
        "limit": a.limit,
        "dst": str(work / f"out-{task}"),
        "scratch": str(scratch),
        "worker_baseline": WORKER_BASELINE,
    }
    shutil.rmtree(args["dst"], ignore_errors=True)
    _settle(args, task, system)
    r = measure(system, args, a.timeout, python)
    if "error" in r:
        return {"seconds": 0.0, "note": r["error"]}
    pred = r.get("predicted")
    return {
        "seconds": r["seconds"],
        "peak_MiB": r["peak_MiB"],
        "added_MiB": r["peak_MiB"] - r["base_MiB"],
        "predicted_MiB": pred / 2**20 if pred else "",
        "self_MiB": r["rss_growth"] / 2**20 if r.get("rss_growth") is not None else "",
        "read_MiB": r["read_MiB"],
        "written_MiB": r["written_MiB"],
        "scratch_MiB": r["scratch_MiB"],
        "correct": check(task, args),
        "note": f"base {r['base_MiB']:.0f} MiB" + (f"; {r['note']}" if "note" in r else ""),
    }


def _summary(rows: list[dict]) -> dict:
    """The median run by seconds (a failed run: the failure), with every run's seconds and the
    largest memory of any run beside it: a round's order and the page cache's state move a
    run by seconds on this machine (the first system after the inputs were written ran
    2.3x slower than the same run later)."""
    failed = [r for r in rows if not r["seconds"]]
    if failed:
        return failed[0]
    rows = sorted(rows, key=lambda r: r["seconds"])
    out = dict(rows[len(rows) // 2])
    for key in ("peak_MiB", "added_MiB", "self_MiB", "scratch_MiB"):
        values = [r[key] for r in rows if r.get(key) != ""]
        if values:
            out[key] = max(values)
    out["correct"] = all(r["correct"] for r in rows)
    if len(rows) > 1:
        out["note"] += "; runs " + ", ".join(f"{r['seconds']:.2f}" for r in rows) + " s"
    return out


def measure(system: str, args: dict, timeout: float, rechunker_python: str | None = None) -> dict:
    """Run one child, sampling memory, I/O and scratch from outside until it ends (rechunker's
    rows: their own child file, under ``rechunker_python``, the interpreter of its venv)."""
    if system.startswith("rechunker"):
        child_file = str(Path(__file__).with_name("_rechunker_child.py"))
        cmd = [rechunker_python, child_file, system, json.dumps(args)]
    else:
        cmd = [sys.executable, __file__, "--child", system, json.dumps(args)]
    return {"system": system, **run_sampled(cmd, timeout, args["scratch"])}


def rechunker_python(given: str | None) -> str | None:
    """The interpreter of rechunker's venv: ``given``, the environment's, the default venv's."""
    found = given or os.environ.get("LAZYARR_BENCH_RECHUNKER_PYTHON")
    if found is None and RECHUNKER_VENV.exists():
        found = str(RECHUNKER_VENV)
    if found is not None and not os.path.exists(found):
        raise FileNotFoundError(f"no rechunker interpreter at {found}")
    return found


def rechunker_versions(python: str | None) -> dict[str, str]:
    """What rechunker's venv holds, for the record."""
    if python is None:
        return {}
    code = "from report import versions; print(versions('rechunker', 'zarr', 'dask'))"
    bench = str(Path(__file__).parent)
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=bench)
    return {"rechunker venv": out.stdout.strip() or out.stderr.strip()[-160:]}


def _skipped(system: str, task: str, python: str | None) -> str | None:
    """Why ``system`` does not run ``task`` here (None: it runs)."""
    if not system.startswith("rechunker"):
        return None
    if task != "a":
        return "skipped: rechunker only rechunks"
    if python is None:
        return (
            "skipped: no rechunker interpreter (--rechunker-python, "
            "$LAZYARR_BENCH_RECHUNKER_PYTHON or /work/rechunker-venv; see the docstring)"
        )
    return None


def _settle(args: dict, task: str, system: str) -> None:
    """Every system starts alike: the previous run's writes flushed to disk (their write-back
    slowed whoever ran next), and this task's inputs read once into the page cache."""
    os.sync()
    src = args["src_v2"] if system.startswith("rechunker") else args["src"]
    for store in [src] if task == "a" else [args["u"], args["v"]]:
        for root, _, files in os.walk(store):
            for f in files:
                with open(os.path.join(root, f), "rb") as fh:
                    while fh.read(1 << 24):
                        pass


def make_inputs(work: Path, shape: tuple[int, int, int], quad_gb: float, v2: bool) -> dict:
    """The stores, written by lazyarr block by block (with ``v2``, a zarr v2 copy of the
    source for rechunker, whose zarr 2 cannot read zarr 3's format)."""
    import zarr

    import lazyarr as la

    la.config.set({"progress": False})
    src, src_v2 = str(work / "era5.zarr"), str(work / "era5-v2.zarr")
    chunks = (24, shape[1], shape[2])
    x = la.random.random(shape, chunks=chunks, seed=0, dtype=np.float32)
    la.to_zarr(x, src)
    if v2:
        copy = zarr.create_array(src_v2, shape=shape, dtype=x.dtype, chunks=chunks, zarr_format=2)
        la.store(la.from_zarr(src), copy)
    n = int(quad_gb * 2**30 / 8 / (180 * 360))
    qshape, qchunks = (n, 180, 360), (min(n, 24), 180, 360)
    u, v = str(work / "u.zarr"), str(work / "v.zarr")
    la.to_zarr(la.random.standard_normal(qshape, chunks=qchunks, seed=1), u)
    la.to_zarr(la.random.standard_normal(qshape, chunks=qchunks, seed=2), v)
    return {"src": src, "src_v2": src_v2, "u": u, "v": v, "shape": shape, "quad_shape": qshape}


def check(task: str, args: dict) -> bool:
    """The written result equals the input (a) or NumPy's means (b), sampled."""
    import zarr

    if task == "a":
        src, dst = zarr.open_array(args["src"]), zarr.open_array(args["dst"])
        if dst.chunks != tuple(args["target"]):
            return False
        for t in (0, src.shape[0] // 2, src.shape[0] - 1):
            if not np.array_equal(src[t], dst[t]):
                return False
        return bool(np.array_equal(src[:, 7, 9], dst[:, 7, 9]))
    u, v = zarr.open_array(args["u"]), zarr.open_array(args["v"])
    got = np.load(args["dst"] + ".npy")
    uu, vv = np.asarray(u[:, :4, :4]), np.asarray(v[:, :4, :4])
    want = np.stack([(uu * uu).mean(0), (vv * vv).mean(0), (uu * vv).mean(0)])
    return bool(np.allclose(got[:, :4, :4], want))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=0.66, help="size of the ERA5-like store")
    ap.add_argument("--quad-gb", type=float, default=0.5, help="size of each of u and v")
    ap.add_argument("--limit", default="256MiB")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--tasks", default="a,b")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--work", default=None, help="where the stores go (default: a temp dir)")
    ap.add_argument("--rechunker-python", default=None, help="python of rechunker's venv")
    ap.add_argument(
        "--repeat", type=int, default=1, help="rounds of every system; the median run is shown"
    )
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child[0], json.loads(a.child[1]))
        return
    work = Path(tempfile.mkdtemp(prefix="lazyarr-bench-rechunk-", dir=a.work))
    try:
        shape = shape_for(a.gb)
        systems, tasks = a.systems.split(","), a.tasks.split(",")
        python = rechunker_python(a.rechunker_python)
        v2 = "a" in tasks and python is not None and any(s.startswith("rechunker") for s in systems)
        inputs = make_inputs(work, shape, a.quad_gb, v2)
        target = (shape[0], 48, 48)
        report = Report(
            run_name("rechunk", ap, a, ("gb", "quad_gb", "limit", "systems", "tasks", "repeat")),
            [
                "task",
                "system",
                "seconds",
                "peak_MiB",
                "added_MiB",
                "predicted_MiB",
                "self_MiB",
                "read_MiB",
                "written_MiB",
                "scratch_MiB",
                "correct",
                "note",
            ],
            {
                "shape": shape,
                "limit": a.limit,
                "versions": versions("lazyarr", "dask", "distributed", "zarr", "numba", "cubed"),
                **rechunker_versions(python),
            },
        )
        for task in tasks:
            label = "pencil rechunk" if task == "a" else "quadratic means"
            runs: dict[str, list[dict]] = {}
            for _ in range(a.repeat):  # rounds: every system once per round, in turn
                for system in systems:
                    if _skipped(system, task, python):
                        continue
                    runs.setdefault(system, []).append(
                        _run_once(system, task, work, inputs, target, a, python)
                    )
            for system in systems:
                skipped = _skipped(system, task, python)
                if skipped:
                    report.add(task=label, system=system, seconds=0.0, note=skipped)
                    continue
                report.add(task=label, system=system, **_summary(runs[system]))
        report.write(plot=("system", "seconds", "task"))
        (RESULTS / f"{report.name}.md").write_text(report.markdown() + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
