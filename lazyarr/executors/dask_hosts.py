"""Hosts of a Dask cluster's workers: the ``dask.host-groups`` setting and bytes between hosts.

The placement search keeps bytes on their host first (``ClusterSim.hosts_first``);
it learns each worker's host from the scheduler (the worker address's host), or,
where ``dask.host-groups`` maps worker names or addresses to group names, from
that map. The map lets tests and benchmarks model several hosts on one machine
(a LocalCluster of 4 workers as 2 hosts x 2 workers) and lets a user group
workers that share a fast link (one rack, one node's GPUs).

Keys are a worker's name (``Worker(name=...)``; a LocalCluster numbers them
0, 1, ...) or its address; a key may be a glob pattern (``"tcp://10.0.1.*"``),
tried in the map's order after the exact keys. A worker that no key matches
keeps the host the scheduler reports.

Pure functions of plain data (no cluster): :func:`group_hosts` for the
executor's worker table, :class:`Relays` for the run's graph, :func:`transfers`
and :func:`bytes_between_hosts` for the bytes a run moved (from
:mod:`.dask_stats` snapshots, or any ``receiver -> sender -> bytes`` table,
such as dask.array's in a benchmark).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

__all__ = ["Relays", "bytes_between_hosts", "check_host_groups", "group_hosts", "transfers"]

_EXAMPLE = "{'0': 'hostA', '1': 'hostA', '2': 'hostB', '3': 'hostB'}"


def check_host_groups(value: Any) -> None:
    """``ValueError`` unless ``value`` maps worker names or addresses to host-group names."""
    if not isinstance(value, Mapping):
        raise ValueError(
            f"expected a mapping of worker names or addresses to host-group names, "
            f"such as {_EXAMPLE}, not a {type(value).__name__}"
        )
    for key, group in value.items():
        if isinstance(key, bool) or not isinstance(key, (str, int)) or str(key) == "":
            raise ValueError(f"worker key {key!r} is not a worker name or address")
        if not isinstance(group, str) or not group:
            raise ValueError(f"host group {group!r} of worker {key!r} is not a non-empty string")


def _is_pattern(key: str) -> bool:
    return any(c in key for c in "*?[")


def group_hosts(
    addresses: Sequence[str],
    names: Sequence[Any],
    hosts: Sequence[str],
    groups: Mapping[Any, str] | None,
) -> tuple[str, ...]:
    """Each worker's host group (same index as ``addresses``): its name's or address's entry
    in ``groups`` (exact keys first, then glob patterns in order), else ``hosts[i]``."""
    if not groups:
        return tuple(hosts)
    exact = {str(k): v for k, v in groups.items()}
    patterns = [(k, v) for k, v in exact.items() if _is_pattern(k)]
    out = []
    for addr, name, host in zip(addresses, names, hosts, strict=True):
        keys = (str(name), str(addr)) if name is not None else (str(addr),)
        found = next((exact[k] for k in keys if k in exact), None)
        if found is None:
            found = next(
                (g for p, g in patterns if any(fnmatchcase(k, p) for k in keys)), str(host)
            )
        out.append(found)
    return tuple(out)


class Relays:
    """Values that cross to another host once: the first of its readers there relays it.

    The placement search counts a copy to a worker from a same-host holder
    when there is one (``ClusterSim.source_for``): one crossing per value and
    host. Dask's workers fetch from any holder, and readers that start at once
    all fetch from the producer; so where several workers of one host read a
    value made on another host, the run adds one relay task on the first of
    them (an identity: the same object, no copy) and they all read the relay.
    ``reads``: ``(value, producer worker, reader worker)`` in submission order
    (workers by number; negative: unplaced, never relayed).
    """

    def __init__(self, host_of: Sequence[int], reads: Iterable[tuple[int, int, int]]) -> None:
        readers: dict[tuple[int, int], dict[int, None]] = {}
        for value, src, dst in reads:
            if src < 0 or dst < 0 or host_of[src] == host_of[dst]:
                continue
            readers.setdefault((value, host_of[dst]), {})[dst] = None
        self.host_of = host_of
        self._via = {k: next(iter(ws)) for k, ws in readers.items() if len(ws) > 1}

    def __len__(self) -> int:
        return len(self._via)

    def via(self, value: int, reader: int) -> int | None:
        """The worker relaying ``value`` to ``reader``'s host (None: read it directly)."""
        if reader < 0:
            return None
        return self._via.get((value, self.host_of[reader]))


def transfers(snapshots: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """``receiver -> sender -> bytes`` from :func:`.dask_stats.snapshot`'s per-worker
    counters (their ``bytes_from``)."""
    return {
        w: {src: int(n) for src, n in s.get("bytes_from", {}).items() if n}
        for w, s in snapshots.items()
    }


def bytes_between_hosts(moved: Mapping[str, Mapping[str, int]], host_of: Mapping[str, str]) -> int:
    """Bytes of ``moved`` (``receiver -> sender -> bytes``) whose two workers are on
    different hosts; a worker missing from ``host_of`` is a host of its own."""
    total = 0
    for receiver, by_sender in moved.items():
        here = host_of.get(receiver, receiver)
        for sender, n in by_sender.items():
            if host_of.get(sender, sender) != here:
                total += int(n)
    return total
