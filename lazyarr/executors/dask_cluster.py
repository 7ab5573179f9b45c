"""Which Dask cluster the ``dask`` executor talks to, and its lifetime.

In order: config ``dask.address`` (connect to that scheduler, within
``dask.timeout``); else a ``distributed.Client`` the user already made in
this session; else a ``LocalCluster`` on loopback (``dask.n-workers``,
``dask.threads-per-worker``, ``dask.memory-limit``; worker processes, or
threads of this process with ``dask.processes: false``; its dashboard at
``dask.dashboard``, on loopback, its link printed once; its workers ready for
tasks before it is handed out, :mod:`.dask_warmup`) that is started once,
reused by later computes and closed at interpreter exit or by ``close()``;
it is started again when its workers have stopped for good or a compute on
it got ``KeyboardInterrupt`` (a terminal's Ctrl-C signals the worker
processes too). A scheduler without workers is an error after ``dask.timeout``.
Worker processes are not started from a script's unguarded top-level code
(``spawn_guard``): that would re-run the script in every worker.
Only the clusters and clients started here are ever closed here.
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import logging
import socket
import struct
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import dask.config
from distributed import Client, LocalCluster, default_client
from distributed.comm import get_address_host
from distributed.core import Status
from tornado.websocket import WebSocketError

from lazyarr import config

from . import dask_warmup
from .dask_hosts import group_hosts
from .malloc import MMAP_THRESHOLD
from .spawn_guard import check_main_guard

__all__ = ["ClusterManager", "SchedulerUnreachable", "dashboard_link", "worker_info"]

WORKER_BASELINE = 512 << 20
"""What a worker process holds before any block (Python, Dask, NumPy, Numba and the kernels
it compiled: about 210 MiB after five kinds of plans): a LocalCluster started under
``memory-limit`` gets this much more per worker, since Dask's worker limit counts the whole
process and lazyarr's only the blocks."""


class SchedulerUnreachable(ConnectionError):
    """The scheduler at ``dask.address`` did not answer within ``dask.timeout``."""


def _active_client() -> Client | None:
    """The user's running default client, if there is one."""
    try:
        client = default_client()
    except ValueError:
        return None
    return client if client.status == "running" else None


def worker_info(client: Client, host_groups: Mapping[Any, str] | None = None) -> dict[str, Any]:
    """Workers of ``client``'s cluster: sorted addresses, their hosts, the smallest memory limit.

    ``host_groups`` (``dask.host-groups``) overrides the hosts the addresses name
    (:func:`.dask_hosts.group_hosts`).
    """
    workers = client.scheduler_info(n_workers=-1)["workers"]
    addrs = tuple(sorted(workers))
    names = [workers[a].get("name") for a in addrs]
    hosts = group_hosts(addrs, names, [get_address_host(a) for a in addrs], host_groups)
    limits = [w.get("memory_limit") for w in workers.values()]
    limits = [int(m) for m in limits if m]
    threads = [int(w.get("nthreads") or 1) for w in workers.values()]
    return {
        "n_workers": len(addrs),
        "workers": addrs,
        "hosts": hosts,
        "memory_limit": min(limits) if limits else None,
        "threads": max(threads) if threads else 1,
    }


class ClusterManager:
    """Finds or starts the client to use; owns (and closes) only what it started."""

    def __init__(self) -> None:
        self._client: Client | None = None
        self._cluster: LocalCluster | None = None
        self._key: tuple | None = None
        self._lock = threading.RLock()
        self._atexit = False
        self._users: dict[int, int] = {}  # id(client) -> computes running on it
        self._retired: list[tuple[Client, LocalCluster | None]] = []  # replaced, still in use
        self._interrupted = False  # a compute on the LocalCluster of processes got Ctrl-C

    @property
    def owned(self) -> Client | None:
        """The client this manager started (None when it uses someone else's)."""
        return self._client

    def client(self) -> Client:
        """The client for the next compute (connecting or starting a cluster if needed)."""
        with self._lock:
            address = config.get("dask.address")
            timeout = config.parse_duration(config.get("dask.timeout"))
            if address:
                key: tuple = ("address", address)
                if self._key != key or not self._running():
                    self._retire()
                    self._client = _connect(address, timeout)
                    self._key = key
                    self._register_close()
                client = self._client
            else:
                active = _active_client()
                if active is not None and active is not self._client:
                    client = active
                else:
                    key = (
                        "local",
                        int(config.get("dask.n-workers")),
                        int(config.get("dask.threads-per-worker")),
                        config.get("dask.memory-limit"),
                        bool(config.get("dask.processes")),
                        config.get("dask.dashboard"),
                    )
                    stale = self._interrupted or self._lost_workers()
                    if self._key != key or not self._running() or stale:
                        self._retire()
                        self._start_local(*key[1:], timeout=timeout)
                        self._key = key
                        self._register_close()
                    client = self._client
            assert client is not None
            if not config.get("dask.active-memory-manager"):
                with contextlib.suppress(Exception):
                    client.amm.stop()
            return client

    @contextlib.contextmanager
    def using(self) -> Iterator[Client]:
        """The client for a compute, kept open until the compute ends: a settings change in
        another thread starts a new cluster but closes this one only after its last user."""
        with self._lock:
            client = self.client()
            self._users[id(client)] = self._users.get(id(client), 0) + 1
        try:
            yield client
        except KeyboardInterrupt:
            # a terminal's Ctrl-C reaches the worker processes too, which then stop (a moment
            # later: the next compute could still see them): start a fresh cluster next time,
            # which also drops the interrupted compute's tasks
            with self._lock:
                if client is self._client and self._key and self._key[0] == "local":
                    self._interrupted = bool(self._key[4])
            raise
        finally:
            with self._lock:
                left = self._users[id(client)] - 1
                if left:
                    self._users[id(client)] = left
                else:
                    del self._users[id(client)]
                    for pair in [p for p in self._retired if p[0] is client]:
                        self._retired.remove(pair)
                        _close(*pair)

    def _retire(self) -> None:
        """Stop using the current client: closed now, or after the computes still on it."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        self._key = None
        self._interrupted = False
        if client is None:
            return
        if self._users.get(id(client)):
            self._retired.append((client, cluster))
        else:
            _close(client, cluster)

    def _running(self) -> bool:
        return self._client is not None and self._client.status == "running"

    def _lost_workers(self) -> bool:
        """The LocalCluster started here has workers that stopped for good: Ctrl-C in a
        terminal signals its worker processes too, and their nannies then close."""
        cluster = self._cluster
        return cluster is not None and any(
            getattr(w, "status", Status.running) in _GONE for w in cluster.workers.values()
        )

    def workers(self, client: Client) -> dict[str, Any]:
        """:func:`worker_info` of ``client``'s cluster (hosts after ``dask.host-groups``),
        waiting up to ``dask.timeout`` for a first worker: a scheduler without workers is an
        error, never a hang."""
        groups = config.get("dask.host-groups")
        info = worker_info(client, groups)
        if info["n_workers"]:
            return info
        timeout = config.parse_duration(config.get("dask.timeout"))
        try:
            client.wait_for_workers(1, timeout=timeout)
        except TimeoutError as e:
            raise SchedulerUnreachable(
                f"the Dask scheduler at {client.scheduler.address!r} has no workers: none "
                f"joined within {timeout:g} s (config dask.timeout)"
            ) from e
        return worker_info(client, groups)

    def _start_local(
        self,
        n_workers: int,
        threads: int,
        memory_limit: Any,
        processes: bool,
        dashboard: str | None,
        timeout: float,
    ) -> None:
        if processes:
            check_main_guard(dask.config.get("distributed.worker.multiprocessing-method"))
        limit = None if memory_limit is None else config.parse_bytes(memory_limit)
        planned = config.get("memory-limit")  # what lazyarr plans each worker's blocks for
        if planned is not None:  # the worker's own limit counts the process, not only blocks
            planned = config.parse_bytes(planned) + WORKER_BASELINE
            limit = planned if limit is None else min(limit, planned)
        amm = bool(config.get("dask.active-memory-manager"))
        settings = {"distributed.scheduler.active-memory-manager.start": amm}
        if planned is not None:  # freed blocks leave the workers too (executors/malloc.py)
            settings["distributed.nanny.pre-spawn-environ.MALLOC_MMAP_THRESHOLD_"] = str(
                MMAP_THRESHOLD
            )
            # lazyarr's plan keeps the blocks within the limit; Dask's pausing and spilling
            # count the whole process (its baseline too) and only stalled such plans (a 3 MiB
            # limit: workers paused at 207 MiB, nothing ran for 60 s). Termination stays as
            # the safety net.
            for step in ("target", "spill", "pause"):
                settings[f"distributed.worker.memory.{step}"] = False
        # threads talk in-process (Dask's default for processes=False: no host to bind)
        where = {"host": "127.0.0.1"} if processes else {}
        with dask.config.set(settings):
            cluster = LocalCluster(
                n_workers=n_workers,
                threads_per_worker=threads,
                memory_limit=limit,
                processes=processes,
                dashboard_address=dashboard,
                **where,
                # without a dashboard, the scheduler's HTTP routes on a free port, not 8787
                **({} if dashboard else {"scheduler_kwargs": _NO_DASHBOARD}),
            )
        try:
            client = _OwnClient(cluster, set_as_default=False, timeout=timeout)
        except BaseException:
            cluster.close()
            raise
        try:  # workers ready for tasks before the first compute (dask_warmup)
            dask_warmup.register(client)
        except BaseException:
            _close(client, cluster)
            raise
        self._cluster, self._client = cluster, client
        link = dashboard_link(cluster, dashboard)
        if link:
            print(f"lazyarr: Dask dashboard at {link}", file=sys.stderr, flush=True)

    def _register_close(self) -> None:
        if not self._atexit:
            atexit.register(self.close)
            self._atexit = True

    def close(self) -> None:
        """Close the client and the LocalCluster started here (no-op if none)."""
        with self._lock:
            client, cluster = self._client, self._cluster
            self._client = self._cluster = None
            self._key = None
            retired, self._retired = self._retired, []
            for pair in [(client, cluster), *retired]:
                _close(*pair)


_NO_DASHBOARD = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}


def dashboard_link(cluster: LocalCluster, address: str | None) -> str:
    """The dashboard's URL on the host it was asked to listen on ("" when it has none: no
    ``dask.dashboard``, or bokeh missing)."""
    port = cluster.scheduler_info.get("services", {}).get("dashboard")
    if not address or not port:
        return ""
    host = address.rpartition(":")[0].strip("[]") or "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}/status"


_GONE = frozenset({Status.closing, Status.closing_gracefully, Status.closed, Status.failed})
"""States of a LocalCluster's worker (or nanny) that it never leaves."""


_RECONNECTING: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "lazyarr_own_client_reconnecting", default=False
)
"""Set inside the reconnection of a client lazyarr made (:class:`_OwnClient`)."""


class _QuietReconnect(logging.Filter):
    """Drops the ``distributed.client`` records logged while one of lazyarr's own clients
    tries to reach a scheduler that went away (the context variable marks that task)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _RECONNECTING.get()


logging.getLogger("distributed.client").addFilter(_QuietReconnect())


class _OwnClient(Client):
    """A client lazyarr made: its scheduler going away (a user's cluster closed under it,
    ours at exit) is not an error to log; the next compute connects again or says why."""

    async def _reconnect(self) -> Any:
        token = _RECONNECTING.set(True)
        try:
            return await super()._reconnect()
        finally:
            _RECONNECTING.reset(token)


def _close(client: Client | None, cluster: LocalCluster | None) -> None:
    if client is not None:
        with contextlib.suppress(Exception):
            client.close()
    if cluster is not None:
        with contextlib.suppress(Exception):
            cluster.close()


_MAX_GREETING = 1 << 20  # a scheduler's first message (its handshake) is a few hundred bytes


def _probe(address: str, timeout: float) -> None:
    """Check, within ``timeout``, that a plain-TCP ``address`` speaks Dask's protocol.

    A scheduler writes its handshake as soon as a connection opens: an 8-byte
    little-endian length, then the frames. A silent peer (a port that accepts
    and never answers, an HTTP server waiting for a request) or one that
    greets with text (ssh, smtp) would make ``Client`` wait long past
    ``dask.timeout`` or read the text as a frame length.
    """
    scheme, _, rest = address.rpartition("://")
    if scheme == "ws":
        _probe_ws(address, rest, timeout)
        return
    if scheme not in ("", "tcp"):
        return  # tls, wss, ucx, inproc: left to distributed
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            head = b""
            while len(head) < 16:
                sock.settimeout(max(deadline - time.monotonic(), 0.001))
                chunk = sock.recv(16 - len(head))
                if not chunk:
                    raise SchedulerUnreachable(
                        f"{address!r} closed the connection without a Dask handshake "
                        "(config dask.address)"
                    )
                head += chunk
    except TimeoutError as e:
        raise SchedulerUnreachable(
            f"{address!r} accepted a connection but sent no Dask handshake within "
            f"{timeout:g} s: not a Dask scheduler, or a stuck one (config dask.address, "
            "dask.timeout)"
        ) from e
    except OSError:
        return  # refused or unroutable: Client reports it, with its own message
    total, frames = struct.unpack("<QQ", head)
    if not (0 < frames <= total <= _MAX_GREETING):
        raise SchedulerUnreachable(
            f"{address!r} answered, but not with Dask's protocol (first bytes {head[:16]!r}): "
            "is dask.address the scheduler's port?"
        )


def _probe_ws(address: str, rest: str, timeout: float) -> None:
    """Check, within ``timeout``, that ``ws://`` ``address`` accepts a websocket upgrade.

    An HTTP server that is not a scheduler answers with its own status: without
    this check ``Client`` raises tornado's ``WebSocketError`` and leaves a client
    whose cleanup at exit waits 6 s and prints a traceback.
    """
    host, _, port = rest.split("/", 1)[0].rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return
    request = (
        f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
        "Connection: Upgrade\r\nSec-WebSocket-Key: bGF6eWFyciBwcm9iZQ==\r\n"
        "Sec-WebSocket-Version: 13\r\n\r\n"
    )
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            sock.sendall(request.encode())
            status = sock.recv(64).split(b"\r\n", 1)[0]
    except TimeoutError as e:
        raise SchedulerUnreachable(
            f"{address!r} did not answer a websocket upgrade within {timeout:g} s "
            "(config dask.address, dask.timeout)"
        ) from e
    except OSError:
        return  # refused or unroutable: Client reports it, with its own message
    if status.split(b" ")[1:2] != [b"101"]:
        raise SchedulerUnreachable(
            f"{address!r} answered {status.decode(errors='replace')!r} to a websocket "
            "upgrade: not a Dask scheduler's websocket port (config dask.address)"
        )


def _connect(address: str, timeout: float) -> Client:
    _probe(address, timeout)
    try:
        return _OwnClient(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, WebSocketError) as e:
        raise SchedulerUnreachable(
            f"could not reach the Dask scheduler at {address!r} within {timeout:g} s "
            f"(config dask.address, dask.timeout): {e}"
        ) from e
