"""Real data bigger than memory: peeks, a bounded-memory standardize and a Gram matrix
on zarr stores, lazyarr against dask.array and cubed (issue 11).

The script makes its own data under a temporary directory (deleted after,
unless ``--keep``): a random float64 zarr store of ``--gb`` GiB (default 16;
shape ``(rows, 2048)``, zarr chunks ``(2048, 256)`` of 4 MiB, zstd, as
zarr writes by default) and a tall-skinny one of ``--tall-gb`` GiB (shape
``(rows, 64)``, chunks of 64 MiB). Reference values come from NumPy
reading the stores chunk by chunk.

Every measurement runs in its own child process (one per system and
task), so each peak RSS is that system's alone. Peak RSS is the kernel's
high-water mark of the child (``VmHWM``), reset after imports and a small
warm-up (``/proc/self/clear_refs``), minus the RSS then: what the task
itself added. Bytes read and written come from ``/proc/self/io``: ``rchar``
/ ``wchar`` (every read and write call, page cache included) and
``read_bytes`` (what came from the device; the page cache may hold part
of the store). Before each child the parent reads the input store once,
so every system starts with the page cache in the same state.

Tasks:

* (a) peeks on the zarr store: ``x[:10]``, ``x[-1, :5]``, ``(x * 2 + 1)[5]``,
  ``x[::1000, 0].sum()``; and the same on a virtual 100 GB random array
  (``la.random.random``, ``da.random.random``, ``cubed.random.random``);
* (b) ``(x - x.mean(0)) / x.std(0)`` written to a new zarr store, with
  lazyarr's ``memory-limit`` and cubed's ``allowed_mem`` at ``--limit``
  (1 GiB); dask.array has no such setting (its threads scheduler);
* (c) ``x.T @ x`` of the tall-skinny store.

Systems: lazyarr (numba executor), dask.array (threads scheduler),
cubed (threads executor, intermediates in a zarr work directory).

Prints one table, writes ``bench/results/io.{json,md,png}``.
Usage: ``python bench/io.py [--gb 16] [--tall-gb 4] [--systems lazyarr,dask,cubed]``
(``--gb 1 --tall-gb 0.5`` for a quick run).
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

import numpy as np
from report import RESULTS, save_figure

SYSTEMS = ("lazyarr", "dask", "cubed")
COLS, CHUNK = 2048, (2048, 256)
TALL_COLS = 64
PEEKS = ("x[:10]", "x[-1, :5]", "(x * 2 + 1)[5]", "x[::1000, 0].sum()")


# -- the child: one system, one task -----------------------------------------------------


def _status(field: str) -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))


def _io() -> dict[str, int]:
    with open("/proc/self/io") as f:
        return {k: int(v) for k, v in (line.split(": ") for line in f)}


class Meter:
    """Peak RSS added and bytes read/written since :meth:`start`."""

    def start(self) -> None:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        self.rss0 = _status("VmRSS:")
        self.io0 = _io()
        self.t0 = time.perf_counter()

    def stop(self) -> dict[str, float]:
        seconds = time.perf_counter() - self.t0
        io = _io()
        return {
            "seconds": seconds,
            "peak_rss": _status("VmHWM:") - self.rss0,
            "read": io["rchar"] - self.io0["rchar"],
            "read_device": io["read_bytes"] - self.io0["read_bytes"],
            "written": io["wchar"] - self.io0["wchar"],
        }


def _peeks(x, total=lambda a: a.sum()) -> dict:
    """The four peeks of (a), each a call that computes one (``total``: the system's sum)."""
    return {
        "x[:10]": lambda: x[:10].compute(),
        "x[-1, :5]": lambda: x[-1, :5].compute(),
        "(x * 2 + 1)[5]": lambda: (x * 2 + 1)[5].compute(),
        "x[::1000, 0].sum()": lambda: total(x[::1000, 0]).compute(),
    }


def _lazyarr(task: str, args: dict):
    import lazyarr as la

    la.config.set({"progress": False})
    if task == "b":
        la.config.set({"memory-limit": args["limit"]})
    warm = la.random.random((4096, 256), chunks=(1024, 256))
    la.to_zarr((warm - warm.mean(0)) / warm.std(0), args["work"] + "/warm.zarr", overwrite=True)
    (warm.T @ warm).compute()

    if task == "a":
        return _peeks(la.from_zarr(args["store"]))
    if task == "v":
        return _peeks(la.random.random((12_500_000, 1_000), seed=1))
    if task == "b":
        x = la.from_zarr(args["store"])
        return lambda: la.to_zarr((x - x.mean(0)) / x.std(0), args["out"], overwrite=True)
    x = la.from_zarr(args["tall"])
    return lambda: (x.T @ x).compute()


def _dask(task: str, args: dict):
    import dask
    import dask.array as da

    dask.config.set(scheduler="threads")

    if task == "a":
        return _peeks(da.from_zarr(args["store"]))
    if task == "v":
        return _peeks(da.random.default_rng(1).random((12_500_000, 1_000)))
    if task == "b":
        x = da.from_zarr(args["store"])
        return lambda: da.to_zarr((x - x.mean(0)) / x.std(0), args["out"], overwrite=True)
    x = da.from_zarr(args["tall"])
    return lambda: (x.T @ x).compute()


def _cubed(task: str, args: dict):
    import cubed
    import cubed.array_api as xp
    import cubed.random

    work = tempfile.mkdtemp(dir=args["work"])
    from dask.utils import parse_bytes

    limit = parse_bytes(args["limit"])
    spec = cubed.Spec(work_dir=work, allowed_mem=limit, executor_name="threads")

    if task == "a":
        return _peeks(cubed.from_zarr(args["store"], spec=spec), xp.sum)
    if task == "v":
        return _peeks(
            cubed.random.random((12_500_000, 1_000), chunks=(8192, 1000), spec=spec), xp.sum
        )
    if task == "b":
        x = cubed.from_zarr(args["store"], spec=spec)
        y = (x - xp.mean(x, axis=0)) / xp.std(x, axis=0)
        return lambda: cubed.to_zarr(y, args["out"])
    x = cubed.from_zarr(args["tall"], spec=spec)
    return lambda: xp.matmul(xp.matrix_transpose(x), x).compute()


def child(system: str, task: str, args: dict) -> None:
    """Run one task of one system and print its measurements as JSON."""
    runs = {"lazyarr": _lazyarr, "dask": _dask, "cubed": _cubed}[system](task, args)
    meter = Meter()
    out: dict = {"system": system, "task": task}
    if isinstance(runs, dict):  # peeks: each timed alone; the memory is their peak together
        values = {}
        meter.start()
        for name, fn in runs.items():
            t0 = time.perf_counter()
            values[name] = np.asarray(fn())
            out[name] = time.perf_counter() - t0
        out.update(meter.stop())
        out["values"] = {k: v.tolist() for k, v in values.items()}
    else:
        meter.start()
        value = runs()
        out.update(meter.stop())
        if task == "c":
            out["value"] = np.asarray(value).tolist()
    print("RESULT " + json.dumps(out))


# -- the parent: data, references, one child per measurement -----------------------------


def make_stores(work: Path, gb: float, tall_gb: float) -> dict:
    """The zarr stores, written block by block by lazyarr (numba), and NumPy references."""
    import zarr

    import lazyarr as la

    rows = int(gb * 2**30 / (COLS * 8)) // CHUNK[0] * CHUNK[0]
    tall_rows = int(tall_gb * 2**30 / (TALL_COLS * 8)) // 131072 * 131072
    info = {"store": str(work / "x.zarr"), "tall": str(work / "tall.zarr")}
    t0 = time.perf_counter()
    z = zarr.create_array(info["store"], shape=(rows, COLS), chunks=CHUNK, dtype="f8")
    la.store(la.random.random((rows, COLS), seed=7, chunks=(8 * CHUNK[0], COLS)), z, progress=False)
    t = zarr.create_array(
        info["tall"], shape=(tall_rows, TALL_COLS), chunks=(131072, TALL_COLS), dtype="f8"
    )
    la.store(
        la.random.random((tall_rows, TALL_COLS), seed=8, chunks=(131072, TALL_COLS)),
        t,
        progress=False,
    )
    info["make_seconds"] = time.perf_counter() - t0
    # NumPy references, chunk by chunk: column sums and sums of squares, the Gram matrix
    s1, s2 = np.zeros(COLS), np.zeros(COLS)
    for i in range(0, rows, 8 * CHUNK[0]):
        a = z[i : i + 8 * CHUNK[0]]
        s1 += a.sum(0)
        s2 += (a * a).sum(0)
    mean = s1 / rows
    info["mean"], info["std"] = mean.tolist(), np.sqrt(np.maximum(s2 / rows - mean**2, 0)).tolist()
    g = np.zeros((TALL_COLS, TALL_COLS))
    for i in range(0, tall_rows, 131072):
        a = t[i : i + 131072]
        g += a.T @ a
    info["gram"] = g.tolist()
    info["rows"], info["tall_rows"] = rows, tall_rows
    info["store_bytes"] = _du(info["store"])
    info["tall_bytes"] = _du(info["tall"])
    return info


def _warm(path: str) -> None:
    """Read every file of a store once, so each system starts with the page cache alike."""
    for f in Path(path).rglob("*"):
        if f.is_file():
            with open(f, "rb") as fh:
                while fh.read(1 << 24):
                    pass


def _du(path: str) -> int:
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file())


def _peek_reference(store: str) -> dict:
    import zarr

    z = zarr.open_array(store, mode="r")
    return {
        "x[:10]": z[:10],
        "x[-1, :5]": z[-1, :5],
        "(x * 2 + 1)[5]": z[5] * 2 + 1,
        "x[::1000, 0].sum()": z[::1000, 0].sum(),
    }


def _check_b(out: str, info: dict) -> bool:
    """The written standardized store equals NumPy's on three sampled row ranges."""
    import zarr

    y = zarr.open_array(out, mode="r")
    x = zarr.open_array(info["store"], mode="r")
    mean, std = np.asarray(info["mean"]), np.asarray(info["std"])
    for i in (0, info["rows"] // 2 + 17, info["rows"] - 5):
        if not np.allclose(y[i : i + 5], (x[i : i + 5] - mean) / std, rtol=1e-9, atol=1e-9):
            return False
    return True


def run_child(system: str, task: str, args: dict, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--child", system, task, json.dumps(args)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"system": system, "task": task, "error": f"over {timeout:.0f} s"}
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    err = (p.stderr.strip().splitlines() or ["no output"])[-1]
    return {"system": system, "task": task, "error": err[:200]}


def _mb(n: float | None) -> str:
    return "" if n is None else f"{n / 2**20:,.0f}"


def report(rows: list[dict], info: dict, limit: str) -> str:
    head = (
        "| task | system | seconds | peak RSS added (MiB) | read (MiB) | read from device (MiB) "
        "| written (MiB) | read / input | correct |\n|---|---|---|---|---|---|---|---|---|\n"
    )
    lines = []
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['label']} | {r['system']} | error: {r['error']} | | | | | | |")
            continue
        size = info["tall_bytes"] if r["task"] == "c" else info["store_bytes"]
        ratio = f"{r['read'] / size:.2f}" if r["task"] in "bc" else ""
        lines.append(
            f"| {r['label']} | {r['system']} | {r['seconds']:.3f} | {_mb(r['peak_rss'])} | "
            f"{_mb(r['read'])} | {_mb(r['read_device'])} | {_mb(r['written'])} | {ratio} "
            f"| {r.get('correct', '')} |"
        )
    gb = info["store_bytes"] / 2**30
    title = (
        f"zarr store {info['rows']:,} x {COLS} float64 ({gb:.1f} GiB on disk, chunks {CHUNK}); "
        f"tall-skinny {info['tall_rows']:,} x {TALL_COLS} ({info['tall_bytes'] / 2**30:.1f} GiB); "
        f"(b) with memory limit {limit}\n\n"
    )
    return title + head + "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gb", type=float, default=16.0, help="size of the main zarr store")
    parser.add_argument("--tall-gb", type=float, default=4.0, help="size of the tall-skinny store")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--tasks", default="a,v,b,c")
    parser.add_argument("--limit", default="1GiB", help="memory limit of (b)")
    parser.add_argument("--dir", default=None, help="where the stores go (a temporary dir)")
    parser.add_argument("--keep", action="store_true", help="keep the stores")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per child")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        child(a.child[0], a.child[1], json.loads(a.child[2]))
        return
    work = Path(tempfile.mkdtemp(prefix="lazyarr-io-", dir=a.dir))
    try:
        print(f"making {a.gb} GiB + {a.tall_gb} GiB of zarr under {work} ...", flush=True)
        info = make_stores(work, a.gb, a.tall_gb)
        print(f"  made in {info['make_seconds']:.1f} s", flush=True)
        refs = _peek_reference(info["store"])
        rows: list[dict] = []
        for task in a.tasks.split(","):
            for system in a.systems.split(","):
                args = {**{k: info[k] for k in ("store", "tall")}, "work": str(work)}
                args.update(limit=a.limit, out=str(work / f"out-{system}.zarr"))
                _warm(info["tall"] if task == "c" else info["store"])
                r = run_child(system, task, args, a.timeout)
                if task in "av" and "error" not in r:
                    values = r.pop("values")
                    for name in PEEKS:
                        ok = task == "v" or np.allclose(values[name], refs[name])
                        rows.append(
                            {
                                **r,
                                "label": f"{'virtual 100 GB' if task == 'v' else 'zarr'} {name}",
                                "seconds": r[name],
                                "correct": ok,
                            }
                        )
                    print(
                        f"  {system} {task}: " + ", ".join(f"{n} {r[n]:.3f} s" for n in PEEKS),
                        flush=True,
                    )
                    continue
                if "error" not in r:
                    if task == "b":
                        r["correct"] = _check_b(args["out"], info)
                        shutil.rmtree(args["out"], ignore_errors=True)
                    if task == "c":
                        r["correct"] = bool(np.allclose(r.pop("value"), info["gram"], rtol=1e-9))
                label = {"b": "(b) standardize -> zarr", "c": "(c) x.T @ x"}.get(task, task)
                rows.append({**r, "label": label})
                print(f"  {system} {task}: {r.get('seconds', r.get('error'))}", flush=True)
        text = report(rows, info, a.limit)
        print("\n" + text)
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "io.md").write_text(text)
        drop = ("mean", "std", "gram")
        doc = {"info": {k: v for k, v in info.items() if k not in drop}, "rows": rows}
        (RESULTS / "io.json").write_text(json.dumps(doc, indent=1, default=str))
        _plot(rows)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def _plot(rows: list[dict]) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    ok = [r for r in rows if "error" not in r]
    labels = list(dict.fromkeys(r["label"] for r in ok))
    systems = list(dict.fromkeys(r["system"] for r in ok))
    fig, ax = plt.subplots(figsize=(10, 5))
    width = 0.8 / max(1, len(systems))
    for k, s in enumerate(systems):
        ys = [
            next((r["seconds"] for r in ok if r["label"] == lab and r["system"] == s), 0)
            for lab in labels
        ]
        ax.bar(np.arange(len(labels)) + k * width, ys, width, label=s)
    ax.set_xticks(
        np.arange(len(labels)) + 0.4 - width / 2, labels, rotation=30, ha="right", fontsize=7
    )
    ax.set_yscale("log")
    ax.set_ylabel("seconds")
    ax.legend()
    save_figure(fig, "io")


if __name__ == "__main__":
    os.environ.setdefault("LAZYARR_PROGRESS", "false")
    main()
