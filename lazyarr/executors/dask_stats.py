"""Per-worker measurements for the ``dask`` executor, taken on the workers.

A :class:`StatsPlugin` (a ``WorkerPlugin``, registered once per client)
watches the worker's task transitions (research notes §5):

* ``flight -> memory``: a key fetched from a peer (the sender is the task's
  ``coming_from`` while in flight); ``ts.nbytes`` (Dask's ``sizeof``, exact
  for ndarrays) is added to the bytes received, by sender;
* any transition into ``memory``: ``state.nbytes`` (managed memory now)
  updates the peak;
* the worker's resident set, sampled while the run lasts (:mod:`.rss`): what the
  run added to the process, the measured twin of the memory check's prediction;
* the worker's own ``transfer_incoming_log`` entries since the reset: bytes
  and seconds of its fetches from peers (:func:`transfer_totals`: the
  network bandwidth the cost model learns, :mod:`.dask_calibrate`).

Each lazyarr block task records its stage, start and stop here
(:func:`record_task`); a batch task records its tasks at once, as a count, their
summed seconds, the first start and the last stop (:func:`record_tasks`). Each
worker keeps these per stage, so what the client reads after a compute grows
with the stages, not the blocks.
The executor resets the counters with ``client.run`` before a compute and
reads them after (:func:`reset`, :func:`snapshot`); :func:`summarize` turns
the snapshots into ``RunStats`` fields. Keys of the stage payloads
(``lazyarr-stage-...``, code, not data) are not counted.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

from distributed import Client, WorkerPlugin, get_worker
from distributed.comm.core import CommClosedError

from lazyarr.executors.rss import RssWatch

__all__ = [
    "PAYLOAD_PREFIX",
    "PLUGIN_NAME",
    "StatsPlugin",
    "ensure_plugin",
    "record_task",
    "record_tasks",
    "reset",
    "snapshot",
    "stage_busy",
    "summarize",
    "transfer_totals",
]

PLUGIN_NAME = "lazyarr-stats"
PAYLOAD_PREFIX = "lazyarr-stage-"


def record_task(stage: str, start: float, stop: float) -> None:
    """Called by each block task on its worker: which stage it ran and when."""
    record_tasks(stage, 1, stop - start, start, stop)


def record_tasks(stage: str, count: int, busy: float, start: float, stop: float) -> None:
    """Called by each batch task on its worker: how many tasks of ``stage`` it ran, their
    summed seconds, the first one's start and the last one's stop."""
    try:
        worker = get_worker()
    except ValueError:  # not inside a task (a direct call in tests)
        return
    plugin = worker.plugins.get(PLUGIN_NAME)
    if isinstance(plugin, StatsPlugin):
        plugin.add_tasks(stage, count, busy, start, stop)


class StatsPlugin(WorkerPlugin):
    """Counts bytes fetched from peers, the peak of managed memory and block tasks."""

    idempotent = True

    def __init__(self) -> None:
        self.worker: Any = None
        self.bytes_from: dict[str, int] = defaultdict(int)
        self.peak = 0
        self._source: dict[Any, str] = {}
        self._stages: dict[str, list[float]] = {}  # stage: [tasks, seconds, start, stop]
        self._since = 0.0
        self._rss = RssWatch()

    def setup(self, worker: Any) -> None:
        # appended to by task threads, read by client.run on the event loop
        self._lock = threading.Lock()
        self.worker = worker
        self.reset()

    def reset(self) -> None:
        self._rss.end()  # the last run's watch, if it was never read
        self._rss = RssWatch().begin()  # ended by the snapshot after the run
        self.bytes_from = defaultdict(int)
        self.peak = int(self.worker.state.nbytes) if self.worker is not None else 0
        # the log's times are shifted by the scheduler's clock offset
        delay = getattr(self.worker, "scheduler_delay", 0.0) if self.worker is not None else 0.0
        self._since = time.time() + delay
        with self._lock:
            self._stages = {}

    def add_tasks(self, stage: str, count: int, busy: float, start: float, stop: float) -> None:
        with self._lock:
            row = self._stages.get(stage)
            if row is None:
                self._stages[stage] = [count, busy, start, stop]
                return
            row[0] += count
            row[1] += busy
            row[2] = min(row[2], start)
            row[3] = max(row[3], stop)

    def transition(self, key: Any, start: str, finish: str, *args: Any, **kwargs: Any) -> None:
        # Plugins also hear transitions that turned out no-ops (``flight -> fetch``
        # while the transfer is still running), so read the task's actual state.
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
        payload = isinstance(key, str) and key.startswith(PAYLOAD_PREFIX)
        if source is not None and not payload and ts.nbytes:
            self.bytes_from[source] += int(ts.nbytes)
        self.peak = max(self.peak, int(state.nbytes))

    def snapshot(self) -> dict[str, Any]:
        self._rss.end()
        with self._lock:
            stages = {name: tuple(row) for name, row in self._stages.items()}
        return {
            "bytes_from": dict(self.bytes_from),
            "peak_memory": max(self.peak, int(self.worker.state.nbytes)),
            "rss_growth": self._rss.growth,
            "stages": stages,
            "fetch_log": self._fetch_log(),
        }

    def _fetch_log(self) -> tuple[int, float]:
        """Bytes and seconds of this worker's fetches from peers since the reset."""
        nbytes, seconds = 0, 0.0
        for entry in list(getattr(self.worker, "transfer_incoming_log", ())):
            if entry.get("start", 0.0) >= self._since:
                nbytes += int(entry.get("total", 0))
                seconds += float(entry.get("duration", 0.0))
        return nbytes, seconds


def _reset_on(dask_worker: Any) -> None:
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    if plugin is not None:
        plugin.reset()


def _snapshot_on(dask_worker: Any) -> dict[str, Any] | None:
    plugin = dask_worker.plugins.get(PLUGIN_NAME)
    return None if plugin is None else plugin.snapshot()


_REGISTERED: set[str] = set()


def ensure_plugin(client: Client) -> None:
    """Register the plugin on ``client``'s cluster (once per client; new workers get it too)."""
    if client.id not in _REGISTERED:
        for attempt in range(3):  # a worker dying as we register breaks the call, not us
            try:
                client.register_plugin(StatsPlugin(), name=PLUGIN_NAME)
                break
            except (OSError, CommClosedError):
                if attempt == 2:
                    raise
                time.sleep(0.2 * (attempt + 1))
        _REGISTERED.add(client.id)


def reset(client: Client) -> None:
    """Zero the counters on every worker (before a compute)."""
    client.run(_reset_on, on_error="ignore")


def snapshot(client: Client) -> dict[str, dict[str, Any]]:
    """Each worker's counters since the last :func:`reset` (workers that fail are left out)."""
    out = client.run(_snapshot_on, on_error="return")
    return {w: s for w, s in out.items() if isinstance(s, dict)}


def summarize(snaps: dict[str, dict[str, Any]]) -> tuple[dict[str, float], dict[str, Any], int]:
    """(wall seconds per stage, per-worker table, total bytes moved between workers)."""
    workers: dict[str, dict[str, int]] = {
        w: {"bytes_in": 0, "bytes_out": 0, "peak_memory": 0, "tasks": 0} for w in snaps
    }
    spans: dict[str, list[float]] = {}
    total = 0
    for w, s in snaps.items():
        row = workers[w]
        row["peak_memory"] = int(s["peak_memory"])
        row["rss_growth"] = int(s.get("rss_growth", 0))
        row["tasks"] = int(sum(count for count, _, _, _ in s["stages"].values()))
        for src, n in s["bytes_from"].items():
            row["bytes_in"] += n
            total += n
            workers.setdefault(src, {"bytes_in": 0, "bytes_out": 0, "peak_memory": 0, "tasks": 0})
            workers[src]["bytes_out"] += n
        for stage, (_, _, start, stop) in s["stages"].items():
            span = spans.setdefault(stage, [start, stop])
            span[0] = min(span[0], start)
            span[1] = max(span[1], stop)
    stage_seconds = {name: stop - start for name, (start, stop) in spans.items()}
    return stage_seconds, dict(sorted(workers.items())), total


def transfer_totals(snaps: dict[str, dict[str, Any]]) -> tuple[int, float]:
    """Bytes and seconds of every fetch between workers in the snapshots (summed)."""
    nbytes, seconds = 0, 0.0
    for s in snaps.values():
        b, t = s.get("fetch_log", (0, 0.0))
        nbytes += int(b)
        seconds += float(t)
    return nbytes, seconds


def stage_busy(snaps: dict[str, dict[str, Any]]) -> dict[str, tuple[float, int]]:
    """Per stage: seconds its tasks ran (summed over workers and threads) and how many."""
    out: dict[str, tuple[float, int]] = {}
    for s in snaps.values():
        for stage, (count, busy, _, _) in s["stages"].items():
            secs, n = out.get(stage, (0.0, 0))
            out[stage] = (secs + busy, n + int(count))
    return out
