"""The speeds of a Dask cluster, measured once and kept per cluster (the cost model's data).

At first contact with a cluster (keyed by its scheduler's address and id,
so a new cluster on the same port is measured again) every worker runs the
speed probe (:func:`.calibrate.probe_speed`, ``client.run``), and the
scheduler is timed: :data:`CHAIN` tiny tasks each reading the last, on
alternating workers (seconds per round trip: ``hop_seconds``), and
:data:`FAN` independent tiny tasks submitted at once (seconds per task
handed out: ``task_seconds``). A worker that joins later is probed when a
plan first sees it. After each run, the bytes and seconds of the transfers
between workers (the workers' ``transfer_incoming_log``, read by
:mod:`.dask_stats`) update the network bandwidth, and the run's tasks the
seconds a task takes besides its bytes and flops (``call_seconds``: the
median over stages of :func:`~lazyarr.optimize.timing.task_residuals`);
recent runs weigh more (:data:`NETWORK_DECAY`). :meth:`Calibrations.costs`
hands the passes a :class:`~lazyarr.optimize.timing.Costs` in the plan's
worker order.
"""

from __future__ import annotations

import dataclasses
import statistics
import threading
import time
from collections.abc import Collection, Sequence
from typing import Any

from distributed import Client, Future
from distributed.comm.core import CommClosedError

from lazyarr.optimize.plan import Plan
from lazyarr.optimize.timing import Costs, Speed, hop_residuals, task_residuals

from .calibrate import probe_speed

__all__ = [
    "CHAIN",
    "FAN",
    "NETWORK_DECAY",
    "Calibrations",
    "ClusterCalibration",
    "RunMeasures",
    "cluster_key",
    "probe_scheduler",
]

PROBE_TIMEOUT = 10.0
"""Seconds the scheduler probe waits for its tasks (then the latencies stay unknown)."""
CHAIN = 5
"""Tasks in the chain that times a round trip between workers."""
FAN = 12
"""Independent tasks that time the scheduler's handing out of tasks."""
SCHEDULER_REPEATS = 2
"""Chains and fans timed; the fastest counts (a cluster just started is slow at first)."""

NETWORK_DECAY = 0.5
"""Weight earlier runs keep at each new run's update (transfers, seconds per task)."""
MIN_TRANSFER_BYTES = 1 << 16
"""Runs that moved fewer bytes than this between workers leave the bandwidth as it is
(latency, not bandwidth, decides their transfers)."""


@dataclasses.dataclass
class ClusterCalibration:
    """What was measured on one cluster."""

    speeds: dict[str, Speed] = dataclasses.field(default_factory=dict)
    """Per worker address: its probed speeds."""
    cores: dict[str, int] = dataclasses.field(default_factory=dict)
    """Per worker address: the cores its process may run on."""
    tried: set[str] = dataclasses.field(default_factory=set)
    """Workers the probe was sent to (one that failed is not asked again)."""
    transfer_bytes: float = 0.0
    transfer_seconds: float = 0.0
    """Bytes and seconds of transfers between workers, decayed run by run."""
    task_seconds: float = 0.0
    hop_seconds: float = 0.0
    """The scheduler's seconds per task handed out and per round trip (:func:`probe_scheduler`)."""
    call_seconds: float = 0.0
    """Seconds a task takes besides its bytes and flops, learnt from runs (decayed)."""
    probes: int = 0
    """How many times the probe was sent (once per cluster, plus once per batch of
    workers that joined later)."""
    runs: int = 0
    """Runs whose transfers updated the network bandwidth."""

    @property
    def network_bandwidth(self) -> float | None:
        """Bytes per second between workers (None until a run moved data)."""
        if self.transfer_seconds <= 0:
            return None
        return self.transfer_bytes / self.transfer_seconds

    def add_transfers(self, nbytes: float, seconds: float) -> bool:
        """Fold one run's transfers into the bandwidth; False when too few bytes moved."""
        if nbytes < MIN_TRANSFER_BYTES or seconds <= 0:
            return False
        self.transfer_bytes = self.transfer_bytes * NETWORK_DECAY + nbytes
        self.transfer_seconds = self.transfer_seconds * NETWORK_DECAY + seconds
        self.runs += 1
        return True

    def add_residuals(self, residuals: dict[str, float]) -> None:
        """Fold one run's per-task residuals (seconds, per stage) into ``call_seconds``."""
        self.call_seconds = _folded(self.call_seconds, list(residuals.values()))

    def add_hops(self, hops: list[float]) -> None:
        """Fold one run's estimates of the scheduler's round trip
        (:func:`~lazyarr.optimize.timing.hop_residuals`) into the probe's."""
        self.hop_seconds = _folded(self.hop_seconds, hops)

    def costs(self, workers: Sequence[str]) -> Costs:
        """The speeds of ``workers`` (the slowest probed one for any not probed)."""
        latency = {
            "task_seconds": self.task_seconds,
            "hop_seconds": self.hop_seconds,
            "call_seconds": self.call_seconds,
        }
        if not self.speeds:  # every probe failed (workers leaving): the constants
            return Costs(network_bandwidth=self.network_bandwidth, **latency)
        fallback = min(self.speeds.values(), key=lambda s: s.flop_rate)
        speeds = tuple(self.speeds.get(w, fallback) for w in workers) or (fallback,)
        cores = tuple(self.cores.get(w, 0) for w in workers)
        return Costs(speeds, self.network_bandwidth, cores=cores, measured=True, **latency)


def _folded(old: float, estimates: list[float]) -> float:
    """``old`` moved toward the median of a run's ``estimates`` (clipped at 0)."""
    if not estimates:
        return old
    now = max(0.0, statistics.median(estimates))
    return old * NETWORK_DECAY + now * (1 - NETWORK_DECAY) if old else now


def cluster_key(client: Client) -> tuple[str, str]:
    """The scheduler's address and id: one record per cluster."""
    info = client.scheduler_info(n_workers=0)
    return str(client.scheduler.address), str(info.get("id", ""))


def _probe_on(dask_worker: Any) -> tuple[float, float, float, int]:
    return probe_speed()


def _pass(x: Any, *_: Any) -> Any:
    return x


def _wait(futures: Sequence[Future | None]) -> None:
    """Each future's result, all within :data:`PROBE_TIMEOUT` (else ``TimeoutError``)."""
    deadline = time.monotonic() + PROBE_TIMEOUT
    for f in futures:
        if f is not None:
            f.result(timeout=max(0.0, deadline - time.monotonic()))


def _chain(client: Client, pair: list[str]) -> float:
    """Seconds per link of a chain of :data:`CHAIN` tiny tasks on alternating workers."""
    start = time.perf_counter()
    link = None
    for i in range(CHAIN):
        where = [pair[i % len(pair)]] if pair else None
        # loose restrictions: a worker leaving never stalls the probe
        link = client.submit(_pass, link, i, pure=False, workers=where, allow_other_workers=True)
    _wait([link])
    return (time.perf_counter() - start) / CHAIN


def _fan(client: Client, hop: float) -> float:
    """Seconds per task of :data:`FAN` tiny tasks sent in one message, as a compute's
    graph is (the round trip that brings the results back taken off)."""
    start = time.perf_counter()
    _wait(client.map(_pass, range(FAN), pure=False))
    return max(0.0, time.perf_counter() - start - hop) / FAN


def probe_scheduler(client: Client, workers: Sequence[str]) -> tuple[float, float]:
    """(seconds per task handed out, seconds per round trip between workers): the fastest
    of :data:`SCHEDULER_REPEATS` timings each, after a fan that warms the workers (their
    first tasks load the function); zeros when the cluster does not finish the probe
    within :data:`PROBE_TIMEOUT`."""
    pair = list(workers[:2])
    try:
        _wait(client.map(_pass, range(2 * max(1, len(workers))), pure=False))
        hop = min(_chain(client, pair) for _ in range(SCHEDULER_REPEATS))
        per_task = min(_fan(client, hop) for _ in range(SCHEDULER_REPEATS))
    except TimeoutError:
        return 0.0, 0.0
    return per_task, hop


@dataclasses.dataclass(frozen=True)
class RunMeasures:
    """What one run measured that the cost model learns from (:mod:`.dask_stats`)."""

    busy: dict[str, tuple[float, int]]
    """Per stage: seconds its tasks ran (summed) and how many (``stage_busy``)."""
    spans: dict[str, float]
    """Per stage: first task's start to last task's end (``summarize``)."""
    transfers: tuple[float, float]
    """Bytes and seconds fetched between workers (``transfer_totals``)."""
    threads: int = 1
    """Threads per worker."""


class Calibrations:
    """Per-cluster speeds, for one executor (kept while the process lives)."""

    def __init__(self) -> None:
        self._clusters: dict[tuple[str, str], ClusterCalibration] = {}
        self._keys: dict[str, tuple[str, str]] = {}  # client id -> its cluster's key
        self._lock = threading.Lock()

    def of(self, client: Client) -> ClusterCalibration:
        """The record of ``client``'s cluster (empty before the first probe)."""
        key = self._keys.get(client.id)
        if key is None:  # asked once per client: a client stays with its scheduler
            key = self._keys[client.id] = cluster_key(client)
        with self._lock:
            return self._clusters.setdefault(key, ClusterCalibration())

    def costs(self, client: Client, workers: Sequence[str]) -> Costs:
        """The speeds of ``workers`` (probing those not measured yet) and the network's."""
        record = self.of(client)
        missing = [w for w in workers if w not in record.tried]
        if missing:
            record.tried.update(missing)
            record.probes += 1
            try:
                got = client.run(_probe_on, workers=missing, on_error="return")
            except (OSError, CommClosedError):  # a worker left as we asked: the others' speeds
                got = {}
            if record.probes == 1:
                record.task_seconds, record.hop_seconds = probe_scheduler(client, workers)
            for w, value in got.items():
                if isinstance(value, tuple) and len(value) == 4:
                    *rates, cores = value
                    record.speeds[w] = Speed(*rates)
                    record.cores[w] = int(cores)
        return record.costs(workers)

    def record_run(
        self,
        client: Client,
        plan: Plan,
        measured: RunMeasures,
        made_in: Collection[str] | None = None,
    ) -> None:
        """What one run measured; ``made_in``: the sources its lowering made inside their
        readers' tasks. The network first, then the seconds per task, then the
        scheduler's round trip, each estimated with the others already updated."""
        record = self.of(client)
        record.add_transfers(*measured.transfers)
        if not record.speeds:
            return
        costs = record.costs(plan.workers)
        record.add_residuals(task_residuals(plan, costs, measured.busy, made_in))
        costs = record.costs(plan.workers)
        record.add_hops(hop_residuals(plan, costs, measured.spans, measured.threads, made_in))
