"""Running one lowered task: the per-kind computation every executor shares.

An executor hands :func:`run_task` a task of a
:class:`~lazyarr.optimize.tasks.TaskGraph`, the values of its dependencies
(in ``task.deps`` order, joint slots already picked) and the stage's
:class:`StageCode` (its kernels, looked up once per stage and process). The
executors differ only in where tasks run and which kernel set they use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import FromArray, FromBlocks
from lazyarr.kernels.blocks import assemble, tree_combine
from lazyarr.kernels.sets import GetRegion, KernelSet
from lazyarr.optimize.plan import Stage
from lazyarr.optimize.tasks import (
    BLOCK,
    COMBINE,
    FINALIZE,
    PARTIAL,
    PRODUCT,
    SOURCE,
    Task,
    TaskGraph,
    TaskKind,
)

__all__ = [
    "JointCode",
    "StageCode",
    "direct_readers",
    "gather",
    "gather_owned",
    "getter",
    "joint_code",
    "run_task",
]


Blocks = dict[tuple[int, ...], np.ndarray]


def gather(numblocks: tuple[int, ...], blocks: Blocks) -> np.ndarray:
    """One NumPy array from all the blocks of an array with ``numblocks`` blocks per axis."""
    if len(blocks) == 1:
        (only,) = blocks.values()
        return only
    pieces = np.empty(numblocks, dtype=object)
    for idx, b in blocks.items():
        pieces[idx] = b
    return np.block(pieces.tolist())


def gather_owned(numblocks: tuple[int, ...], blocks: Blocks) -> np.ndarray:
    """:func:`gather`, copied when the result is a view or read-only.

    A result never aliases a user's array or a kept block.
    """
    arr = gather(numblocks, blocks)
    if not arr.flags.owndata or not arr.flags.writeable:
        arr = arr.copy()
    return arr


Direct = Callable[[Region], np.ndarray]
"""Reads a region of an input in place (an in-memory source no task makes blocks of)."""


def direct_readers(
    input_exprs: Sequence[Expr], which: Sequence[bool], kernels: KernelSet
) -> list[Direct | None]:
    """Per input: how to read a region of it in place, or None (its blocks come from tasks).

    ``which``: the inputs the lowering left to their readers
    (``TaskGraph.in_place``): a user's array is sliced (a view), locally
    persisted blocks are assembled, a generated source makes just the region.
    """
    out: list[Direct | None] = []
    made: dict[str, Direct] = {}  # one reader per input expression (see ``getter``)
    for e, here in zip(input_exprs, which):
        op = e.op
        if not here:
            out.append(None)
        elif e.key in made:
            out.append(made[e.key])
        elif isinstance(op, FromArray):
            array = op.data.array

            def cut(r: Region, a: np.ndarray = array) -> np.ndarray:
                return a[(*r, Ellipsis)]

            cut.whole = array  # type: ignore[attr-defined]  # kernels may address it directly
            out.append(cut)
        elif isinstance(op, FromBlocks):
            blocks = op.store.blocks
            out.append(lambda r, c=e.chunks, b=blocks: assemble(c, r, b.__getitem__))
        else:
            out.append(kernels.generate(e))
        if out[-1] is not None:
            made[e.key] = out[-1]
    return out


SHARED_KEEP_MAX = 1 << 20
"""Bytes of an in-place region a getter shared by tasks keeps for a second read."""


class StageCode:
    """A stage's kernels from one kernel set, each looked up (compiled) on first use.

    ``in_place``: per input position, whether it is read in place (the
    lowering made no tasks for it); :attr:`direct` says how.
    """

    __slots__ = (
        "_in_place_get",
        "_map",
        "_partial",
        "_product",
        "_reduction",
        "_source",
        "chunks",
        "direct",
        "kernels",
        "stage",
        "whole",
    )

    def __init__(
        self, stage: Stage, kernels: KernelSet, in_place: Sequence[bool] | None = None
    ) -> None:
        self.stage = stage
        self.kernels = kernels
        self._source = self._map = self._partial = self._product = self._reduction = None
        self.chunks = [e.chunks for e in stage.input_exprs]
        here = in_place is not None and any(in_place)
        self.direct = direct_readers(stage.input_exprs, in_place, kernels) if here else None
        self.whole = (
            [getattr(d, "whole", None) for d in self.direct] if self.direct is not None else None
        )
        self._in_place_get: GetRegion | None = None

    def get(self, task: Task, values: Sequence[Any]) -> GetRegion:
        """``get(position, region)`` over what ``task`` reads: its input blocks ``values``
        and the inputs read in place. A task that reads only the latter (every partial of
        a reduction over a user's array or a random source) shares one getter."""
        if task.inputs or self.direct is None:
            return getter(self.chunks, task.inputs, values, self.direct, self.whole)
        if self._in_place_get is None:
            self._in_place_get = getter(
                self.chunks, (), (), self.direct, self.whole, keep_max=SHARED_KEEP_MAX
            )
        return self._in_place_get

    @property
    def source(self) -> Any:
        if self._source is None:
            self._source = self.kernels.source(self.stage)
        return self._source

    @property
    def map(self) -> Any:
        if self._map is None:
            self._map = self.kernels.map(self.stage)
        return self._map

    @property
    def partial(self) -> Any:
        if self._partial is None:
            self._partial = self.kernels.partial(self.stage)
        return self._partial

    @property
    def product(self) -> Any:
        if self._product is None:
            self._product = self.kernels.product(self.stage)
        return self._product

    @property
    def reduction(self) -> Any:
        if self._reduction is None:
            self._reduction = self.kernels.reduction(self.stage)
        return self._reduction


def getter(
    chunks: Sequence[tuple[tuple[int, ...], ...]],
    inputs: Sequence[tuple[int, tuple[int, ...]]],
    values: Sequence[Any],
    direct: Sequence[Direct | None] | None = None,
    whole: Sequence[np.ndarray | None] | None = None,
    keep_max: int | None = None,
) -> GetRegion:
    """``get(position, region)`` over the input blocks a task was given.

    ``chunks``: each input position's chunks; ``inputs``: ``(position,
    block index)`` of each value; ``direct``: inputs read in place. A region
    inside one block is a view of it. ``whole``: per position, the user's
    array a direct input slices (``get.whole``: a kernel may address the
    region inside it without making the view). ``keep_max``: the largest
    region of an in-place input kept for a second read (None: any; a getter
    shared by tasks keeps no big block alive past its task).
    """
    blocks: dict[tuple[int, tuple[int, ...]], np.ndarray] = dict(zip(inputs, values))
    # the last region each in-place input made: an input read at two positions (``x.T @ x``
    # fused) is read once per region, and only one region per input is kept alive
    last: dict[int, tuple[tuple, np.ndarray]] = {}

    def get(pos: int, region: Region) -> np.ndarray:
        if direct is not None:
            cut = direct[pos]
            if cut is not None:
                key = tuple(region)  # slices compare by value
                seen = last.get(id(cut))
                if seen is not None and seen[0] == key:
                    return seen[1]
                value = cut(region)
                if keep_max is None or value.nbytes <= keep_max:
                    last[id(cut)] = (key, value)
                else:
                    last.pop(id(cut), None)
                return value
        return assemble(chunks[pos], region, lambda b: blocks[(pos, b)])

    get.whole = whole  # type: ignore[attr-defined]
    return get


def _combine_all(code: StageCode, values: Sequence[Any]) -> Any:
    """The partial states or products ``values`` combined as one balanced tree."""
    stage = code.stage
    if stage.kind == "reduce":
        kernel, op = code.reduction, stage.expr.op
        ufunc = kernel.pairwise(op) if kernel.pairwise is not None else None
        return tree_combine(list(values), lambda a, b: kernel.combine(op, a, b), ufunc)
    return tree_combine(list(values), np.add, np.add)


def run_task(
    task: Task, code: StageCode, values: Sequence[Any], out: np.ndarray | None = None
) -> Any:
    """The value of ``task`` (a block, a partial state, a product).

    ``out``: a view the block may be written into (an output's final array);
    a kernel that cannot write into it returns a new array instead.
    """
    kind = task.kind
    stage = code.stage
    if kind == SOURCE:
        return code.source(task.region)
    if kind == BLOCK:
        get = code.get(task, values)
        fn = code.map
        if out is not None and getattr(fn, "writes_into", False):
            return fn(task.region, get, out=out)
        return fn(task.region, get)
    if kind == PARTIAL:
        get = code.get(task, values)
        return code.partial(task.region, get)
    if kind == PRODUCT:
        get = code.get(task, values)
        return code.product(task.region, task.regions, get)
    if kind == COMBINE:
        return _combine_all(code, values)
    if kind == FINALIZE:
        state = _combine_all(code, values)
        if stage.kind == "reduce":
            kernel = code.reduction
            into = getattr(kernel, "finalize_into", None)
            if out is not None and into is not None:
                return into(stage.expr.op, stage.expr, state, out)
            return kernel.finalize(stage.expr.op, stage.expr, state)
        return state
    raise NotImplementedError(f"{kind.name} tasks are run by the executor that lowered them")


class JointCode:
    """How the ``JOINT`` tasks of one sibling set run: one compiled pass, or siblings one by one.

    ``space``: the names, expressions and in-place flags of the set's inputs (a joint
    task's input positions); ``in_place``: per member, its own inputs' flags. Built
    from plain stages, so a worker process can build it as well as this one.
    """

    def __init__(
        self,
        members: Sequence[Stage],
        space: Sequence[tuple[str, Expr, bool]],
        in_place: Sequence[Sequence[bool]],
        kernels: KernelSet,
    ) -> None:
        self.kind = members[0].kind
        self.chunks = [e.chunks for _, e, _ in space]
        self.direct = direct_readers([e for _, e, _ in space], [h for _, _, h in space], kernels)
        where = {name: k for k, (name, _, _) in enumerate(space)}
        # each sibling's input positions, in the joint task's input space
        self.maps = [[where[n] for n in m.inputs] for m in members]
        self.codes = [StageCode(m, kernels, h) for m, h in zip(members, in_place, strict=True)]
        joint = getattr(kernels, "joint", None)
        found = joint(list(members)) if joint is not None else None
        self.fn = None
        if found is not None:
            fn, names, _, order = found
            self.fn = fn
            self.kernel_pos = [where[n] for n in names]
            self.order = [order.index(m.name) for m in members]

    def run(
        self, task: Task, values: Sequence[Any], outs: Sequence[np.ndarray | None] | None = None
    ) -> tuple:
        """Every member's value of ``task`` (a block, or a partial state), in member order;
        ``outs``: per member, a view its block may be written into (or None)."""
        outs = outs if outs is not None else [None] * len(self.codes)
        get = getter(self.chunks, task.inputs, values, self.direct)
        region = task.region
        if self.fn is not None:
            kpos = self.kernel_pos

            def kget(pos: int, r: Region) -> np.ndarray:
                return get(kpos[pos], r)

            if self.kind == "map":
                kouts = [None] * len(outs)
                for slot, k in enumerate(self.order):
                    kouts[k] = outs[slot]
                got = self.fn(region, kget, kouts)
            else:
                got = self.fn(region, kget)
            return tuple(got[k] for k in self.order)
        results = []
        for code, where, out in zip(self.codes, self.maps, outs):

            def mget(pos: int, r: Region, where: list[int] = where) -> np.ndarray:
                return get(where[pos], r)

            if self.kind == "map":
                fn = code.map
                if out is not None and getattr(fn, "writes_into", False):
                    results.append(fn(region, mget, out=out))
                elif out is not None:  # a block of an output: it lands in the final array
                    out[...] = fn(region, mget)
                    results.append(out)
                else:
                    results.append(fn(region, mget))
            else:
                results.append(code.partial(region, mget))
        return tuple(results)


def joint_code(graph: TaskGraph, lead: int, kernels: KernelSet) -> JointCode:
    """The :class:`JointCode` of the sibling set led by stage ``lead`` of ``graph``."""
    stages = graph.stages
    space = graph.joint_inputs[lead]
    members = next(t.members for t in graph.tasks if t.kind == TaskKind.JOINT and t.stage == lead)
    here = graph.read_in_place(space)
    return JointCode(
        [stages[m] for m in members],
        [(stages[s].name, stages[s].expr, h) for s, h in zip(space, here, strict=True)],
        [graph.inputs_in_place(m) for m in members],
        kernels,
    )
