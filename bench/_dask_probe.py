"""Per-worker byte and memory counters for ``bench/distributed_placement.py`` (research notes §5).

A ``WorkerPlugin`` of its own (not lazyarr's ``dask_stats`` plugin, which
the lazyarr executor resets at every compute: a benchmark phase may span
several computes, e.g. five Newton iterations), so it measures lazyarr
and ``dask.array`` alike:

* ``flight -> memory``: a key fetched from a peer worker; its ``ts.nbytes``
  (Dask's ``sizeof``, exact for ndarrays) is added to the bytes received,
  by sender. lazyarr's stage payloads (keys ``lazyarr-stage-*``: code, not
  data) are counted apart;
* any transition into ``memory``: ``state.nbytes`` (managed memory now)
  updates the peak; so does the size of the *distinct* buffers held
  (a view, e.g. lazyarr's transposed block, counts in ``state.nbytes`` as
  a full copy but costs no memory); ``executing -> memory`` counts the
  tasks run here;
* a 10 ms ``PeriodicCallback`` samples the process RSS (an upper bound that
  includes task temporaries); the process CPU time (user + system) since
  the reset is read at the snapshot (robust to other load on the machine);
* ``transfer_outgoing_log`` entries to peers since the reset: a cross-check
  of the bytes received (raise ``distributed.admin.low-level-log-length``).

A ``SchedulerPlugin`` (:class:`SchedulerProbe`) counts, on the scheduler,
the tasks that finished on a worker outside their worker restrictions
(lazyarr's soft placement lets Dask's work stealing move them): the
reason measured bytes can exceed the plan's.

``reset(client)`` before a phase and ``snapshot(client)`` after it
(``client.run`` and ``client.run_on_scheduler``).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import numpy as np
import psutil
from distributed import Client, SchedulerPlugin, WorkerPlugin
from tornado.ioloop import PeriodicCallback

__all__ = ["NAME", "Probe", "SchedulerProbe", "register", "reset", "scheduler_snapshot", "snapshot"]

NAME = "bench-probe"
SCHEDULER_NAME = "bench-scheduler-probe"
PAYLOAD_PREFIX = "lazyarr-stage-"


def _is_payload(key: Any) -> bool:
    return isinstance(key, str) and key.startswith(PAYLOAD_PREFIX)


def distinct_bytes(values: Any) -> int:
    """Bytes of the distinct buffers behind ``values`` (views of one array count once)."""
    seen: dict[int, int] = {}
    for v in values:
        if not isinstance(v, np.ndarray):
            continue
        root: Any = v
        while isinstance(root, np.ndarray) and root.base is not None:
            root = root.base
        size = getattr(root, "nbytes", None)
        seen[id(root)] = int(size) if isinstance(size, int) else int(v.nbytes)
    return sum(seen.values())


class Probe(WorkerPlugin):
    """Bytes fetched from peers, peak managed memory, peak RSS and tasks run, since a reset."""

    idempotent = True

    def setup(self, worker: Any) -> None:
        self.worker = worker
        self._proc = psutil.Process()
        self._source: dict[Any, str] = {}
        self.reset()
        self._sampler = PeriodicCallback(self._sample, 10)
        self._sampler.start()

    def teardown(self, worker: Any) -> None:
        self._sampler.stop()

    def _distinct(self) -> int:
        data = self.worker.data
        return distinct_bytes(getattr(data, "fast", data).values())

    def _sample(self) -> None:
        self.rss_peak = max(self.rss_peak, self._proc.memory_info().rss)

    def reset(self) -> None:
        self.t0 = time.time()
        self.bytes_from: dict[str, int] = defaultdict(int)
        self.payload_from: dict[str, int] = defaultdict(int)
        self.fetches = 0
        self.tasks = 0
        self.base = int(self.worker.state.nbytes)
        self.peak = self.base
        self.base_distinct = self.peak_distinct = self._distinct()
        self.rss_base = self.rss_peak = self._proc.memory_info().rss
        self.cpu_base = self._cpu()

    def _cpu(self) -> float:
        t = self._proc.cpu_times()
        return float(t.user + t.system)

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        # The hook also hears transitions that turned out no-ops (``flight -> fetch``
        # while the transfer still runs): read the task's actual state.
        state = self.worker.state
        ts = state.tasks.get(key)
        now = ts.state if ts is not None else "forgotten"
        if now == "flight":
            if ts.coming_from:
                self._source[key] = ts.coming_from
            return
        source = self._source.pop(key, None)
        if now != "memory" or finish != "memory":
            return
        if source is not None and ts.nbytes:
            if _is_payload(key):
                self.payload_from[source] += int(ts.nbytes)
            else:
                self.bytes_from[source] += int(ts.nbytes)
                self.fetches += 1
        elif start == "executing":
            self.tasks += 1
        self.peak = max(self.peak, int(state.nbytes))
        self.peak_distinct = max(self.peak_distinct, self._distinct())

    def snapshot(self) -> dict[str, Any]:
        self._sample()
        log_bytes = 0
        for entry in list(self.worker.transfer_outgoing_log):
            if entry["who"] and entry["start"] >= self.t0 - 0.05:
                log_bytes += sum(n for k, n in entry["keys"].items() if not _is_payload(k))
        return {
            "bytes_from": dict(self.bytes_from),
            "payload_from": dict(self.payload_from),
            "fetches": self.fetches,
            "tasks": self.tasks,
            "base": self.base,
            "peak": max(self.peak, int(self.worker.state.nbytes)),
            "nbytes_now": int(self.worker.state.nbytes),
            "base_distinct": self.base_distinct,
            "peak_distinct": max(self.peak_distinct, self._distinct()),
            "rss_base": self.rss_base,
            "rss_peak": self.rss_peak,
            "out_log_bytes": log_bytes,
            "cpu_s": self._cpu() - self.cpu_base,
        }


class SchedulerProbe(SchedulerPlugin):
    """Tasks finished since a reset: all, restricted, and run off their restriction."""

    idempotent = True
    name = SCHEDULER_NAME

    def __init__(self) -> None:
        self.reset()

    async def start(self, scheduler: Any) -> None:
        self.scheduler = scheduler

    def reset(self) -> None:
        self.finished = 0
        self.restricted = 0
        self.off_plan = 0
        self.off_plan_keys: list[str] = []

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        if start != "processing" or finish != "memory":
            return
        self.finished += 1
        ts = self.scheduler.tasks.get(key)
        allowed = ts.worker_restrictions if ts is not None else None
        if allowed:
            self.restricted += 1
            if kwargs.get("worker") not in allowed:
                self.off_plan += 1
                if len(self.off_plan_keys) < 20:
                    self.off_plan_keys.append(str(key))

    def snapshot(self) -> dict[str, Any]:
        return {
            "finished": self.finished,
            "restricted": self.restricted,
            "off_plan": self.off_plan,
            "off_plan_keys": list(self.off_plan_keys),
        }


def _reset_scheduler(dask_scheduler: Any) -> None:
    dask_scheduler.plugins[SCHEDULER_NAME].reset()


def _snapshot_scheduler(dask_scheduler: Any) -> dict[str, Any]:
    return dask_scheduler.plugins[SCHEDULER_NAME].snapshot()


def _reset_on(dask_worker: Any) -> None:
    dask_worker.plugins[NAME].reset()


def _snapshot_on(dask_worker: Any) -> dict[str, Any]:
    return dask_worker.plugins[NAME].snapshot()


def register(client: Client) -> None:
    """Install the probe on every worker of ``client``'s cluster."""
    client.register_plugin(Probe(), name=NAME)
    client.register_plugin(SchedulerProbe(), name=SCHEDULER_NAME)


def reset(client: Client) -> None:
    client.run_on_scheduler(_reset_scheduler)
    client.run(_reset_on)


def snapshot(client: Client) -> dict[str, dict[str, Any]]:
    """Each worker's counters since the last :func:`reset`, by worker address."""
    return client.run(_snapshot_on)


def scheduler_snapshot(client: Client) -> dict[str, Any]:
    """Tasks finished since the last :func:`reset`, and those run off their restriction."""
    return client.run_on_scheduler(_snapshot_scheduler)
