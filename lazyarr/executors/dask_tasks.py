"""The functions Dask tasks run on the workers for the ``dask`` executor.

A stage travels to the workers as a :class:`StagePayload` whose input
expressions are detached (:func:`detached`: shape, dtype and chunks only,
no upstream user data or futures). A small payload (most: a few kB) rides
inside each task's arguments, pickled once on the client; each worker
process unpickles it once and keeps it (by a token unique to the run and
stage), so its kernels are looked up once per worker process: generated
Numba kernels when the numba executor imports, NumPy reference kernels
otherwise. A big one (constants of many kB inside its ops) is a task of
its own that workers fetch once, like data (the executor decides:
:attr:`StagePayload.inline`).

Task functions: :func:`block_task` (one whole block, ``blockwork``), and for
"tree" stages of the placement pass :func:`part_task` (a reduction partial
or a partial product), :func:`combine_task` (two parts into one) and
:func:`finalize_task` (a reduction's state into its block).
"""

from __future__ import annotations

import copyreg
import pickle
import threading
import time
from collections import OrderedDict
from typing import Any

import numpy as np

from lazyarr import config
from lazyarr.graph.chunks import block_slices
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import BlockStore, FromBlocks
from lazyarr.kernels.blocks import assemble
from lazyarr.kernels.fused import root_operands
from lazyarr.kernels.reference import kernel_for
from lazyarr.optimize.plan import Stage

from . import dask_stats
from .blockwork import GetRegion, ReferenceKernels, compute_block, stage_functions

__all__ = [
    "StagePayload",
    "block_task",
    "combine_task",
    "detached",
    "finalize_task",
    "identity",
    "part_task",
]

Index = tuple[int, ...]
Layout = tuple[tuple[int, Index], ...]
"""(input position, block index) of each block argument of a task."""
ErrState = tuple[tuple[str, str], ...]
"""The client's ``np.geterr()`` items: floating-point errors behave as they would there."""

# Exprs are immutable (no setattr), so pickle rebuilds them from their fields. Registered
# here because workers import this module and pickle payloads too (peer to peer).
copyreg.pickle(Expr, lambda e: (Expr, (e.op, e.inputs, e.shape, e.dtype, e.chunks)))


def detached(stage: Stage) -> Stage:
    """``stage`` with each input expression replaced by a data-free stand-in.

    Input expressions carry their whole upstream graph (user arrays,
    futures); a block task only needs their shape, dtype and chunks.
    """
    new: dict[str, Expr] = {}
    stand_ins = []
    for e in stage.input_exprs:
        if e.key not in new:
            store = BlockStore({}, "dask-input", e.key)
            new[e.key] = Expr(FromBlocks(store=store), (), e.shape, e.dtype, e.chunks)
        stand_ins.append(new[e.key])
    members = []
    for m in stage.members:
        try:
            inputs = tuple(new[i.key] for i in m.inputs)
        except KeyError:
            raise ValueError(
                f"stage {stage.name!r}: member {m!r} reads an expression that is neither "
                "a member nor an input of the stage"
            ) from None
        new[m.key] = Expr(m.op, inputs, m.shape, m.dtype, m.chunks)
        members.append(new[m.key])
    return Stage(stage.name, members[-1], stage.inputs, tuple(members), tuple(stand_ins))


_KERNEL_SETS: dict[tuple, Any] = {}


def _worker_kernels(settings: tuple) -> Any:
    """The kernel set for ``settings`` (the client's ``numba.*`` config) in this process."""
    kernels = _KERNEL_SETS.get(settings)
    if kernels is None:
        try:
            from lazyarr.executors.numba import (
                NumbaKernels,
                compile_threshold,
                options_from_config,
            )
        except ImportError:  # numba (or the numba executor) is not installed here
            kernels = ReferenceKernels()
        else:
            with config.set({"numba": dict(settings)}):
                kernels = NumbaKernels(options_from_config(), compile_threshold())
        _KERNEL_SETS[settings] = kernels
    return kernels


INLINE_BYTES = 32 * 1024
"""Payloads up to this size (pickled) travel inside each task; bigger ones are a task."""

_PAYLOADS: OrderedDict[str, StagePayload] = OrderedDict()
_PAYLOADS_LOCK = threading.Lock()
_PAYLOADS_SIZE = 256
"""Payloads a worker process keeps by token (the most recently used ones)."""


def _payload_from(token: str, blob: bytes) -> StagePayload:
    """The payload ``token`` names: this process's copy, or ``blob`` unpickled (and kept)."""
    with _PAYLOADS_LOCK:
        found = _PAYLOADS.get(token)
        if found is not None:
            _PAYLOADS.move_to_end(token)
            return found
    stage, settings = pickle.loads(blob)
    payload = StagePayload(stage, settings, token)
    payload._blob = blob  # passed on as it came (the scheduler sends it to workers)
    with _PAYLOADS_LOCK:
        payload = _PAYLOADS.setdefault(token, payload)
        while len(_PAYLOADS) > _PAYLOADS_SIZE:
            _PAYLOADS.popitem(last=False)
    return payload


class StagePayload:
    """What the tasks of one stage share; its kernels are looked up once per worker.

    ``settings``: the client's ``numba.*`` config, so workers compile as the
    client asks; ``()`` uses the NumPy reference kernels. ``token``: a name
    unique to this payload (the run's and the stage's); with one, the
    payload pickles once (:attr:`blob`) and unpickles once per process.
    """

    __slots__ = ("_blob", "_fns", "settings", "stage", "token")

    def __init__(self, stage: Stage, settings: tuple = (), token: str | None = None) -> None:
        self.stage = stage
        self.settings = settings
        self.token = token
        self._fns: tuple[Any, ...] | None = None
        self._blob: bytes | None = None

    @property
    def blob(self) -> bytes:
        """The stage and settings, pickled (once)."""
        if self._blob is None:
            self._blob = pickle.dumps((self.stage, self.settings), protocol=5)
        return self._blob

    @property
    def inline(self) -> bool:
        """Small enough to travel inside every task that uses it."""
        return self.token is not None and len(self.blob) <= INLINE_BYTES

    def __reduce__(self) -> tuple:
        if self.token is None:
            return (StagePayload, (self.stage, self.settings))
        return (_payload_from, (self.token, self.blob))

    def functions(self) -> tuple[Any, ...]:
        if self._fns is None:
            kernels = _worker_kernels(self.settings) if self.settings else ReferenceKernels()
            self._fns = stage_functions(self.stage, kernels)
        return self._fns


def identity(x: Any) -> Any:
    """A task that returns its argument (a payload with lineage; a move to another worker)."""
    return x


def _getter(stage: Stage, layout: Layout, blocks: tuple[np.ndarray, ...]) -> GetRegion:
    parts: list[dict[Index, np.ndarray]] = [{} for _ in stage.input_exprs]
    for (pos, bidx), block in zip(layout, blocks):
        parts[pos][bidx] = block
    chunks = [e.chunks for e in stage.input_exprs]

    def get_region(pos: int, region: Region) -> np.ndarray:
        return assemble(chunks[pos], region, parts[pos].__getitem__)

    return get_region


def block_task(
    payload: StagePayload, index: Index, errstate: ErrState, layout: Layout, *blocks: np.ndarray
) -> np.ndarray:
    """Block ``index`` of the payload's stage, from the input blocks named by ``layout``."""
    start = time.time()
    stage = payload.stage
    fns = payload.functions()
    get_region = _getter(stage, layout, blocks)
    with np.errstate(**dict(errstate)):
        out = compute_block(stage, index, get_region, fns)
    dask_stats.record_task(stage.name, start, time.time())
    return out


def part_task(
    payload: StagePayload, part: tuple, errstate: ErrState, layout: Layout, *blocks: np.ndarray
) -> Any:
    """One part of a tree stage.

    ``part`` is ``("reduce", body block index)`` for a reduction partial, or
    ``("product", block index, regions)`` for a partial product of a
    contraction (the op's kernel over the inputs' regions of one
    contracted range).
    """
    start = time.time()
    stage = payload.stage
    expr = stage.expr
    get_region = _getter(stage, layout, blocks)
    with np.errstate(**dict(errstate)):
        if part[0] == "reduce":
            partial = payload.functions()[0]
            out = partial(block_slices(expr.inputs[0].chunks, part[1]), get_region)
        else:
            _, index, regions = part
            if stage.fused:  # operands folded into the contraction are computed here
                arrays = root_operands(stage.members, stage.input_exprs, regions, get_region)
            else:
                arrays = [get_region(i, r) for i, r in enumerate(regions)]
            out = kernel_for(expr.op)(expr.op, expr, block_slices(expr.chunks, index), *arrays)
    dask_stats.record_task(stage.name, start, time.time())
    return out


def combine_task(payload: StagePayload, errstate: ErrState, a: Any, b: Any) -> Any:
    """Two parts of a tree stage into one: the reduction's combine, or a sum of products."""
    start = time.time()
    stage = payload.stage
    with np.errstate(**dict(errstate)):
        if stage.kind == "reduce":
            out = payload.functions()[1].combine(stage.expr.op, a, b)
        else:
            out = np.add(a, b)
    dask_stats.record_task(stage.name, start, time.time())
    return out


def finalize_task(payload: StagePayload, errstate: ErrState, state: Any) -> np.ndarray:
    """A reduction's combined state as its output block."""
    start = time.time()
    stage = payload.stage
    with np.errstate(**dict(errstate)):
        out = payload.functions()[1].finalize(stage.expr.op, stage.expr, state)
    dask_stats.record_task(stage.name, start, time.time())
    return out
