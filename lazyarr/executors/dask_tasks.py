"""The function Dask tasks run on the workers for the ``dask`` executor.

Every task of the lowered plan (:mod:`lazyarr.optimize.lower`) becomes one
Dask task calling :func:`task_fn` with the stage's :class:`StagePayload`,
the typed :class:`~lazyarr.optimize.tasks.Task` and the values it reads;
``blockwork.run_task`` computes it, as every executor does.

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
"""

from __future__ import annotations

import copyreg
import pickle
import time
from collections.abc import Sequence
from typing import Any

import cloudpickle
import numpy as np
from dask.sizeof import sizeof
from dask.utils import disable_gc

from lazyarr import config
from lazyarr._lru import LRU
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import BlockStore, FromBlocks
from lazyarr.graph.ops.userfunc import UserFunc
from lazyarr.kernels.sets import ReferenceKernels
from lazyarr.optimize.plan import Stage
from lazyarr.optimize.tasks import Task, TaskKind

from . import dask_stats
from .blockwork import JointCode, StageCode, run_task

__all__ = [
    "BatchValues",
    "JointPayload",
    "StagePayload",
    "TaskColumns",
    "batch_fn",
    "detached",
    "identity",
    "joint_payload",
    "pick_value",
    "stand_ins_of",
    "task_fn",
]

ErrState = tuple[tuple[str, str], ...]
"""The client's ``np.geterr()`` items: floating-point errors behave as they would there."""

# Exprs are immutable (no setattr), so pickle rebuilds them from their fields. Registered
# here because workers import this module and pickle payloads too (peer to peer).
copyreg.pickle(Expr, lambda e: (Expr, (e.op, e.inputs, e.shape, e.dtype, e.chunks)))


def detached(stage: Stage, in_place: Sequence[bool] = ()) -> Stage:
    """``stage`` with each input expression replaced by a data-free stand-in.

    Input expressions carry their whole upstream graph (user arrays,
    futures); a block task only needs their shape, dtype and chunks.
    Inputs the tasks make themselves (``in_place``, per position: generated
    sources, which read nothing) stay as they are.
    """
    new: dict[str, Expr] = {}
    stand_ins = stand_ins_of(stage.input_exprs, in_place, new)
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


def stand_ins_of(
    exprs: Sequence[Expr], in_place: Sequence[bool], new: dict[str, Expr] | None = None
) -> list[Expr]:
    """Per expression, a data-free stand-in (its shape, dtype and chunks); those made in
    place (``in_place``, per position: generated sources) stay as they are. ``new``
    collects them by key."""
    new = {} if new is None else new
    out = []
    for pos, e in enumerate(exprs):
        if pos < len(in_place) and in_place[pos]:
            assert not e.inputs, f"{e!r} is read in place but reads other expressions"
            new[e.key] = e
        elif e.key not in new:
            store = BlockStore({}, "dask-input", e.key)
            new[e.key] = Expr(FromBlocks(store=store), (), e.shape, e.dtype, e.chunks)
        out.append(new[e.key])
    return out


_KERNEL_SETS: dict[tuple, Any] = {}


def _worker_kernels(settings: tuple) -> Any:
    """The kernel set for ``settings`` (the client's ``numba.*`` config) in this process."""
    kernels = _KERNEL_SETS.get(settings)
    if kernels is None:
        try:
            from lazyarr.executors.numba import compile_threshold, options_from_config
            from lazyarr.kernels.numba_set import NumbaKernels
        except ImportError:  # numba (or the numba executor) is not installed here
            kernels = ReferenceKernels()
        else:
            with config.set({"numba": dict(settings)}):
                kernels = NumbaKernels(options_from_config(), compile_threshold())
        _KERNEL_SETS[settings] = kernels
    return kernels


def _pickled(value: Any, stages: Sequence[Stage]) -> bytes:
    """``value`` pickled; by value with cloudpickle where a stage holds a user function
    (workers cannot import one defined in a script's __main__, a lambda or a closure; dask
    sends them so too)."""
    user = any(isinstance(getattr(m.op, "fn", None), UserFunc) for s in stages for m in s.members)
    return (cloudpickle if user else pickle).dumps(value, protocol=5)


INLINE_BYTES = 32 * 1024
"""Payloads up to this size (pickled) travel inside each task; bigger ones are a task."""

_PAYLOADS: LRU[StagePayload] = LRU(256)
"""Payloads a worker process keeps by token (the most recently used ones)."""


def _payload_from(token: str, blob: bytes) -> StagePayload:
    """The payload ``token`` names: this process's copy, or ``blob`` unpickled (and kept)."""
    found = _PAYLOADS.get(token)
    if found is not None:
        return found
    stage, settings, in_place = pickle.loads(blob)
    payload = StagePayload(stage, settings, token, in_place)
    payload._blob = blob  # passed on as it came (the scheduler sends it to workers)
    return _PAYLOADS.put(token, payload)


class _Inline:
    """What both payload kinds share: whether one is small enough to ride inside tasks."""

    __slots__ = ()
    token: str | None
    blob: bytes

    @property
    def inline(self) -> bool:
        """Small enough to travel inside every task that uses it (pickled once, by token)."""
        return self.token is not None and len(self.blob) <= INLINE_BYTES


class StagePayload(_Inline):
    """What the tasks of one stage share; its kernels are looked up once per worker.

    ``settings``: the client's ``numba.*`` config, so workers compile as the
    client asks; ``()`` uses the NumPy reference kernels. ``token``: a name
    unique to this payload (the run's and the stage's); with one, the
    payload pickles once (:attr:`blob`) and unpickles once per process.
    ``in_place``: per input position, whether the stage's tasks make that
    input's regions themselves (a generated source the lowering gave no tasks).
    """

    __slots__ = ("_blob", "_fns", "in_place", "settings", "stage", "token")

    def __init__(
        self,
        stage: Stage,
        settings: tuple = (),
        token: str | None = None,
        in_place: tuple[bool, ...] = (),
    ) -> None:
        self.stage = stage
        self.settings = settings
        self.token = token
        self.in_place = in_place
        self._fns: StageCode | None = None
        self._blob: bytes | None = None

    @property
    def blob(self) -> bytes:
        """The stage and settings, pickled (once)."""
        if self._blob is None:
            self._blob = _pickled((self.stage, self.settings, self.in_place), [self.stage])
        return self._blob

    def __reduce__(self) -> tuple:
        if self.token is None:
            return (StagePayload, (self.stage, self.settings, None, self.in_place))
        return (_payload_from, (self.token, self.blob))

    def code(self) -> StageCode:
        """The stage's kernels in this process (looked up once per payload)."""
        if self._fns is None:
            kernels = _worker_kernels(self.settings) if self.settings else ReferenceKernels()
            self._fns = StageCode(self.stage, kernels, self.in_place or None)
        return self._fns

    def run(self, task: Task, values: Sequence[Any]) -> Any:
        """The value of ``task`` from the values it reads."""
        return run_task(task, self.code(), values)


class JointPayload(_Inline):
    """What the ``JOINT`` tasks of one sibling set share (:class:`StagePayload`'s twin).

    ``members``: the siblings, detached; ``space``: per input position of a joint
    task, the input's name, expression (detached unless made in place) and whether it
    is made in place; ``in_place``: per member, its own inputs' flags. Pickled once on
    the client and unpickled once per worker process, by ``token``.
    """

    __slots__ = ("_blob", "_code", "in_place", "members", "settings", "space", "token")

    def __init__(
        self,
        members: tuple[Stage, ...],
        space: tuple[tuple[str, Expr, bool], ...],
        in_place: tuple[tuple[bool, ...], ...],
        settings: tuple = (),
        token: str | None = None,
    ) -> None:
        self.members, self.space, self.in_place = members, space, in_place
        self.settings, self.token = settings, token
        self._code: JointCode | None = None
        self._blob: bytes | None = None

    @property
    def stage(self) -> Stage:
        """The lead sibling (its name labels the statistics)."""
        return self.members[0]

    @property
    def blob(self) -> bytes:
        if self._blob is None:
            value = (self.members, self.space, self.in_place, self.settings)
            self._blob = _pickled(value, self.members)
        return self._blob

    def __reduce__(self) -> tuple:
        if self.token is None:
            return (JointPayload, (self.members, self.space, self.in_place, self.settings))
        return (_joint_payload_from, (self.token, self.blob))

    def code(self) -> JointCode:
        if self._code is None:
            kernels = _worker_kernels(self.settings) if self.settings else ReferenceKernels()
            self._code = JointCode(self.members, self.space, self.in_place, kernels)
        return self._code

    def run(self, task: Task, values: Sequence[Any]) -> tuple:
        """Every member's value of joint ``task``, in member order."""
        return self.code().run(task, values)


def _joint_payload_from(token: str, blob: bytes) -> JointPayload:
    """The joint payload ``token`` names: this process's copy, or ``blob`` unpickled."""
    found = _PAYLOADS.get(token)
    if found is not None:
        return found
    payload = JointPayload(*pickle.loads(blob), token=token)
    payload._blob = blob
    return _PAYLOADS.put(token, payload)


def joint_payload(
    members: Sequence[Stage],
    space: Sequence[tuple[str, Expr, bool]],
    in_place: Sequence[Sequence[bool]],
    settings: tuple,
    token: str,
) -> JointPayload:
    """The payload of a sibling set: members and inputs detached (shape, dtype, chunks),
    inputs made in place kept whole."""
    stand_ins = stand_ins_of([e for _, e, _ in space], [h for _, _, h in space])
    return JointPayload(
        tuple(detached(m, tuple(h)) for m, h in zip(members, in_place, strict=True)),
        tuple((n, e, h) for (n, _, h), e in zip(space, stand_ins, strict=True)),
        tuple(tuple(h) for h in in_place),
        settings,
        token,
    )


class TaskColumns(tuple):
    """A batch's tasks (one stage's, one kind's), pickled as columns of numbers.

    Pickling 10^5 :class:`~lazyarr.optimize.tasks.Task` objects (each region a
    tuple of slices) cost the client, the scheduler (which unpickles and pickles
    the graph again) and the workers more than running them; a batch's tasks
    travel as integer arrays instead and come back as plain Task tuples. Only
    what running a task reads is kept (kind, stage, block, part, region,
    inputs, parts' regions).
    """

    __slots__ = ()

    def __reduce__(self) -> tuple:
        if not self:
            return (tuple, ())
        first = self[0]
        n, ndim = len(self), len(first.region)
        try:  # one conversion per column (NumPy refuses ragged rows and bounds of None)
            bounds = [[(r.start, r.stop) for r in t.region] for t in self]
            regions = np.array(bounds, dtype=np.int64).reshape(n, ndim, 2)
            index = np.array([t.index for t in self], dtype=np.int64).reshape(n, len(first.index))
        except (TypeError, ValueError):  # ragged, or a slice without bounds: the tasks as they are
            return (tuple, (tuple(self),))
        parts = np.fromiter((t.part for t in self), dtype=np.int64, count=len(self))
        inputs = [t.inputs for t in self]
        products = [t.regions for t in self]
        return (
            _tasks_from_columns,
            (int(first.kind), first.stage, index, parts, regions, inputs, products),
        )


def _tasks_from_columns(
    kind: int,
    stage: int,
    index: np.ndarray,
    parts: np.ndarray,
    regions: np.ndarray,
    inputs: list,
    products: list,
) -> tuple[Task, ...]:
    """The tasks :meth:`TaskColumns.__reduce__` wrote as columns."""
    k = TaskKind(kind)
    return tuple(
        Task(
            k,
            stage,
            tuple(i),
            tuple(slice(a, b) for a, b in r),
            (),
            ins,
            part=part,
            regions=prod,
        )
        for i, part, r, ins, prod in zip(
            index.tolist(), parts.tolist(), regions.tolist(), inputs, products, strict=True
        )
    )


class BatchValues(tuple):
    """The values of a batch's tasks, in its order (:func:`batch_fn`); its size, for Dask's
    memory and transfer accounting, is theirs."""

    __slots__ = ()


@sizeof.register(BatchValues)
def _sizeof_batch(values: BatchValues) -> int:
    return sum(sizeof(v) for v in values)


def pick_value(values: Any, where: Any) -> Any:
    """A task's value out of a batch's values (or a block out of a slab, a sibling's value
    out of a joint task's): one block's key. A tuple ``where`` is a path: one pick per
    level (a joint task's value in a batch: its position, then the sibling's slot)."""
    if type(where) is tuple:
        for w in where:
            values = values[w]
        return values
    return values[where]


Reads = tuple[tuple[int, Any], ...]
"""Per dependency of a task in a batch: which of the batch's values holds it, and where in
that value (a batch's position, a slab's row), or None for the whole value."""


def pack_batch(tasks: Sequence[Task], reads: tuple[Reads, ...]) -> bytes:
    """A batch's tasks (as :class:`TaskColumns`) and their reads, pickled once, here.

    The scheduler passes bytes on as they are: as objects, the tasks would be unpickled
    and pickled again there (in the client process's event loop, for a LocalCluster),
    one Python object per block each way; only the worker that runs the batch unpacks it.
    """
    return pickle.dumps((TaskColumns(tasks), reads), protocol=5)


def batch_fn(
    payload: StagePayload | JointPayload,
    packed: bytes,
    errstate: ErrState,
    *values: Any,
) -> BatchValues:
    """The values of the batch's tasks (one stage's, one kind's), one after another in this
    call; ``packed``: the tasks and their reads (:func:`pack_batch`).

    ``reads[k]`` says where task ``k``'s dependencies are among ``values``.
    Each task is timed for the statistics as if it were its own Dask task (counted,
    summed and spanned here: :func:`.dask_stats.record_tasks`).

    Python's cycle collector is off for the call: a batch makes a few small objects
    per task (its unpacked tasks, their values and timings), none in cycles, and
    the collections their count would trigger scan the worker's whole heap (at
    10^5 tiny blocks, 0.15-0.45 s per worker and compute). Its bytes are bounded
    by the batch's budget (:mod:`.dask_batches`).
    """
    with disable_gc():
        tasks, reads = pickle.loads(packed)
        run = payload.run
        out = []
        now = time.time
        first = start = stop = now()
        busy = 0.0
        with np.errstate(**dict(errstate)):
            for task, where in zip(tasks, reads, strict=True):
                got = [values[i] if p is None else pick_value(values[i], p) for i, p in where]
                start = now()
                out.append(run(task, got))
                stop = now()
                busy += stop - start
                if len(out) == 1:
                    first = start
        if out:
            dask_stats.record_tasks(payload.stage.name, len(out), busy, first, stop)
    return BatchValues(out)


def identity(x: Any) -> Any:
    """A task that returns its argument (a payload with lineage; a move to another worker)."""
    return x


def done_token(*blocks: Any) -> None:
    """A task that only says ``blocks`` exist (an order dependency; holds no data)."""
    return None


def after_token(token: None, *args: Any) -> Any:
    """:func:`task_fn` of ``args``, run only once ``token`` exists (see :func:`done_token`)."""
    return task_fn(*args)


def task_fn(
    payload: StagePayload | JointPayload,
    task: Task,
    errstate: ErrState,
    picks: tuple[int | tuple | None, ...] | None,
    *values: Any,
) -> Any:
    """The value of one lowered task of the payload's stage, from the values it reads.

    ``picks``: per value, where the value read sits inside it (a block's row when it is a
    slab of scattered blocks, a position when it is a batch's values), else None; None
    when every value is read whole.
    """
    if picks is not None:
        values = tuple(v if p is None else pick_value(v, p) for v, p in zip(values, picks))
    start = time.time()
    with np.errstate(**dict(errstate)):
        out = payload.run(task, values)
    dask_stats.record_task(payload.stage.name, start, time.time())
    return out
