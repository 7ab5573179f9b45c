"""Lowering: a frozen plan becomes one graph of typed block tasks, built once.

Every executor runs what :func:`lower` returns, so there is one answer to
"which tasks, reading which blocks, on which worker". Two passes over the
stages, each constant work per block:

1. **Backward (culling):** from every block of the requested outputs, each
   stage's needed blocks ask :class:`~lazyarr.optimize.blockreads.StageReads`
   which input blocks they read, and mark those needed. Blocks no output
   needs are never lowered (``x[:10]`` of a long array reads one block).
2. **Forward:** tasks are made in dependency order, each naming the task
   ids it reads.

Per stage kind:

* source: one ``SOURCE`` task per block;
* map: one ``BLOCK`` task per block (a contraction sums its parts inside);
  a contraction the ``place`` pass made a tree runs one ``PRODUCT`` per
  contracted block range on its planned worker, ``COMBINE`` steps as
  ``placement.combine_schedule`` says, and ends on the block's owner;
* reduce: one ``PARTIAL`` per body block, then ``FINALIZE`` per block over
  its partials (in C order, the order every executor combines them); a
  tree-placed reduction adds the planned ``COMBINE`` steps, and an unplaced one
  whose partial states are large combines them in a tree of its fan-in
  (``placement.planner.folds_parts``) so that they are not all kept;
* siblings (``plan.siblings``), when the executor computes them jointly
  (``joint=True``): one ``JOINT`` task per block (map) or per body block
  (reduce, then a ``FINALIZE`` per sibling), reading the shared inputs once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lazyarr.graph.chunks import block_index_iter, block_slices
from lazyarr.graph.ops import FromArray, FromBlocks
from lazyarr.graph.ops.creation import Windowed
from lazyarr.optimize.blockreads import BlockRef, StageReads
from lazyarr.optimize.placement.clustersim import host_ids
from lazyarr.optimize.placement.planner import (
    combine_schedule,
    fan_in,
    fold_width,
    folds_parts,
    gathers,
)
from lazyarr.optimize.plan import Plan, Stage
from lazyarr.optimize.schedule import schedule
from lazyarr.optimize.tasks import SOURCE, Task, TaskGraph, TaskKind

__all__ = ["lower"]

Index = tuple[int, ...]


def _tree(stage: Stage) -> bool:
    return stage.placement is not None and stage.placement.tree and stage.worker is not None


class _Lowering:
    """The state of one lowering: needed blocks, per-block reads, the tasks made so far."""

    def __init__(
        self,
        plan: Plan,
        outputs: Sequence[str],
        joint: bool,
        in_place: bool,
        split: int = 0,
        generate_in_place: bool = False,
    ) -> None:
        self.plan = plan
        self.stages = tuple(plan.stages.values())
        self.position = {s.name: i for i, s in enumerate(self.stages)}
        self.outputs = tuple(self.position[o] for o in outputs)
        self.inputs = [tuple(self.position[i] for i in s.inputs) for s in self.stages]
        self.reads = [StageReads(s) for s in self.stages]
        # in-memory sources read in place: their readers cut them, no task makes their blocks
        self.direct = [in_place and in_memory(s) for s in self.stages]
        self.direct_pos = [
            frozenset(p for p, src in enumerate(ins) if self.direct[src]) for ins in self.inputs
        ]
        n = len(self.stages)
        self.needed: list[np.ndarray | None] = [None] * n
        self.specs: list[dict[Index, object]] = [{} for _ in range(n)]
        self.tasks: list[Task] = []
        self.producers = [np.full(s.numblocks, -1, dtype=np.int64) for s in self.stages]
        self.slot_of: dict[int, int] = {}
        self.joint_inputs: dict[int, tuple[int, ...]] = {}
        self.joint = joint
        self.generate_in_place = generate_in_place
        self.split = split
        self.host_of = host_ids(plan.hosts, len(plan.workers)) if plan.workers else None
        # siblings computed jointly read a shared input block once: a source block the
        # siblings of one joint task read is counted once, so it may be made in that task
        self.lead_of: dict[int, int] = {}
        if joint:
            for names in plan.siblings:
                members = [self.position[n] for n in names if n in self.position]
                if len(members) == len(names):
                    self.lead_of.update(dict.fromkeys(members, min(members)))
        self.seen: set[tuple] = set()

    # -- backward: what each needed block reads ------------------------------
    def mark(self, si: int, refs: list[BlockRef], part: object = None) -> list[BlockRef]:
        """Mark the input blocks ``refs`` needed; returns those that tasks make.

        ``part``: which task of the stage reads them (its block, or a partial's body
        block); siblings' tasks of one part read a block once between them."""
        direct = self.direct_pos[si]
        if direct:
            refs = [r for r in refs if r[0] not in direct]
        ins = self.inputs[si]
        needed = self.needed
        lead = self.lead_of.get(si)
        for pos, b in refs:
            src = ins[pos]
            if lead is not None:
                key = (lead, part, src, b)
                if key in self.seen:
                    continue
                self.seen.add(key)
            arr = needed[src]
            if arr is None:
                arr = needed[src] = np.zeros(self.stages[src].numblocks, dtype=np.int32)
            arr[b] += 1
        return refs

    def backward(self) -> None:
        for o in self.outputs:
            self.needed[o] = np.ones(self.stages[o].numblocks, dtype=np.int32)
        for si in range(len(self.stages) - 1, -1, -1):
            need = self.needed[si]
            if need is None:
                continue
            stage = self.stages[si]
            reads = self.reads[si]
            spec = self.specs[si]
            if stage.kind == "source":
                # a generated or read source each of whose blocks one task reads is made in
                # that task (no task, no stored block; it makes just the region needed)
                if self.generate_in_place and isinstance(stage.expr.op, Windowed):
                    once = stage.regenerate or int(need.max()) <= 1
                    self.direct[si] = si not in self.outputs and once
                continue
            everything = bool(need.all())
            indices = block_index_iter(stage.numblocks) if everything else _true_indices(need)
            if stage.kind == "reduce" and len(self.direct_pos[si]) == len(self.inputs[si]):
                # every input is read in place: the partials depend on no task
                region_of = reads.partial_region
                for idx in indices:
                    spec[idx] = [(bi, region_of(bi), ()) for bi in reads.parts(idx)]
            elif stage.kind == "reduce":
                for idx in indices:
                    parts = []
                    for bi in reads.parts(idx):
                        region, refs = reads.partial(bi)
                        parts.append((bi, region, self.mark(si, refs, bi)))
                    spec[idx] = parts
            elif self.in_parts(si):
                for idx in indices:
                    region, products = reads.products(idx)
                    products = [(regions, self.mark(si, refs)) for regions, refs in products]
                    spec[idx] = (region, products)
            else:
                for idx in indices:
                    region, refs = reads.block(idx)
                    spec[idx] = (region, self.mark(si, refs, idx))

    # -- forward: the tasks --------------------------------------------------
    def add(self, task: Task) -> int:
        self.tasks.append(task)
        return len(self.tasks) - 1

    def deps_of(self, si: int, refs: Sequence[BlockRef]) -> tuple[tuple, tuple, tuple | None]:
        """Task ids, the refs they make, and joint slots of the input blocks ``refs``.

        Refs of sources read in place are dropped: their reader makes them.
        """
        if not refs:
            return (), (), None
        ins = self.inputs[si]
        direct = self.direct
        if any(direct[ins[pos]] for pos, _ in refs):
            refs = [r for r in refs if not direct[ins[r[0]]]]
        producers = self.producers
        slot_of = self.slot_of
        deps = []
        slots = None
        for k, (pos, b) in enumerate(refs):
            src = ins[pos]
            deps.append(int(producers[src][b]))
            slot = slot_of.get(src)
            if slot is not None:
                if slots is None:
                    slots = [-1] * len(refs)
                slots[k] = slot
        return tuple(deps), tuple(refs), None if slots is None else tuple(slots)

    def in_parts(self, si: int) -> bool:
        """A contraction computed as ``PRODUCT`` tasks and combine steps: the ``place``
        pass made it a tree, or it has fewer blocks than ``split`` (a Gram matrix of one
        block would otherwise sum all its products on one thread)."""
        stage = self.stages[si]
        if self.reads[si].contraction_parts <= 1:
            return False
        return _tree(stage) or (stage.kind == "map" and stage.nblocks < self.split)

    def worker(self, stage: Stage, idx: Index) -> int:
        return -1 if stage.worker is None else int(stage.worker[idx])

    def forward(self) -> None:
        joint_of = self._joint_sets() if self.joint else {}
        for unit in self._lowering_order(joint_of):
            if len(unit) > 1:
                self._joint(unit)
                continue
            si = unit[0]
            stage = self.stages[si]
            need = self.needed[si]
            if need is None:
                continue
            if self.direct[si] and si not in self.outputs:
                continue  # read in place by its readers
            if stage.kind == "source":
                self._sources(si, stage, need)
            elif stage.kind == "reduce":
                self._reduce(si, stage)
            elif self.in_parts(si):
                self._products(si, stage)
            else:
                self._blocks(si, stage)

    def _lowering_order(self, joint_of: dict[int, tuple[int, ...]]) -> list[tuple[int, ...]]:
        """Stages, and sibling sets as one unit, each after every stage it reads.

        The plan's order puts each stage after its inputs, but a sibling set is
        lowered at once: its tasks need every member's inputs lowered (a member
        may read a stage that comes after another member), and its readers need
        its tasks. Units are taken in plan order as soon as their inputs are done.
        """
        done = [False] * len(self.stages)
        order: list[tuple[int, ...]] = []
        pending = list(range(len(self.stages)))
        while pending:
            waiting = []
            for si in pending:
                if done[si]:
                    continue
                unit = joint_of.get(si, (si,))
                if all(done[i] for m in unit for i in self.inputs[m] if i not in unit):
                    order.append(unit)
                    for m in unit:
                        done[m] = True
                else:
                    waiting.append(si)
            if len(waiting) == len(pending):  # pragma: no cover - siblings never read each other
                raise RuntimeError("sibling stages that read each other cannot be lowered jointly")
            pending = waiting
        return order

    def _sources(self, si: int, stage: Stage, need: np.ndarray) -> None:
        reads = self.reads[si]
        mask = need > 0
        indices = block_index_iter(stage.numblocks) if mask.all() else _true_indices(need)
        # per needed block, in C order as ``indices``: its bytes and planned worker
        nbytes = reads.blocks_nbytes()[mask].tolist()
        workers = [-1] * len(nbytes) if stage.worker is None else stage.worker[mask].tolist()
        region = reads.grid.region
        tasks = self.tasks
        first = len(tasks)
        for idx, w, n in zip(indices, workers, nbytes, strict=True):
            tasks.append(Task(SOURCE, si, idx, region(idx), worker=w, nbytes=n))
        self.producers[si][mask] = np.arange(first, len(tasks))

    def _blocks(self, si: int, stage: Stage) -> None:
        reads = self.reads[si]
        prod = self.producers[si]
        for idx, (region, refs) in self.specs[si].items():
            deps, refs, slots = self.deps_of(si, refs)
            task = Task(
                TaskKind.BLOCK,
                si,
                idx,
                region,
                deps,
                refs,
                worker=self.worker(stage, idx),
                nbytes=reads.block_nbytes(idx),
                slots=slots,
            )
            prod[idx] = self.add(task)

    def _reduce(self, si: int, stage: Stage) -> None:
        tree = _tree(stage)
        parts_w = stage.placement.parts if tree else None
        reads = self.reads[si]
        prod = self.producers[si]
        part_bytes = reads.partials_nbytes().tolist()  # nested lists: no NumPy scalar per part
        for idx, parts in self.specs[si].items():
            ids = []
            sizes = []
            for k, (bi, region, refs) in enumerate(parts):
                deps, refs, slots = self.deps_of(si, refs)
                size = _at(part_bytes, bi)
                w = int(parts_w[(*idx, k)]) if tree else -1
                ids.append(
                    self.add(
                        Task(
                            TaskKind.PARTIAL,
                            si,
                            idx,
                            region,
                            deps,
                            refs,
                            part=k,
                            worker=w,
                            nbytes=size,
                            slots=slots,
                        )
                    )
                )
                sizes.append(size)
            owner = self.worker(stage, idx)
            final = tuple(ids)
            if tree or folds_parts(stage, len(ids)):
                ws = parts_w[idx].tolist() if tree else [-1] * len(ids)
                ids, sizes, final = self._steps(si, idx, ids, sizes, ws, owner)
            task = Task(
                TaskKind.FINALIZE,
                si,
                idx,
                reads.grid.region(idx),
                final,
                worker=owner,
                nbytes=reads.block_nbytes(idx),
            )
            prod[idx] = self.add(task)

    def _steps(
        self,
        si: int,
        idx: Index,
        ids: list[int],
        sizes: list[int],
        part_ws: list,
        owner: int,
        joint: tuple[set[int], int] | None = None,
    ) -> tuple[list[int], list[int], tuple[int, ...]]:
        """The planned combine steps of one block's parts; slots grow as in the schedule.

        Also the tasks whose values make the block: the last step's. A gathering
        reduction's step on the owner is left to its finalize (a ``FINALIZE`` combines
        the values it reads): its combined state would be the whole block once more,
        held beside the parts and the finished block (Dask counted a worker's share
        again in such states). ``joint``: the parts are joint tasks' values (their ids)
        and this stage's value is at that slot of each.
        """
        stage = self.stages[si]
        region = _block_region(stage, idx)
        gather = gathers(stage)
        placed = any(w >= 0 for w in part_ws)  # else folded as made (``folds_parts``)
        width = fan_in(stage) if placed else fold_width(stage, len(part_ws))
        steps = combine_schedule(part_ws, owner, self.host_of, width, gather)
        final: tuple[int, ...] | None = None
        for j, (*ins, w) in enumerate(steps):
            deps = tuple(ids[a] for a in ins)
            if gather and j == len(steps) - 1 and w == owner:
                final = deps
                break
            size = sum(sizes[a] for a in ins) if gather else max(sizes[a] for a in ins)
            slots = None if joint is None else _slots(deps, *joint)
            task = Task(
                TaskKind.COMBINE, si, idx, region, deps, part=j, worker=w, nbytes=size, slots=slots
            )
            ids.append(self.add(task))
            sizes.append(size)
        return ids, sizes, final if final is not None else (ids[-1],)

    def _products(self, si: int, stage: Stage) -> None:
        parts_w = stage.placement.parts if _tree(stage) else None  # None: unplaced
        reads = self.reads[si]
        prod = self.producers[si]
        for idx, (region, products) in self.specs[si].items():
            size = reads.block_nbytes(idx)
            ids = []
            for k, (regions, refs) in enumerate(products):
                deps, refs, slots = self.deps_of(si, refs)
                task = Task(
                    TaskKind.PRODUCT,
                    si,
                    idx,
                    region,
                    deps,
                    refs,
                    part=k,
                    regions=regions,
                    worker=-1 if parts_w is None else int(parts_w[(*idx, k)]),
                    nbytes=size,
                    slots=slots,
                )
                ids.append(self.add(task))
            owner = self.worker(stage, idx)
            part_ws = [-1] * len(ids) if parts_w is None else parts_w[idx].tolist()
            steps = combine_schedule(part_ws, owner, self.host_of, fan_in(stage))
            last_on = steps[-1][-1] if steps else part_ws[0]
            ids, _, _ = self._steps(si, idx, ids, [size] * len(ids), part_ws, owner)
            if last_on == owner:  # the last part or step is the block, on its owner
                prod[idx] = ids[-1]
                continue
            task = Task(
                TaskKind.FINALIZE, si, idx, region, (ids[-1],), worker=owner, nbytes=size
            )  # the sum moves to the block's owner
            prod[idx] = self.add(task)

    # -- siblings computed jointly --------------------------------------------
    def _joint_sets(self) -> dict[int, tuple[int, ...]]:
        """Sibling sets this run computes jointly: every member wholly needed, none a tree."""
        out: dict[int, tuple[int, ...]] = {}
        for names in self.plan.siblings:
            if not all(n in self.position for n in names):
                continue
            members = tuple(self.position[n] for n in names)
            ok = all(
                self.needed[m] is not None
                and bool(self.needed[m].all())
                and not self.in_parts(m)
                and self.stages[m].kind in ("map", "reduce")
                for m in members
            )
            kinds = {self.stages[m].kind for m in members}
            if not ok or len(kinds) != 1:
                continue
            if kinds == {"map"} and any(self.reads[m].contraction_parts > 1 for m in members):
                continue
            lead = min(members)
            for m in members:
                out[m] = members
            self.joint_inputs[lead] = tuple(
                dict.fromkeys(i for m in members for i in self.inputs[m])
            )
        return out

    def _joint(self, members: tuple[int, ...]) -> None:
        lead = min(members)
        space = {s: k for k, s in enumerate(self.joint_inputs[lead])}
        first = self.stages[members[0]]
        if first.kind == "map":
            for k, m in enumerate(members):
                self.slot_of[m] = k  # readers take each sibling's block out of the joint value
            for idx in self.specs[members[0]]:
                refs: dict[BlockRef, None] = {}
                for m in members:
                    ins = self.inputs[m]
                    refs.update(dict.fromkeys((space[ins[p]], b) for p, b in self.specs[m][idx][1]))
                region = self.specs[members[0]][idx][0]
                size = sum(self.reads[m].block_nbytes(idx) for m in members)
                w = self.worker(self.stages[lead], idx)
                task = self._joint_task(lead, members, idx, region, refs, -1, w, size)
                tid = self.add(task)
                for m in members:
                    self.producers[m][idx] = tid
            return
        # reductions: one joint task per body block, then each sibling combines and finalizes
        # its blocks from its slot of them (through the lead's planned tree, where placed)
        lead_stage = self.stages[lead]
        tree = _tree(lead_stage)
        parts_w = lead_stage.placement.parts if tree else None
        partial_ids: dict[Index, list[int]] = {}
        for idx, parts in self.specs[members[0]].items():
            ids = []
            for k, (bi, region, _) in enumerate(parts):
                refs = {}
                for m in members:
                    ins = self.inputs[m]
                    refs.update(
                        dict.fromkeys((space[ins[p]], b) for p, b in self.specs[m][idx][k][2])
                    )
                size = sum(self.reads[m].partial_nbytes(bi) for m in members)
                w = int(parts_w[(*idx, k)]) if tree else -1
                task = self._joint_task(lead, members, idx, region, refs, k, w, size)
                ids.append(self.add(task))
            partial_ids[idx] = ids
        for slot, m in enumerate(members):
            stage = self.stages[m]
            reads = self.reads[m]
            for idx, ids in partial_ids.items():
                owner = self.worker(stage, idx)
                final = tuple(ids)
                if tree or folds_parts(stage, len(ids)):
                    sizes = [reads.partial_nbytes(bi) for bi, _, _ in self.specs[m][idx]]
                    ws = parts_w[idx].tolist() if tree else [-1] * len(ids)
                    _, _, final = self._steps(m, idx, list(ids), sizes, ws, owner, (set(ids), slot))
                task = Task(
                    TaskKind.FINALIZE,
                    m,
                    idx,
                    _block_region(stage, idx),
                    final,
                    worker=owner,
                    slots=_slots(final, set(ids), slot),
                    nbytes=reads.block_nbytes(idx),
                )
                self.producers[m][idx] = self.add(task)

    def _joint_task(
        self,
        lead: int,
        members: tuple[int, ...],
        idx: Index,
        region: tuple,
        refs: dict[BlockRef, None],
        part: int = -1,
        worker: int = -1,
        nbytes: int = 0,
    ) -> Task:
        ins = self.joint_inputs[lead]
        inputs = tuple(r for r in refs if not self.direct[ins[r[0]]])
        deps = tuple(int(self.producers[ins[p]][b]) for p, b in inputs)
        slots = tuple(self.slot_of.get(ins[p], -1) for p, _ in inputs)
        if all(s < 0 for s in slots):
            slots = None
        return Task(
            TaskKind.JOINT,
            lead,
            idx,
            region,
            deps,
            inputs,
            part=part,
            slots=slots,
            members=members,
            worker=worker,
            nbytes=nbytes,
        )


def _slots(deps: Sequence[int], joint: set[int], slot: int) -> tuple[int, ...] | None:
    """Per dependency, ``slot`` where it is a joint task (in ``joint``), else -1; None: none is."""
    slots = tuple(slot if d in joint else -1 for d in deps)
    return slots if any(s >= 0 for s in slots) else None


def _block_region(stage: Stage, idx: Index) -> tuple:
    return block_slices(stage.expr.chunks, idx)


def _at(nested: list, idx: Index) -> int:
    """``nested[i][j]...`` for a block index (a per-block array as nested lists)."""
    for i in idx:
        nested = nested[i]
    return nested  # type: ignore[return-value]


def _true_indices(need: np.ndarray) -> list[Index]:
    return [tuple(int(i) for i in idx) for idx in np.argwhere(need)]


def in_memory(stage: Stage) -> bool:
    """A source whose blocks are slices of arrays in this process (user data, local persists)."""
    op = stage.expr.op
    return isinstance(op, FromArray) or (
        isinstance(op, FromBlocks) and op.store.executor in _LOCAL_STORES
    )


_LOCAL_STORES = frozenset({"numpy", "numba"})


def lower(
    plan: Plan,
    outputs: Sequence[str] | None = None,
    *,
    joint: bool = False,
    in_place: bool = False,
    split: int = 0,
    generate_in_place: bool | None = None,
) -> TaskGraph:
    """The task graph that computes every block of ``outputs`` (default: the plan's).

    ``joint``: compute sibling sets with ``JOINT`` tasks (for executors
    with joint kernels). ``in_place`` (for executors in this process):
    arrays in this process (user data, locally persisted blocks;
    :func:`in_memory`) get no tasks, and neither do generated sources each
    of whose blocks a single task reads; the tasks that read them cut or
    make what they need themselves (:attr:`TaskGraph.in_place`).
    ``generate_in_place`` (default: ``in_place``) asks for the second half
    alone, for executors in other processes: a generated block costs its
    reader a kernel call there too, and saves a task and a stored block.
    Blocks no output needs get no task. ``split`` (an executor's threads): contractions
    with fewer blocks than that run their partial products as separate tasks,
    summed in a tree, so the threads share them.
    """
    outs = tuple(outputs) if outputs is not None else plan.outputs
    generate = in_place if generate_in_place is None else generate_in_place
    low = _Lowering(plan, outs, joint, in_place, split, generate)
    low.backward()
    low.forward()
    graph = TaskGraph(
        plan=plan,
        stages=low.stages,
        tasks=low.tasks,
        producers=low.producers,
        outputs=low.outputs,
        slot_of=low.slot_of,
        joint_inputs=low.joint_inputs,
        in_place=tuple(i for i, d in enumerate(low.direct) if d),
        stage_reads=tuple(low.reads),
        regions_computed=sum(r.regions_computed for r in low.reads),
    )
    graph.schedule = schedule(graph)
    return graph
