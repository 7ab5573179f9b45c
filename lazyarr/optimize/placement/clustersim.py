"""A simulated cluster: per-worker memory and network load, and where blocks are.

This is the state the placement search works on (the cluster state of NumS's
LSHS scheduler: Elibol et al., "NumS: Scalable Array Programming for the
Cloud", arXiv:2206.14276), in bytes rather than element counts.

* ``load`` is a float64 array of shape ``(3, n_workers)``: row 0 memory,
  row 1 network in, row 2 network out, all in bytes. Network bytes between
  two workers on the same host are multiplied by ``local_coeff`` (cheaper).
  Memory is cumulative: nothing is freed (an upper bound, as in NumS).
* ``loc[block]`` lists the workers holding a block (the first is where it
  was made; copies add replicas, which stop later traffic for that block).
* The objective is ``sum over rows of weight[row] * max over workers``:
  the most loaded worker per resource, not the total.
* ``cross`` counts the raw bytes copied between hosts. When workers are
  grouped on hosts (at least two hosts, one of them with several workers:
  ``hosts_first``), :meth:`ClusterSim.score` puts these bytes before the
  objective, compared as a tuple: the search first keeps bytes on their
  host, then balances the per-worker loads (NumS's LSHS across nodes).

Everything is deterministic: copies come from a same-host holder when there
is one, else from the first holder; no randomness, no dict-order surprises.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable, Sequence

import numpy as np

__all__ = ["CROSS", "MEMORY", "NET_IN", "NET_OUT", "ClusterSim", "SimOp", "grouped", "host_ids"]

MEMORY, NET_IN, NET_OUT = 0, 1, 2
CROSS = 3
"""The delta key ``(CROSS, 0)`` carries bytes copied between hosts (not a row of ``load``)."""

BlockKey = Hashable


def host_ids(hosts: Sequence[str], n_workers: int | None = None) -> tuple[int, ...]:
    """An integer per worker naming its host (numbered by first appearance).

    With no hosts every worker is its own host. ``combine_schedule`` takes
    these ids, so executors must number hosts the same way.
    """
    if not hosts:
        return tuple(range(n_workers or 0))
    ids: dict[str, int] = {}
    return tuple(ids.setdefault(h, len(ids)) for h in hosts)


def grouped(host_of: Sequence[int]) -> bool:
    """Whether workers share hosts in a way that makes bytes between hosts a separate cost:
    two hosts or more, and fewer hosts than workers."""
    n_hosts = len(set(host_of))
    return 1 < n_hosts < len(host_of)


@dataclasses.dataclass(frozen=True)
class SimOp:
    """One task: reads ``inputs`` (block keys), writes ``output`` of ``size`` bytes."""

    inputs: tuple[BlockKey, ...]
    output: BlockKey
    size: int


class ClusterSim:
    """Per-worker memory / network-in / network-out loads and block locations.

    ``hosts`` gives each worker's host (same index); workers on one host copy
    to each other at ``local_coeff`` times the cost. With no hosts, every
    worker counts as its own host. ``hosts_first``: :meth:`score` ranks bytes
    between hosts before the objective (default: when the hosts are
    :func:`grouped`).
    """

    def __init__(
        self,
        n_workers: int,
        hosts: Sequence[str] = (),
        local_coeff: float = 0.1,
        weights: Sequence[float] = (1.0, 1.0, 1.0),
        hosts_first: bool | None = None,
    ) -> None:
        if n_workers < 1:
            raise ValueError(f"a cluster needs at least one worker, not {n_workers}")
        if hosts and len(hosts) != n_workers:
            raise ValueError(f"{len(hosts)} hosts given for {n_workers} workers")
        if len(weights) != 3:
            raise ValueError(f"weights has {len(weights)} entries; need 3 (memory, in, out)")
        self.n_workers = int(n_workers)
        self.host_of: tuple[int, ...] = host_ids(hosts, n_workers)
        self.local_coeff = float(local_coeff)
        self.weights = tuple(float(w) for w in weights)
        self.load = np.zeros((3, self.n_workers), dtype=np.float64)
        self.loc: dict[BlockKey, list[int]] = {}
        self.size: dict[BlockKey, int] = {}
        self.bytes_in = np.zeros(self.n_workers, dtype=np.int64)
        """Raw bytes copied into each worker (no same-host discount)."""
        self.moves = 0
        """Number of block copies committed."""
        self.cross = 0.0
        """Raw bytes copied between hosts (workers on different hosts)."""
        self.hosts_first = grouped(self.host_of) if hosts_first is None else bool(hosts_first)
        self._rowmax = [0.0, 0.0, 0.0]

    # -- state --------------------------------------------------------------
    def copy(self) -> ClusterSim:
        """An independent copy (to try a whole strategy and compare)."""
        new = ClusterSim.__new__(ClusterSim)
        new.__dict__.update(self.__dict__)
        new.load = self.load.copy()
        new.loc = {k: list(v) for k, v in self.loc.items()}
        new.size = dict(self.size)
        new.bytes_in = self.bytes_in.copy()
        new._rowmax = list(self._rowmax)
        return new

    def holders(self, block: BlockKey) -> list[int]:
        """Workers holding ``block`` (first = where it was made)."""
        return self.loc[block]

    def objective(self) -> float:
        """``sum_r weight_r * max_w load[r, w]``."""
        return sum(w * m for w, m in zip(self.weights, self._rowmax))

    def score(self) -> tuple[float, float]:
        """``(bytes between hosts, objective)``, compared as a tuple; the first is 0 unless
        ``hosts_first``."""
        return (self.cross if self.hosts_first else 0.0, self.objective())

    def same_host(self, a: int, b: int) -> bool:
        return self.host_of[a] == self.host_of[b]

    # -- copies -------------------------------------------------------------
    def source_for(self, block: BlockKey, target: int) -> int:
        """The holder a copy to ``target`` comes from: a same-host one, else the first."""
        where = self.loc[block]
        for w in where:
            if self.host_of[w] == self.host_of[target]:
                return w
        return where[0]

    def _copies(
        self,
        blocks: Iterable[BlockKey],
        target: int,
        deltas: dict[tuple[int, int], float],
        record: bool,
    ) -> tuple[int, int]:
        """Add the loads of copying each of ``blocks`` (distinct) to ``target`` into ``deltas``;
        ``record``: also note the replicas (holders, bytes in, moves). Returns the raw bytes
        copied and the bytes of the blocks ``target`` holds already (they cost nothing).

        One loop for a whole op (the planner's inner loop, run per input block of every
        op it tries): each delta accumulates in the same order as block by block would.
        """
        loc, sizes, host_of = self.loc, self.size, self.host_of
        here = host_of[target]
        mem_key, in_key = (MEMORY, target), (NET_IN, target)
        mem = deltas.get(mem_key, 0.0)
        net_in = deltas.get(in_key, 0.0)
        # network-out per source worker, from the deltas so far (same additions, same order)
        net_out: list[float] | None = None
        local = self.local_coeff
        moved = held = 0
        cross = 0
        for block in blocks:
            where = loc[block]
            if target in where:
                held += sizes[block]
                continue
            size = sizes[block]
            src = where[0]
            if host_of[src] != here:  # a same-host holder if there is one (source_for)
                for w in where:
                    if host_of[w] == here:
                        src = w
                        break
            if host_of[src] == here:
                net = size * local
            else:
                net = float(size)
                cross += size
            mem += size
            net_in += net
            if net_out is None:
                net_out = [deltas.get((NET_OUT, w), 0.0) for w in range(self.n_workers)]
                sent = [False] * self.n_workers
            net_out[src] += net
            sent[src] = True
            moved += size
            if record and size:
                where.append(target)
                self.bytes_in[target] += size
                self.moves += 1
        if net_out is not None:
            for w, was_sent in enumerate(sent):
                if was_sent:
                    deltas[(NET_OUT, w)] = net_out[w]
            deltas[mem_key] = mem
            deltas[in_key] = net_in
            if cross:
                deltas[(CROSS, 0)] = deltas.get((CROSS, 0), 0.0) + cross
        return moved, held

    def _op_deltas(
        self, op: SimOp, worker: int, lookahead: int | None
    ) -> dict[tuple[int, int], float]:
        deltas: dict[tuple[int, int], float] = {}
        self._copies(dict.fromkeys(op.inputs), worker, deltas, record=False)
        deltas[(MEMORY, worker)] = deltas.get((MEMORY, worker), 0.0) + op.size
        if lookahead is not None and lookahead != worker:
            if self.same_host(worker, lookahead):
                net = op.size * self.local_coeff
            else:
                net = float(op.size)
                deltas[(CROSS, 0)] = deltas.get((CROSS, 0), 0.0) + net
            deltas[(MEMORY, lookahead)] = deltas.get((MEMORY, lookahead), 0.0) + op.size
            deltas[(NET_IN, lookahead)] = deltas.get((NET_IN, lookahead), 0.0) + net
            deltas[(NET_OUT, worker)] = deltas.get((NET_OUT, worker), 0.0) + net
        return deltas

    def _score_with(self, deltas: dict[tuple[int, int], float]) -> tuple[float, float]:
        rowmax = list(self._rowmax)
        load = self.load
        cross = self.cross
        for (r, w), d in deltas.items():
            if r == CROSS:
                cross += d
                continue
            v = float(load[r, w]) + d
            if v > rowmax[r]:
                rowmax[r] = v
        objective = sum(wt * m for wt, m in zip(self.weights, rowmax))
        return (cross if self.hosts_first else 0.0, objective)

    def _apply(self, deltas: dict[tuple[int, int], float]) -> None:
        load = self.load
        for (r, w), d in deltas.items():
            if r == CROSS:
                self.cross += d
                continue
            load[r, w] += d
            v = float(load[r, w])
            if v > self._rowmax[r]:
                self._rowmax[r] = v

    # -- public operations --------------------------------------------------
    def place(self, block: BlockKey, size: int, worker: int) -> None:
        """Put a block on ``worker`` with no traffic (a source block, an existing block)."""
        self._check_worker(worker)
        if block in self.loc:
            raise KeyError(f"block {block!r} is already placed")
        self.size[block] = int(size)
        self.loc[block] = [worker]
        self._apply({(MEMORY, worker): float(size)})

    def place_many(
        self, blocks: Sequence[BlockKey], sizes: np.ndarray, workers: np.ndarray
    ) -> None:
        """:meth:`place` for many blocks at once (a source stage): the same state, with the
        loads added per worker in one step rather than block by block."""
        workers = np.asarray(workers, dtype=np.int64).ravel()
        sizes = np.asarray(sizes, dtype=np.int64).ravel()
        if len(workers) and not 0 <= int(workers.min()) <= int(workers.max()) < self.n_workers:
            raise IndexError(f"a worker out of range for {self.n_workers} workers")
        if len(blocks) != len(sizes) or len(blocks) != len(workers):
            raise ValueError(f"{len(blocks)} blocks, {len(sizes)} sizes, {len(workers)} workers")
        if not self.loc.keys().isdisjoint(blocks):
            raise KeyError(f"a block of {blocks[0]!r}'s stage is already placed")
        self.size.update(zip(blocks, sizes.tolist()))
        self.loc.update(zip(blocks, ([w] for w in workers.tolist())))
        self.add_memory(np.bincount(workers, weights=sizes, minlength=self.n_workers))

    def add_memory(self, per_worker: np.ndarray) -> None:
        """Add bytes held to each worker's memory load (ops that read only what their worker
        holds: no traffic, so their whole cost is this)."""
        mem = self.load[MEMORY]
        mem += np.asarray(per_worker, dtype=np.float64)
        self._rowmax[MEMORY] = max(self._rowmax[MEMORY], float(mem.max()))

    def hold(self, block: BlockKey, size: int, worker: int) -> None:
        """Note that ``worker`` holds ``block`` whose bytes :meth:`add_memory` counted already
        (so later ops that read it find it there)."""
        self._check_worker(worker)
        if block in self.loc:
            raise KeyError(f"block {block!r} is already placed")
        self.size[block] = int(size)
        self.loc[block] = [worker]

    def simulate(self, op: SimOp, worker: int, lookahead: int | None = None) -> float:
        """The objective if ``op`` ran on ``worker`` (the state is unchanged).

        ``lookahead``: also count moving the result to that worker afterwards
        (one-step look-ahead to the block's owner).
        """
        return self.simulate_score(op, worker, lookahead)[1]

    def simulate_score(
        self, op: SimOp, worker: int, lookahead: int | None = None
    ) -> tuple[float, float]:
        """The :meth:`score` if ``op`` ran on ``worker`` (as :meth:`simulate`): what the
        search ranks candidates by."""
        self._check_worker(worker)
        return self._score_with(self._op_deltas(op, worker, lookahead))

    def commit(self, op: SimOp, worker: int) -> int:
        """Run ``op`` on ``worker``: copy missing inputs there, add the output.

        Returns the raw bytes copied into ``worker``.
        """
        return self.commit_counting(op, worker)[0]

    def commit_counting(self, op: SimOp, worker: int) -> tuple[int, int]:
        """:meth:`commit`, also returning the bytes of all the op's distinct inputs (its
        working set): ``(bytes copied, input bytes)``."""
        self._check_worker(worker)
        deltas: dict[tuple[int, int], float] = {}  # loads only grow: one apply, same maxima
        moved, held = self._copies(dict.fromkeys(op.inputs), worker, deltas, record=True)
        self.size[op.output] = int(op.size)
        self.loc.setdefault(op.output, []).append(worker)
        deltas[(MEMORY, worker)] = deltas.get((MEMORY, worker), 0.0) + float(op.size)
        self._apply(deltas)
        return moved, moved + held

    def move(self, block: BlockKey, worker: int) -> int:
        """Copy ``block`` to ``worker`` (a replica); returns the raw bytes moved (0 if held)."""
        self._check_worker(worker)
        deltas: dict[tuple[int, int], float] = {}
        moved, _ = self._copies((block,), worker, deltas, record=True)
        if moved:
            self._apply(deltas)
        return moved

    def alias(self, block: BlockKey, as_block: BlockKey) -> None:
        """Let ``as_block`` name the value of ``block`` (same size and holders, no traffic)."""
        if as_block in self.loc:
            raise KeyError(f"block {as_block!r} is already placed")
        self.size[as_block] = self.size[block]
        self.loc[as_block] = list(self.loc[block])

    def _check_worker(self, worker: int) -> None:
        if not 0 <= worker < self.n_workers:
            raise IndexError(f"worker {worker} out of range for {self.n_workers} workers")
