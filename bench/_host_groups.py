"""Host groups for ``bench/distributed_placement.py --host-groups N`` (issue 27, item 3).

The benchmark's LocalCluster of 4 workers is modelled as ``N`` hosts: worker
names ``0..3`` go to groups ``hostA``, ``hostB``, ... in consecutive runs
(2 groups: ``0 1 -> hostA``, ``2 3 -> hostB``). lazyarr is told through
``dask.host-groups``; ``dask.array`` is not (it has no such notion), and its
bytes are counted with the same mapping: the probe's ``bytes_from`` (bytes a
worker fetched from each peer, ``_dask_probe.py``) whose sender is in another
group. The same count serves lazyarr, so both systems are measured alike.
"""

from __future__ import annotations

import string
from typing import Any

from distributed import Client

from lazyarr.executors.dask_hosts import bytes_between_hosts, group_hosts

__all__ = ["GOALS", "between", "groups_for", "host_of"]

GOALS = [
    # (workload, metric label, row key, goal): dask / lazyarr at least ``goal``
    ("matmul", "bytes between host groups: dask / lazyarr", "between_hosts_MiB", 3.0),
    ("logreg", "bytes between host groups: dask / lazyarr", "between_hosts_MiB", 3.0),
    ("matmul", "wall: dask / lazyarr (no loss)", "wall_s", 1.0),
    ("logreg", "wall: dask / lazyarr (no loss)", "wall_s", 1.0),
]


def groups_for(n_workers: int, n_groups: int) -> dict[str, str]:
    """``dask.host-groups`` for a LocalCluster: names ``0..n-1`` in ``n_groups`` consecutive
    runs of equal size."""
    per = -(-n_workers // n_groups)
    return {str(i): f"host{string.ascii_uppercase[i // per]}" for i in range(n_workers)}


def host_of(client: Client, groups: dict[str, str]) -> dict[str, str]:
    """Each worker address's group (the executor's own rule: ``group_hosts``)."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    addrs = sorted(info)
    names = [info[a].get("name") for a in addrs]
    return dict(zip(addrs, group_hosts(addrs, names, addrs, groups)))


def between(snaps: dict[str, dict[str, Any]], hosts: dict[str, str]) -> int:
    """Bytes the probe saw fetched from a peer in another group (payloads apart)."""
    moved = {w: dict(s["bytes_from"]) for w, s in snaps.items()}
    return bytes_between_hosts(moved, hosts)
