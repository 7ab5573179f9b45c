"""Blocks of a dask compute brought to this process: in batches while the rest runs, then
the remainder in one call.

Without batches, every worker held its finished output blocks until the whole
graph was done (the sample sort's workers held their output beside the pieces
still to be merged); a batch gathers finished blocks once about
:data:`FETCH_BATCH_BYTES` of them are waiting, and the worker then frees them.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from dask.task_spec import TaskRef
from distributed import Client, Future

from lazyarr.optimize.tasks import TaskGraph

from .dask_tasks import pick_value

__all__ = ["FETCH_BATCH_BYTES", "BatchItem", "Blocks", "FetchBatch", "Index", "fetch_all"]

Index = tuple[int, ...]


class BatchItem(NamedTuple):
    """A block kept inside a batch task's values: the batch (a reference or future) and the
    block's position there."""

    batch: Any
    position: Any
    """An index, or a path of them (a joint task's value in a batch: position, then slot)."""

    @property
    def key(self) -> str:
        return self.batch.key


Blocks = dict[Index, TaskRef]
"""A stage's blocks: futures (scattered, persisted, kept) or tasks of the run's graph."""

FETCH_BATCH_BYTES = 4 << 20
"""A compute brings finished output blocks to this process in batches of about this many
bytes while the rest still runs, so workers do not hold the finished result until the end
(the sample sort's workers held their whole output beside the pieces still to be merged)."""


class FetchBatch:
    """Finished kept blocks, gathered here a batch at a time; each value replaces its
    future in ``kept`` (the worker then frees the block)."""

    def __init__(
        self,
        client: Client,
        lowered: TaskGraph,
        kept: dict[str, Blocks],
        on_idle: Callable[[float], None] | None = None,
    ) -> None:
        self.client, self.kept, self.on_idle = client, kept, on_idle
        # per key: the blocks it holds (a batch's values: several, each at its position)
        self.where: dict[Any, list[tuple[str, Index, int | None]]] = {}
        self.nbytes: dict[Any, int] = {}
        stages = {s.name: s for s in lowered.stages}
        for o, blocks in kept.items():
            expr = stages[o].expr
            for idx, ref in blocks.items():
                future, position = _future_of(ref)
                if future is not None:
                    self.where.setdefault(future.key, []).append((o, idx, position))
                    size = math.prod(c[i] for c, i in zip(expr.chunks, idx, strict=True))
                    got = self.nbytes.get(future.key, 0)
                    self.nbytes[future.key] = got + size * expr.dtype.itemsize
        self.pending: list[Future] = []
        self.pending_bytes = 0

    def add(self, fut: Future) -> None:
        if fut.key not in self.where:
            return
        self.pending.append(fut)
        self.pending_bytes += self.nbytes[fut.key]
        if self.pending_bytes >= FETCH_BATCH_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        values = gather_watched(self.client, self.pending, self.on_idle)
        for fut, value in zip(self.pending, values, strict=True):
            for o, idx, position in self.where.pop(fut.key):
                self.kept[o][idx] = value if position is None else pick_value(value, position)
        self.pending, self.pending_bytes = [], 0


def _future_of(ref: Any) -> tuple[Future | None, int | None]:
    """The future a kept block waits on, and its position in the future's value (or None)."""
    if type(ref) is BatchItem:
        return (ref.batch, ref.position) if isinstance(ref.batch, Future) else (None, None)
    return (ref, None) if isinstance(ref, Future) else (None, None)


_GATHER_PATIENCE_S = 5.0
"""Seconds a watched gather first waits before it asks whether the cluster still runs."""

_NOT_YET = frozenset({"pending", "lost"})
"""States of a future whose value is not on a worker now (being computed, or again)."""


def gather_watched(
    client: Client, futures: list[Future], on_idle: Callable[[float], None] | None
) -> list[Any]:
    """``client.gather(futures)``, calling ``on_idle(seconds)`` each second they are not all
    done (it may raise): a value lost with its worker is computed again, or, where it can
    run nowhere else, the caller says so instead of a gather that waits for ever."""
    if on_idle is None:
        return client.gather(futures)
    since = checked = time.monotonic()
    patience = _GATHER_PATIENCE_S
    while True:
        while any(f.status in _NOT_YET for f in futures):
            time.sleep(0.02)
            now = time.monotonic()
            if now - checked >= 1.0:
                checked = now
                on_idle(now - since)
        # a worker may die between "finished" and the gather: its values then never come
        # (placement hard: nothing computes them again), so the gather waits a while, asks
        # ``on_idle`` and tries again, each time twice as patient (a large gather is slow)
        try:
            return client.sync(client._gather, futures, callback_timeout=patience)
        except TimeoutError:
            checked = time.monotonic()
            on_idle(checked - since)
            patience *= 2


def fetch_all(
    client: Client,
    blocks: dict[str, Blocks],
    on_idle: Callable[[float], None] | None = None,
) -> dict[str, dict[Index, np.ndarray]]:
    """The values of every block: those still futures (not fetched by a batch) gathered in
    one call (a batch task's values once for all its blocks)."""
    got: dict[str, dict[Index, np.ndarray]] = {o: dict(bl) for o, bl in blocks.items()}
    order: dict[Any, Future] = {}  # each future once (a batch holds several blocks)
    wait: list[tuple[str, Index, Any, int | None]] = []
    for o, bl in blocks.items():
        for i, v in bl.items():
            future, position = _future_of(v)
            if future is not None:
                order.setdefault(future.key, future)
                wait.append((o, i, future.key, position))
    values = dict(zip(order, gather_watched(client, list(order.values()), on_idle), strict=True))
    for o, i, key, position in wait:
        got[o][i] = values[key] if position is None else pick_value(values[key], position)
    return got
