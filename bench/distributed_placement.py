"""lazyarr's Dask executor against ``dask.array`` on one LocalCluster (issue 4 benchmark).

One ``LocalCluster`` (4 workers x 1 thread, processes, 127.0.0.1, no
dashboard, 4 GiB each, Active Memory Manager off so bytes are exact) is
shared by both systems through one ``Client`` (lazyarr uses the active
client). Per workload:

1. the inputs are made by lazyarr (seeded random blocks) and persisted on
   the cluster, on lazyarr's layout owners; ``dask.array`` gets its own
   persisted copy of every block, made on the worker that holds it, so both
   systems read identical values from identical places;
2. NumPy reference results are computed here from the gathered inputs;
3. one unmeasured warm-up per system (Numba compiles, imports), then
   ``--repeat`` rounds in which the systems alternate (rotating order).
   Before each phase every replica of an input made by an earlier phase is
   dropped and the workers' managed memory is back to the inputs alone;
   the probe (``_dask_probe.py``, a WorkerPlugin) is reset before and read
   after each phase.

Systems: ``dask.array``; ``lazyarr`` (all passes, soft placement);
``lazyarr (placement=scheduler)`` (the plan's workers ignored, Dask's
scheduler decides); ``lazyarr (no layout/place)`` (passes cse, simplify,
fuse only: one task per block, unrestricted).

Workloads: square matmul; tensordot on persisted inputs and, again, with
the inputs generated inside the phase (where sources run is the layout's
job), and generated with chunks left to each library (lazyarr's reblock pass
picks blocks for the workers; dask.array's "auto" keeps one block); X.T @ X
on a tall-skinny X; logistic regression (Newton) on a persisted X; a
rechunk of a persisted X from row blocks to column blocks.

``--host-groups N`` models the 4 workers as N hosts (``_host_groups.py``:
names 0 1 -> hostA, 2 3 -> hostB for N=2): lazyarr is told through
``dask.host-groups`` (its inputs are laid out knowing them too), the system
``lazyarr (hosts unknown)`` is not, and every row gets the bytes fetched
between groups (``between_hosts_MiB``, the probe's bytes by sender, mapped
with the same groups for both systems); goals: issue 27's (at least 3x fewer
bytes between groups than dask.array on matmul and logreg, no loss of wall
time). Results then go to ``distributed-hosts[-quick].*``.

Per phase: wall time, bytes fetched from peer workers (total and max into
one worker), peak memory per worker (the phase's own peak over its inputs,
plus this system's inputs held there) as Dask's managed bytes and as
distinct buffers (views count once), lazyarr's planned and measured bytes,
tasks that ran off their planned worker (work stealing), correctness
against NumPy. Medians over the rounds; every round is in the JSON.
Results: printed table, ``bench/results/distributed.{json,md,png}`` and
``distributed-goals.{json,png}``.

    python bench/distributed_placement.py [--quick] [--repeat 3] [--workloads matmul,logreg]

(This file shares its name with the ``distributed`` package: the script's
folder is moved to the end of ``sys.path`` before anything imports it.)
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE)]

import argparse  # noqa: E402
import contextlib  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections import defaultdict  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import _dask_probe as probe  # noqa: E402
import _host_groups as hostgroups  # noqa: E402
import _stage_timing as stage_timing  # noqa: E402
import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
import psutil  # noqa: E402
from dask._task_spec import Task  # noqa: E402
from dask.highlevelgraph import HighLevelGraph  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402
from report import RESULTS, Report, versions  # noqa: E402

import lazyarr as la  # noqa: E402
from lazyarr import config  # noqa: E402

MiB = 2**20
N_WORKERS = 4
ALL_PASSES = ["reblock", "cse", "simplify", "fuse", "layout", "place"]

# (label, lazyarr config) of each lazyarr variant; "dask.array" is the other system
LAZYARR_SYSTEMS: dict[str, dict[str, Any]] = {
    "lazyarr": {"dask.placement": "soft", "optimize.passes": ALL_PASSES},
    "lazyarr (placement=scheduler)": {"dask.placement": "scheduler", "optimize.passes": ALL_PASSES},
    "lazyarr (no layout/place)": {
        "dask.placement": "soft",
        "optimize.passes": ["cse", "simplify", "fuse"],
    },
}
DASK = "dask.array"
HOSTS_UNKNOWN = "lazyarr (hosts unknown)"


# ------------------------------------------------------------------ data


def _copy_block(x: np.ndarray) -> np.ndarray:
    return np.array(x, copy=True)


@dataclass
class Data:
    """The inputs of one workload: lazyarr's persisted arrays, dask.array copies, NumPy."""

    lz: dict[str, la.LazyArray]
    dk: dict[str, da.Array]
    np_: dict[str, np.ndarray]
    homes: dict[Any, str]  # every input key (both systems) -> the worker holding it
    inputs_on: dict[str, dict[str, int]]  # system ("lazyarr"|"dask") -> worker -> bytes held
    futures: list[Any] = field(default_factory=list)  # the dask copies, kept alive here


def _random_block(expr: Any, region: tuple[slice, ...]) -> np.ndarray:
    """The block ``region`` of lazyarr's random array ``expr`` (same values as lazyarr's)."""
    from lazyarr.kernels.reference.creation import random

    return random(expr.op, expr, region)


def dask_random(arr: la.LazyArray, name: str) -> da.Array:
    """A dask.array whose blocks are generated on the cluster with lazyarr's seeded kernel."""
    expr = arr._expr
    dname = f"bench-gen-{name}-{expr.key[:10]}"
    dsk = {}
    for idx in np.ndindex(*(len(c) for c in expr.chunks)):
        region = tuple(
            slice(sum(c[:i]), sum(c[: i + 1])) for c, i in zip(expr.chunks, idx, strict=True)
        )
        key = (dname, *idx)
        dsk[key] = Task(key, _random_block, expr, region)
    graph = HighLevelGraph.from_collections(dname, dsk, dependencies=())
    return da.Array(graph, dname, expr.chunks, dtype=expr.dtype)


def generated_data(arrays: dict[str, la.LazyArray]) -> Data:
    """Inputs made inside each phase: lazyarr's random sources and dask tasks, same seeds."""
    dk = {name: dask_random(arr, name) for name, arr in arrays.items()}
    np_ = {name: arr.compute(executor="numpy") for name, arr in arrays.items()}
    for name in arrays:
        np.testing.assert_array_equal(dk[name].compute(), np_[name])
    return Data(dict(arrays), dk, np_, {}, {"lazyarr": {}, "dask": {}})


def make_data(client: Client, arrays: dict[str, la.LazyArray]) -> Data:
    """Persist ``arrays`` with lazyarr, copy each block for dask.array on its worker."""
    persisted = dict(zip(arrays, la.persist(*arrays.values())))
    homes: dict[Any, str] = {}
    inputs_on: dict[str, dict[str, int]] = {"lazyarr": defaultdict(int), "dask": defaultdict(int)}
    dk: dict[str, da.Array] = {}
    futures = []
    for name, arr in persisted.items():
        store = arr._expr.op.store
        found = client.who_has(list(store.blocks.values()))
        where = {i: tuple(sorted(found.get(f.key, ()))) for i, f in store.blocks.items()}
        dname = f"bench-{name}-{store.token[:8]}"
        dsk = {}
        for idx, fut in store.blocks.items():
            addr = where[idx][0]  # a block may have replicas (a reader on another worker)
            nbytes = (
                int(np.prod([c[i] for c, i in zip(arr._expr.chunks, idx)])) * arr.dtype.itemsize
            )
            homes[fut.key] = addr
            inputs_on["lazyarr"][addr] += nbytes
            key = (dname, *idx)
            copy = client.submit(
                _copy_block, fut, key=key, workers=[addr], allow_other_workers=False, pure=False
            )
            homes[key] = addr
            inputs_on["dask"][addr] += nbytes
            dsk[key] = copy
            futures.append(copy)
        graph = HighLevelGraph.from_collections(dname, dsk, dependencies=())
        dk[name] = da.Array(graph, dname, arr._expr.chunks, dtype=arr.dtype)
    for f in futures:
        f.result()
    np_ = {name: arr.compute() for name, arr in persisted.items()}
    for name in persisted:  # identical values and blocks for both systems
        np.testing.assert_array_equal(dk[name].compute(), np_[name])
    return Data(persisted, dk, np_, homes, {k: dict(v) for k, v in inputs_on.items()}, futures)


# ------------------------------------------------------------------ cluster hygiene


def _drop_replicas(dask_scheduler: Any, homes: dict[Any, str]) -> int:
    """Ask every worker but the home one to drop its copy of each input key."""
    by_worker: dict[str, list] = defaultdict(list)
    for key, home in homes.items():
        ts = dask_scheduler.tasks.get(key)
        if ts is None or not ts.who_has:
            continue
        holders = {ws.address for ws in ts.who_has}
        if home not in holders:
            continue
        for addr in holders - {home}:
            by_worker[addr].append(key)
    for addr, keys in by_worker.items():
        dask_scheduler.request_remove_replicas(
            addr, keys, stimulus_id=f"bench-drop-replicas-{time.time()}"
        )
    return sum(len(k) for k in by_worker.values())


def _held(dask_scheduler: Any, homes: dict[Any, str]) -> list[tuple[str, str, int, int]]:
    """Keys in memory that are not an input on its home worker: (key, worker, wanted by, size)."""
    out = []
    for key, ts in dask_scheduler.tasks.items():
        for ws in ts.who_has or ():
            if homes.get(key) != ws.address:
                out.append((str(key), ws.address, len(ts.who_wants or ()), ts.nbytes))
    return out[:20]


def _managed(dask_worker: Any) -> int:
    return int(dask_worker.state.nbytes)


def settle(client: Client, data: Data | None, timeout: float = 20.0) -> bool:
    """Drop input replicas left by the last phase; wait until workers hold the inputs only."""
    homes = data.homes if data is not None else {}
    expected: dict[str, int] = defaultdict(int)
    if data is not None:
        for on in data.inputs_on.values():
            for w, n in on.items():
                expected[w] += n
    client.run_on_scheduler(_drop_replicas, homes=homes)
    deadline = time.monotonic() + timeout
    while True:
        now = client.run(_managed)
        if all(now[w] == expected.get(w, 0) for w in now):
            return True
        if time.monotonic() > deadline:
            extra = client.run_on_scheduler(_held, homes=homes)
            print(
                f"  warning: workers did not settle: {now} != {dict(expected)}; "
                f"held beyond the inputs: {extra}",
                flush=True,
            )
            return False
        time.sleep(0.05)


def release(client: Client, data: Data) -> None:
    """Free a workload's inputs on the cluster before the next one."""
    settle(client, data)
    data.lz.clear()
    data.dk.clear()
    data.futures.clear()
    # ``la.last_run()`` keeps the latest plan, whose sources hold the persisted blocks
    la.zeros(1).compute(executor="numpy")
    gc.collect()  # futures caught in reference cycles
    settle(client, None)


# ------------------------------------------------------------------ workloads


@dataclass
class Workload:
    name: str
    description: str
    make: Callable[[], dict[str, la.LazyArray]]
    run_lazyarr: Callable[[Data, Callable], np.ndarray]
    run_dask: Callable[[Data], np.ndarray]
    run_numpy: Callable[[Data], np.ndarray]
    rtol: float = 1e-9
    persisted: bool = True  # False: each phase generates its inputs (same seeds)


def _sizes(quick: bool) -> dict[str, Any]:
    if quick:
        return {"n": 800, "bs": 200, "t": (16, 64, 64, 8), "rows": 32000, "cols": 16}
    return {"n": 4000, "bs": 1000, "t": (64, 256, 256, 32), "rows": 320000, "cols": 64}


def workloads(quick: bool, iters: int) -> list[Workload]:
    s = _sizes(quick)
    n, bs = s["n"], s["bs"]
    t0, t1, t2, t3 = s["t"]
    rows, cols = s["rows"], s["cols"]
    rb = rows // 8
    w_true = np.random.default_rng(7).standard_normal(cols) * (2.0 / np.sqrt(cols))

    def mm_make():
        rng = la.random
        a = rng.standard_normal((n, n), chunks=bs, seed=1)
        b = rng.standard_normal((n, n), chunks=bs, seed=2)
        return {"A": a, "B": b}

    def td_make():
        t = la.random.standard_normal((t0, t1, t2), chunks=(t0, t1 // 2, t2 // 2), seed=3)
        w = la.random.standard_normal((t1, t2, t3), chunks=(t1 // 2, t2 // 2, t3), seed=4)
        return {"T": t, "W": w}

    def td_make_auto():  # chunks left to each library ("auto": one block each here)
        t = la.random.standard_normal((t0, t1, t2), seed=3)
        w = la.random.standard_normal((t1, t2, t3), seed=4)
        return {"T": t, "W": w}

    def x_make():
        return {"X": la.random.standard_normal((rows, cols), chunks=(rb, cols), seed=5)}

    def lr_make():
        x = la.random.standard_normal((rows, cols), chunks=(rb, cols), seed=6)
        u = la.random.random((rows,), chunks=rb, seed=8)
        y = (u < 1.0 / (1.0 + la.exp(-(x @ la.asarray(w_true))))).astype(np.float64)
        return {"X": x, "y": y}

    def lr_lazyarr(d: Data, compute: Callable) -> np.ndarray:
        x, y = d.lz["X"], d.lz["y"]
        w = np.zeros(cols)
        for _ in range(iters):
            wl = la.asarray(w)
            p = 1.0 / (1.0 + la.exp(-(x @ wl)))
            g = x.T @ (p - y)
            h = x.T @ (x * (p * (1.0 - p))[:, None])
            (w,) = compute(wl - la.linalg.solve(h, g))
        return w

    def lr_dask(d: Data) -> np.ndarray:
        x, y = d.dk["X"], d.dk["y"]
        w = np.zeros(cols)
        for _ in range(iters):
            p = 1.0 / (1.0 + da.exp(-(x @ w)))
            g = x.T @ (p - y)
            h = x.T @ (x * (p * (1.0 - p))[:, None])
            # da.linalg.solve needs SciPy (not installed); on one 64x64 block it is this
            step = da.blockwise(
                np.linalg.solve, "i", h, "ij", g, "j", dtype=h.dtype, concatenate=True
            )
            w = (w - step).compute()
        return w

    def rc_make():
        return {"X": la.random.standard_normal((rows, cols), chunks=(rb, cols), seed=9)}

    def lr_numpy(d: Data) -> np.ndarray:
        x, y = d.np_["X"], d.np_["y"]
        w = np.zeros(cols)
        for _ in range(iters):
            p = 1.0 / (1.0 + np.exp(-(x @ w)))
            g = x.T @ (p - y)
            h = x.T @ (x * (p * (1.0 - p))[:, None])
            w = w - np.linalg.solve(h, g)
        return w

    axes = ((1, 2), (0, 1))
    return [
        Workload(
            "matmul",
            f"A@B, {n}x{n} float64, chunks {bs}",
            mm_make,
            lambda d, c: c(d.lz["A"] @ d.lz["B"])[0],
            lambda d: (d.dk["A"] @ d.dk["B"]).compute(),
            lambda d: d.np_["A"] @ d.np_["B"],
        ),
        Workload(
            "tensordot",
            f"T{(t0, t1, t2)}.W{(t1, t2, t3)} over {axes}",
            td_make,
            lambda d, c: c(la.tensordot(d.lz["T"], d.lz["W"], axes=axes))[0],
            lambda d: da.tensordot(d.dk["T"], d.dk["W"], axes=axes).compute(),
            lambda d: np.tensordot(d.np_["T"], d.np_["W"], axes=axes),
        ),
        Workload(
            "tensordot-gen",
            "the same, T and W generated inside the phase (random sources as tasks)",
            td_make,
            lambda d, c: c(la.tensordot(d.lz["T"], d.lz["W"], axes=axes))[0],
            lambda d: da.tensordot(d.dk["T"], d.dk["W"], axes=axes).compute(),
            lambda d: np.tensordot(d.np_["T"], d.np_["W"], axes=axes),
            persisted=False,
        ),
        Workload(
            "tensordot-auto",
            "the same generated inputs with chunks left to the library (reblock pass)",
            td_make_auto,
            lambda d, c: c(la.tensordot(d.lz["T"], d.lz["W"], axes=axes))[0],
            lambda d: da.tensordot(d.dk["T"], d.dk["W"], axes=axes).compute(),
            lambda d: np.tensordot(d.np_["T"], d.np_["W"], axes=axes),
            persisted=False,
        ),
        Workload(
            "xtx",
            f"X.T@X, X {rows}x{cols}, 8 row blocks",
            x_make,
            lambda d, c: c(d.lz["X"].T @ d.lz["X"])[0],
            lambda d: (d.dk["X"].T @ d.dk["X"]).compute(),
            lambda d: d.np_["X"].T @ d.np_["X"],
        ),
        Workload(
            "logreg",
            f"logistic regression, {iters} Newton iterations, X {rows}x{cols} persisted",
            lr_make,
            lr_lazyarr,
            lr_dask,
            lr_numpy,
            rtol=1e-7,
        ),
        Workload(
            "rechunk",
            f"X {rows}x{cols} persisted, {rb}-row blocks to {cols // 4}-column blocks",
            rc_make,
            lambda d, c: c(d.lz["X"].rechunk((rows, cols // 4)))[0],
            lambda d: d.dk["X"].rechunk((rows, cols // 4)).compute(),
            lambda d: d.np_["X"],
            rtol=0.0,
        ),
    ]


# ------------------------------------------------------------------ phases


class LazyarrComputes:
    """``compute`` for a lazyarr phase: computes and keeps each run's statistics."""

    def __init__(self) -> None:
        self.stats: list[Any] = []
        self.predicted: list[dict[str, float] | None] = []

    def __call__(self, *arrays: la.LazyArray) -> tuple[np.ndarray, ...]:
        out = la.compute(*arrays)
        self.stats.append(la.last_run().stats)
        self.predicted.append(la.last_run().predicted())
        return out


def _process_cpu() -> float:
    """CPU seconds of this process: the client, the scheduler (in-process) and their threads."""
    t = psutil.Process().cpu_times()
    return float(t.user + t.system)


def run_phase(
    client: Client,
    data: Data,
    wl: Workload,
    system: str,
    ref: np.ndarray,
    hosts: dict[str, str] | None = None,
) -> dict:
    """One measured phase of ``system`` on ``wl``: wall time, bytes (between the groups of
    ``hosts`` too: address -> group; none: each worker its own), memory, correctness."""
    settled = settle(client, data)
    computes = LazyarrComputes()
    probe.reset(client)
    load = os.getloadavg()[0]
    cpu0 = _process_cpu()
    t0 = time.perf_counter()
    if system == DASK:
        result = wl.run_dask(data)
    else:
        with config.set(LAZYARR_SYSTEMS[system]):
            result = wl.run_lazyarr(data, computes)
    wall = time.perf_counter() - t0
    client_cpu = _process_cpu() - cpu0
    snaps = probe.snapshot(client)
    sched = probe.scheduler_snapshot(client)
    own = data.inputs_on["dask" if system == DASK else "lazyarr"]
    bytes_in = {w: sum(s["bytes_from"].values()) for w, s in snaps.items()}
    peaks = {w: own.get(w, 0) + s["peak"] - s["base"] for w, s in snaps.items()}
    distinct = {
        w: own.get(w, 0) + s["peak_distinct"] - s["base_distinct"] for w, s in snaps.items()
    }
    scale = max(float(np.max(np.abs(ref))), 1e-300)
    err = float(np.max(np.abs(result - ref)) / scale)
    row = {
        "wall_s": wall,
        "peer_bytes": sum(bytes_in.values()),
        "between_hosts_bytes": hostgroups.between(snaps, hosts or {}),
        "max_in_bytes": max(bytes_in.values()),
        "peak_mem_bytes": max(peaks.values()),
        "peak_distinct_bytes": max(distinct.values()),
        "payload_bytes": sum(sum(s["payload_from"].values()) for s in snaps.values()),
        "out_log_bytes": sum(s["out_log_bytes"] for s in snaps.values()),
        "tasks": sum(s["tasks"] for s in snaps.values()),
        "restricted_tasks": sched["restricted"],
        "off_plan_tasks": sched["off_plan"],
        "off_plan_keys": sched["off_plan_keys"],
        "rss_delta_max": max(s["rss_peak"] - s["rss_base"] for s in snaps.values()),
        "per_worker": {
            w: {
                "bytes_in": bytes_in[w],
                "peak_managed": peaks[w],
                "tasks": s["tasks"],
                "fetches": s["fetches"],
            }
            for w, s in snaps.items()
        },
        "worker_cpu_s": sum(s["cpu_s"] for s in snaps.values()),
        "client_cpu_s": client_cpu,
        "load_average_1min": load,
        "rel_err": err,
        "correct": bool(np.allclose(result, ref, rtol=wl.rtol, atol=wl.rtol * scale)),
        "settled": settled,
    }
    if computes.stats:
        st = computes.stats
        planned = [s.extra.get("predicted_bytes") for s in st]
        row["planned_bytes"] = None if None in planned else sum(planned)
        row["la_measured_bytes"] = sum(s.extra["measured_bytes"] for s in st)
        row["computes"] = len(st)
        row["executor_s"] = sum(s.seconds for s in st)
        row["stage_s"] = [s.stage_seconds for s in st]
        row["stage_pred"] = computes.predicted
        row["calibration"] = _calibration(client)
    return row


def _calibration(client: Client) -> dict[str, Any]:
    """What lazyarr's dask executor has measured on this cluster (after the phase)."""
    from lazyarr.executors import registry

    record = registry.get("dask").calibrations.of(client)
    return {
        "network_Bps": record.network_bandwidth,
        "task_s": record.task_seconds,
        "hop_s": record.hop_seconds,
        "call_s": record.call_seconds,
    }


def summarize(wl: Workload, system: str, reps: list[dict]) -> dict:
    def med(k: str) -> float:
        return statistics.median(r[k] for r in reps)

    walls = [r["wall_s"] for r in reps]
    row = {
        "workload": wl.name,
        "system": system,
        "wall_s": med("wall_s"),
        "wall_range": f"{min(walls):.2f}-{max(walls):.2f}",
        "peer_MiB": med("peer_bytes") / MiB,
        "between_hosts_MiB": med("between_hosts_bytes") / MiB,
        "max_in_MiB": med("max_in_bytes") / MiB,
        "peak_mem_MiB": med("peak_mem_bytes") / MiB,
        "peak_distinct_MiB": med("peak_distinct_bytes") / MiB,
        "rss_delta_MiB": med("rss_delta_max") / MiB,
        "planned_MiB": "",
        "la_measured_MiB": "",
        "payload_MiB": med("payload_bytes") / MiB,
        "worker_cpu_s": med("worker_cpu_s"),
        "client_cpu_s": med("client_cpu_s"),
        "cpu_s": statistics.median(r["worker_cpu_s"] + r["client_cpu_s"] for r in reps),
        "tasks": int(med("tasks")),
        "off_plan": int(med("off_plan_tasks")),
        "correct": all(r["correct"] for r in reps),
        "max_rel_err": max(r["rel_err"] for r in reps),
        "peer_MiB_range": f"{min(r['peer_bytes'] for r in reps) / MiB:.3g}-"
        f"{max(r['peer_bytes'] for r in reps) / MiB:.3g}",
        "out_log_MiB": med("out_log_bytes") / MiB,
        "reps": reps,
    }
    if "computes" in reps[0]:
        planned = [r["planned_bytes"] for r in reps]
        if system == "lazyarr" and None not in planned:
            row["planned_MiB"] = statistics.median(planned) / MiB
        row["la_measured_MiB"] = med("la_measured_bytes") / MiB
        row["executor_s"] = med("executor_s")
    return row


# ------------------------------------------------------------------ goals


GOALS = [
    # (workload, metric label, dask key / lazyarr key ratio, goal, "higher is better")
    ("matmul", "peer bytes: dask / lazyarr", "peer_MiB", 2.0),
    ("matmul", "max ingress: dask / lazyarr", "max_in_MiB", 2.5),
    ("matmul", "wall: dask / lazyarr", "wall_s", 1.2),
    ("matmul", "(CPU s, workers + client: dask / lazyarr)", "cpu_s", 1.2),
    ("tensordot", "peer bytes: dask / lazyarr", "peer_MiB", 50.0),
    ("tensordot-gen", "peer bytes: dask / lazyarr", "peer_MiB", 50.0),
    ("logreg", "wall: dask / lazyarr", "wall_s", 1.2),
    ("logreg", "(CPU s, workers + client: dask / lazyarr)", "cpu_s", 1.2),
    ("logreg", "peak memory: dask / lazyarr", "peak_mem_MiB", 1 / 0.6),
    ("logreg", "peak distinct memory: dask / lazyarr", "peak_distinct_MiB", 1 / 0.6),
]


def goal_rows(rows: list[dict], goals: list[tuple] = GOALS) -> list[dict]:
    by = {(r["workload"], r["system"]): r for r in rows}
    out = []
    for wl, label, key, goal in goals:
        d, lz = by.get((wl, DASK)), by.get((wl, "lazyarr"))
        if d is None or lz is None:
            continue
        ratio = d[key] / lz[key] if lz[key] else float("inf")
        out.append(
            {
                "goal": f"{wl}: {label}",
                "workload": wl,
                "metric": label,
                "dask": d[key],
                "lazyarr": lz[key],
                "ratio": ratio,
                "target": goal,
                "met": ratio >= goal,
                "all correct": d["correct"] and lz["correct"],
            }
        )
    return out


# ------------------------------------------------------------------ main


def start_cluster(memory_limit: str) -> tuple[LocalCluster, Client]:
    settings = {
        "distributed.scheduler.active-memory-manager.start": False,
        "distributed.admin.low-level-log-length": 100_000,
    }
    with dask.config.set(settings):
        cluster = LocalCluster(
            n_workers=N_WORKERS,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            memory_limit=memory_limit,
        )
        client = Client(cluster)  # the default client: lazyarr uses it too
    client.amm.stop()
    probe.register(client)
    return cluster, client


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    parser.add_argument("--repeat", type=int, default=3, help="measured rounds per system")
    parser.add_argument("--iters", type=int, default=5, help="Newton iterations")
    parser.add_argument(
        "--workloads", default="matmul,tensordot,tensordot-gen,tensordot-auto,xtx,logreg,rechunk"
    )
    parser.add_argument(
        "--host-groups", type=int, default=0, help="model the workers as this many hosts"
    )
    parser.add_argument(
        "--systems", default=",".join([DASK, *LAZYARR_SYSTEMS]), help="comma-separated"
    )
    args = parser.parse_args(argv)
    groups = hostgroups.groups_for(N_WORKERS, args.host_groups) if args.host_groups else None
    if groups:
        for settings in LAZYARR_SYSTEMS.values():
            settings["dask.host-groups"] = groups
        LAZYARR_SYSTEMS[HOSTS_UNKNOWN] = {**LAZYARR_SYSTEMS["lazyarr"], "dask.host-groups": None}
        if args.systems == parser.get_default("systems"):
            args.systems = ",".join([DASK, "lazyarr", HOSTS_UNKNOWN])
    systems = [s.strip() for s in args.systems.split(",")]
    chosen = set(args.workloads.split(","))
    t_start = time.perf_counter()

    cluster, client = start_cluster("4GiB")
    config.set(
        {
            "executor": "dask",
            "progress": False,
            "dask.active-memory-manager": False,
            "dask.address": None,
            "dask.host-groups": groups,  # the inputs are laid out knowing the groups
        }
    )
    hosts = hostgroups.host_of(client, groups) if groups else None
    name = "distributed-hosts" if groups else "distributed"
    name += "-quick" if args.quick else ""
    meta = {
        "versions": versions("lazyarr", "dask", "distributed", "numpy", "numba"),
        "cluster": {
            "n_workers": N_WORKERS,
            "threads_per_worker": 1,
            "processes": True,
            "host": "127.0.0.1",
            "memory_limit": "4GiB",
            "active_memory_manager": False,
        },
        "repeat": args.repeat,
        "host_groups": groups,
        "load_average_start": os.getloadavg(),
        "sizes": _sizes(args.quick),
        "newton_iterations": args.iters,
        "systems": {DASK: "dask.array defaults", **LAZYARR_SYSTEMS},
        "method": "bench/_dask_probe.py: flight->memory nbytes per worker (lazyarr stage "
        "payloads apart), peak managed memory = inputs of the system on the worker + the "
        "phase's peak of state.nbytes over its start (peak_distinct: the same over distinct "
        "buffers, views counted once); replicas of inputs dropped and memory settled before "
        "every phase; off_plan = tasks finished outside their worker restrictions",
    }
    columns = [
        "workload",
        "system",
        "wall_s",
        "wall_range",
        "worker_cpu_s",
        "client_cpu_s",
        "peer_MiB",
        *(["between_hosts_MiB"] if groups else []),
        "max_in_MiB",
        "peak_mem_MiB",
        "peak_distinct_MiB",
        "planned_MiB",
        "la_measured_MiB",
        "payload_MiB",
        "tasks",
        "off_plan",
        "correct",
    ]
    report = Report(name, columns, meta)
    timing = Report(f"{name}-timing", stage_timing.COLUMNS, {"versions": meta["versions"]})
    try:
        for wl in workloads(args.quick, args.iters):
            if wl.name not in chosen:
                continue
            print(f"\n== {wl.name}: {wl.description}", flush=True)
            t_wl = time.perf_counter()
            data = make_data(client, wl.make()) if wl.persisted else generated_data(wl.make())
            ref = wl.run_numpy(data)
            print(f"  inputs ready ({time.perf_counter() - t_wl:.1f} s)", flush=True)
            for system in systems:  # warm-up: imports, Numba compiles, plan code paths
                run_phase(client, data, wl, system, ref, hosts)
            reps: dict[str, list[dict]] = {s: [] for s in systems}
            for r in range(args.repeat):
                order = systems[r % len(systems) :] + systems[: r % len(systems)]
                for system in order:
                    reps[system].append(run_phase(client, data, wl, system, ref, hosts))
            for system in systems:
                report.add(**summarize(wl, system, reps[system]))
            timed = stage_timing.timing_row(wl.name, reps.get("lazyarr", []))
            if timed is not None:
                timing.add(**timed)
            release(client, data)
            del data
            print(f"  {wl.name} done in {time.perf_counter() - t_wl:.1f} s", flush=True)
    finally:
        with contextlib.suppress(Exception):
            client.close()
        with contextlib.suppress(Exception):
            cluster.close()

    goals = goal_rows(report.rows, hostgroups.GOALS if groups else GOALS)
    report.meta["goals"] = goals
    report.meta["total_s"] = time.perf_counter() - t_start
    report.meta["load_average_end"] = os.getloadavg()
    report.write(plot=("workload", "peer_MiB", "system"))
    goal_report = Report(
        f"{name}-goals",
        ["goal", "dask", "lazyarr", "ratio", "target", "met", "all correct"],
        {"versions": meta["versions"]},
    )
    for g in goals:
        goal_report.add(**g)
    goal_report.write(plot=("workload", "ratio", "metric") if goals else None)
    timing.meta["median_ratio_all_stages"] = stage_timing.overall(timing.rows)
    timing.write()
    md = RESULTS / f"{name}.md"
    md.write_text(
        f"# {name}\n\n{report.markdown()}\n\n## goals (issue {27 if groups else 4})\n\n"
        f"{goal_report.markdown()}\n"
        f"\n## predicted / measured stage seconds (issue 27)\n\n{timing.markdown()}\n"
        f"\nmedian over every stage: {timing.meta['median_ratio_all_stages']}\n"
    )
    print(f"wrote {md}\ntotal {report.meta['total_s']:.0f} s")


if __name__ == "__main__":
    main()
