"""The placement search: a greedy local search over block tasks (NumS's LSHS, notes §7).

Stages are visited in plan order and their block tasks in C order. Each
task goes to the worker with the lowest simulated score among the
holders of its inputs and the block's layout owner; a worker other than the
owner also pays for moving the result to the owner afterwards (one-step
look-ahead). The score is the objective, after the bytes between hosts when
workers share hosts (``ClusterSim.hosts_first``): fewest bytes between hosts
first, then the least loaded worker. Ties go to the owner, then to the
lowest worker index, so the plan is reproducible.

Per stage kind:

* ``source``: every block on its owner (all sources first, as the inputs
  that exist before the computation).
* ``map``: one task per block, reading the blocks its regions touch. When
  the owner already holds every input (elementwise on the same layout) the
  owner wins outright, which is the fast path.
* contraction (``matmul``/``tensordot``/``einsum`` whose summed axes span
  several blocks): two strategies are simulated and the lower score
  wins (ties: owner-computes). *owner-computes* runs each block on its
  owner reading whole panels (SUMMA-like); *tree* runs one partial product
  per contracted block range on a holder and sums them in a tree.
  Owner-computes is left out when a block's panels exceed the memory limit.
* ``reduce``: one partial per body block, placed by the search, combined
  by :func:`combine_schedule` (co-located partials first), finalized on
  the owner.

Tree stages record where each part ran (``parts``); the combine steps
follow from :func:`combine_schedule`, which executors call as well.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Sequence
from itertools import product

import numpy as np
from dask.utils import format_bytes

from lazyarr.optimize.blockreads import BlockRef, StageReads
from lazyarr.optimize.placement.clustersim import ClusterSim, SimOp
from lazyarr.optimize.plan import Plan, Stage

__all__ = [
    "LOCAL_COEFF",
    "REDUCE_FAN_IN",
    "WEIGHTS",
    "Planner",
    "StagePlacement",
    "combine_schedule",
    "fan_in",
    "fold_width",
    "folds_parts",
    "parts_kept_folding",
]

LOCAL_COEFF = 0.1
"""Network cost of a same-host copy relative to a copy between hosts (NumS's default)."""
WEIGHTS = (1.0, 1.0, 1.0)
"""Weights of max memory, max network in, max network out in the objective."""

Step = tuple[int, ...]
"""A combine step ``(slot, slot, ..., worker)``: the slots it combines (two or more, in
order) and the worker it runs on (last); its result is the next new slot."""

REDUCE_FAN_IN = 16
"""Reduction partials on one worker are combined this many at a time (small states: fewer,
wider steps cost fewer tasks; dask.array's ``split_every`` plays the same part)."""


def fan_in(stage: Stage) -> int:
    """How many co-located parts one combine step of ``stage`` takes (products: two, big)."""
    if stage.kind != "reduce":
        return 2
    asked = getattr(stage.expr.op, "split_every", 0)  # dask's split_every, where given
    return asked if asked >= 2 else REDUCE_FAN_IN


@dataclasses.dataclass
class StagePlacement:
    """What the search decided for one stage."""

    strategy: str
    worker: np.ndarray
    est_bytes: np.ndarray
    moves: int
    why: str = ""
    parts: np.ndarray | None = None
    """For tree strategies: worker of each part, shaped ``(*numblocks, n_parts)``."""
    panel: int = 0
    """Largest input bytes one block task reads (owner-computes memory check)."""


FOLD_BYTES = 4 << 20
"""An unplaced reduction combines its parts in a tree as they are made (fan-in at a time)
when they would take more than this together; below, one finalize reads them all (the
scalar parts of a 100,000-block sum: a combine per 16 of them costs more than it saves)."""


def folds_parts(stage: Stage, parts: int) -> bool:
    """An unplaced reduction of ``parts`` parts per block combines them in a tree as they are
    made, so that its partial states are not all kept until the last one (the quadratic
    means' 44 x 3 partial means of 1 MiB each; a std's 16 states of 1.5 MiB)."""
    if stage.kind != "reduce" or gathers(stage):
        return False
    if parts_kept_folding(parts, fold_width(stage, parts)) >= parts:
        return False
    expr = stage.expr
    state = math.prod(max(c, default=1) for c in expr.chunks)
    state *= expr.op.state_itemsize(expr.inputs[0], expr)
    return parts * state > FOLD_BYTES


def parts_kept_folding(parts: int, width: int) -> int:
    """Partial states alive at once while ``parts`` made one after another are combined
    ``width`` at a time: a group being filled, the groups' combined states, one more made
    while a combine runs."""
    return width + math.ceil(parts / width) + 1


def fold_width(stage: Stage, parts: int) -> int:
    """The fan-in of an unplaced fold of ``parts`` parts that keeps fewest of them at once
    (about their square root), at most :func:`fan_in`: 4 for 16 parts keeps 9 of them."""
    widest = max(2, fan_in(stage))
    return min(range(2, widest + 1), key=lambda w: (parts_kept_folding(parts, w), -w))


def gathers(stage: Stage) -> bool:
    """Whether ``stage`` is a reduction whose combined states keep all their parts."""
    return stage.kind == "reduce" and bool(getattr(stage.expr.op, "gathers", False))


def combine_schedule(
    part_workers: Sequence[int],
    owner: int,
    host_of: Sequence[int] | None = None,
    fan_in: int = 2,
    gather: bool = False,
) -> list[Step]:
    """How the parts of one block are combined: ``[(slot, slot, ..., worker), ...]``.

    Slots ``0..n-1`` are the parts (in order); step ``j`` combines its slots
    on ``worker`` and its result is slot ``n + j``; the last slot is the
    block's value (slot 0 when there is one part). Parts on the same worker
    are combined there first, up to ``fan_in`` at a time (no traffic); then
    one value per worker is combined pairwise, the owner's first and
    same-host workers next to each other, each step on the worker of its
    first operand. ``gather``: a combined state is as big as its parts (see
    ``ReduceOp.gathers``), so all parts are combined in one step on the
    owner: each part moves at most once, and no worker holds a combined
    state beside the parts it holds (Dask counts both; the sample sort's
    workers held 1.6x their share with local folds first). Deterministic: the
    planner and the lowering call this with the plan's part workers to run
    the same tree.
    """

    def host(w: int) -> int:
        return int(host_of[w]) if host_of is not None else w

    groups: dict[int, list[int]] = {}
    for slot, w in enumerate(part_workers):
        groups.setdefault(int(w), []).append(slot)
    order = sorted(groups, key=lambda w: (w != owner, host(w) != host(owner), host(w), w))
    where = [int(w) for w in part_workers]
    steps: list[Step] = []

    def fold(slots: list[int], width: int) -> int:
        level = slots
        while len(level) > 1:
            nxt = []
            for i in range(0, len(level), width):
                chunk = level[i : i + width]
                if len(chunk) == 1:
                    nxt.append(chunk[0])
                    continue
                steps.append((*chunk, where[chunk[0]]))
                where.append(where[chunk[0]])
                nxt.append(len(where) - 1)
            level = nxt
        return level[0]

    if gather:
        return [(*range(len(part_workers)), owner)] if len(part_workers) > 1 else []
    if part_workers:
        fold([fold(groups[w], max(2, fan_in)) for w in order], 2)
    return steps


def _score_text(a: tuple[float, float], sign: str, b: tuple[float, float]) -> str:
    """Why one score won: by bytes between hosts when those differ, else by objective."""
    if a[0] != b[0]:
        return f"bytes between hosts {format_bytes(int(a[0]))} {sign} {format_bytes(int(b[0]))}"
    return f"objective {a[1]:.4g} {sign} {b[1]:.4g}"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


class Planner:
    """Runs the search over a plan, given the layout owner of every block of every stage."""

    def __init__(
        self,
        plan: Plan,
        owners: dict[str, np.ndarray],
        n_workers: int,
        hosts: Sequence[str] = (),
        memory_limit: int | None = None,
        local_coeff: float = LOCAL_COEFF,
        weights: Sequence[float] = WEIGHTS,
    ) -> None:
        self.plan = plan
        self.owners = owners
        self.memory_limit = memory_limit
        self.sim = ClusterSim(n_workers, hosts, local_coeff, weights)
        self._reads: dict[str, StageReads] = {}

    def reads(self, stage: Stage) -> StageReads:
        """The stage's block rules (made once per stage)."""
        found = self._reads.get(stage.name)
        if found is None:
            found = self._reads[stage.name] = StageReads(stage)
        return found

    # -- driver -------------------------------------------------------------
    def run(self) -> dict[str, StagePlacement]:
        """Place every stage; returns the decisions by stage name."""
        out: dict[str, StagePlacement] = {}
        stages = list(self.plan.stages.values())
        for s in stages:
            if s.kind == "source":
                out[s.name] = self._sources(s)
        for s in stages:
            if s.kind == "map":
                if self.reads(s).contraction_parts > 1:
                    out[s.name] = self._contraction(s)
                else:
                    out[s.name] = self._map(s, owner_only=False)
            elif s.kind == "reduce":
                out[s.name] = self._reduce(s)
            elif s.kind != "source":
                raise NotImplementedError(f"placement: stage kind {s.kind!r} has no block rule")
        return out

    # -- helpers ------------------------------------------------------------
    @staticmethod
    def _keys(stage: Stage, refs: Sequence[BlockRef]) -> tuple:
        """Simulator keys of the input blocks ``refs`` (position, block) of ``stage``."""
        ins = stage.inputs
        return tuple([(ins[pos], b) for pos, b in refs])

    def _choose(self, op: SimOp, owner: int) -> int:
        """The candidate with the lowest score (look-ahead to ``owner``); ties: owner, index."""
        sim = self.sim
        if all(owner in sim.loc[k] for k in op.inputs):
            return owner  # any other worker would also move the result: never better
        cands = {owner}
        for k in op.inputs:
            cands.update(sim.loc[k])
        best: tuple[tuple[float, float], bool, int] | None = None
        for w in sorted(cands):
            key = (sim.simulate_score(op, w, lookahead=owner), w != owner, w)
            if best is None or key < best:
                best = key
        assert best is not None
        return best[2]

    def _choose_near_data(self, op: SimOp, owner: int) -> int:
        """A worker that already holds most of ``op``'s input bytes (ties: :meth:`_choose`).

        For the partials of a gathering reduction (``ReduceOp.gathers``): a
        partial keeps a slice of its block, so moving the block to it (which a
        max-load objective may find free) costs more bytes than moving the slice.
        """
        sim = self.sim
        cands = {owner}
        for k in op.inputs:
            cands.update(sim.loc[k])

        inputs = dict.fromkeys(op.inputs)
        missing = {w: sum(sim.size[k] for k in inputs if w not in sim.loc[k]) for w in cands}
        least = min(missing.values())
        near = sorted(w for w in cands if missing[w] == least)
        if len(near) == 1:
            return near[0]
        best = min(near, key=lambda w: (sim.simulate_score(op, w, lookahead=owner), w != owner, w))
        return best

    def _blocks(self, stage: Stage) -> list[tuple[int, ...]]:
        return list(product(*map(range, stage.numblocks)))  # C order

    def _empty(self, stage: Stage) -> tuple[np.ndarray, np.ndarray]:
        return (
            np.zeros(stage.numblocks, dtype=np.int32),
            np.zeros(stage.numblocks, dtype=np.int64),
        )

    # -- stage kinds --------------------------------------------------------
    def _sources(self, stage: Stage) -> StagePlacement:
        worker, est = self._empty(stage)
        worker[...] = self.owners[stage.name]
        keys = [(stage.name, idx) for idx in self._blocks(stage)]
        self.sim.place_many(keys, self.reads(stage).blocks_nbytes(), worker)
        why = f"source: {_count(stage.nblocks, 'block')} on their layout owners"
        return StagePlacement("layout", worker, est, 0, why)

    def _map(self, stage: Stage, owner_only: bool) -> StagePlacement:
        worker, est = self._empty(stage)
        owners = self.owners[stage.name]
        start = self.sim.moves
        panel = 0
        off = 0
        reads = self.reads(stage)
        for idx in self._blocks(stage):
            keys = self._keys(stage, reads.block(idx)[1])
            op = SimOp(keys, (stage.name, idx), reads.block_nbytes(idx))
            owner = int(owners[idx])
            w = owner if owner_only else self._choose(op, owner)
            est[idx], inputs = self.sim.commit_counting(op, w)  # inputs: the block's panels
            panel = max(panel, inputs)
            worker[idx] = w
            off += w != owner
        moves = self.sim.moves - start
        total = format_bytes(int(est.sum()))
        if owner_only:
            strategy = "owner-computes"
            why = (
                f"owner-computes: {_count(stage.nblocks, 'block')}, "
                f"{_count(moves, 'block move')} predicted ({total})"
            )
        elif moves == 0 and off == 0:
            strategy = "owner"
            blocks = _count(stage.nblocks, "block")
            why = f"owner: {blocks}, every input already on the owner, 0 moves"
        else:
            strategy = "search"
            why = (
                f"search: {_count(stage.nblocks, 'block')} ({off} off their owner), "
                f"{_count(moves, 'block move')} predicted ({total})"
            )
        return StagePlacement(strategy, worker, est, moves, why, panel=panel)

    def _tree(
        self,
        stage: Stage,
        parts_of: list[list[tuple[tuple[Hashable, ...], int]]],
        reduce: bool,
    ) -> StagePlacement:
        """Place ``parts_of[block]`` = [(input keys, part bytes)] and combine them per block."""
        worker, est = self._empty(stage)
        owners = self.owners[stage.name]
        blocks = self._blocks(stage)
        nparts = max((len(p) for p in parts_of), default=0)
        parts = np.zeros((*stage.numblocks, nparts), dtype=np.int32)
        sim = self.sim
        start = sim.moves
        gather = gathers(stage)
        for idx, plist in zip(blocks, parts_of):
            owner = int(owners[idx])
            moved = 0
            slots: list[Hashable] = []
            sizes: list[int] = []
            for k, (keys, size) in enumerate(plist):
                key = (stage.name, idx, "part", k)
                op = SimOp(keys, key, size)
                w = self._choose_near_data(op, owner) if gather else self._choose(op, owner)
                moved += sim.commit(op, w)
                parts[(*idx, k)] = w
                slots.append(key)
                sizes.append(size)
            steps = combine_schedule(parts[idx].tolist(), owner, sim.host_of, fan_in(stage), gather)
            for j, (*ins, w) in enumerate(steps):
                key = (stage.name, idx, "sum", j)
                size = sum(sizes[a] for a in ins) if gather else max(sizes[a] for a in ins)
                moved += sim.commit(SimOp(tuple(slots[a] for a in ins), key, size), w)
                slots.append(key)
                sizes.append(size)
            out = (stage.name, idx)
            if reduce:
                size = self.reads(stage).block_nbytes(idx)
                moved += sim.commit(SimOp((slots[-1],), out, size), owner)
            else:
                moved += sim.move(slots[-1], owner)
                sim.alias(slots[-1], out)
            worker[idx] = owner
            est[idx] = moved
        moves = sim.moves - start
        total = format_bytes(int(est.sum()))
        kind, what = ("tree reduce", "partials") if reduce else ("tree", "partial products")
        why = (
            f"{kind}: {_count(stage.nblocks, 'block')} x {nparts} {what}, "
            f"co-located parts combined first, {_count(moves, 'block move')} predicted ({total})"
        )
        return StagePlacement("tree", worker, est, moves, why, parts)

    def _reduce(self, stage: Stage) -> StagePlacement:
        reads = self.reads(stage)
        if reads.elementwise and not gathers(stage):
            local = self._data_local_parts(stage)
            if local is not None:
                return self._local_tree(stage, local)
        parts_of = []
        for idx in self._blocks(stage):
            plist = []
            for b in reads.parts(idx):
                keys = self._keys(stage, reads.partial(b)[1])
                plist.append((keys, reads.partial_nbytes(b)))
            parts_of.append(plist)
        return self._tree(stage, parts_of, reduce=True)

    def _data_local_parts(self, stage: Stage) -> list[tuple[list[int], list[int]]] | None:
        """Per block of a reduction, the worker and bytes of each partial, in closed form,
        when every partial has a worker holding all it reads and keeps no more bytes than
        that (else None: the search decides).

        Such a partial runs where its inputs are (the owner when it holds them, else the
        lowest-numbered holder): it copies nothing, and any other worker would copy its
        inputs, at least as many bytes as the partial the combine tree then moves. The
        search would try each candidate per partial; this is one look-up per partial.
        """
        reads, loc, sizes = self.reads(stage), self.sim.loc, self.sim.size
        ins = stage.inputs
        owners = self.owners[stage.name]
        part_bytes = reads.partials_nbytes()
        out = []
        for idx in self._blocks(stage):
            owner = int(owners[idx])
            workers: list[int] = []
            nbytes: list[int] = []
            for b in reads.parts(idx):
                refs = reads.partial_blocks(b)
                size = int(part_bytes[b])
                if len(refs) == 1:  # the common case: one block read
                    key = (ins[refs[0][0]], refs[0][1])
                    where, read = loc[key], sizes[key]
                    holders = where if len(where) == 1 else sorted(where)
                else:
                    keys = [(ins[pos], bi) for pos, bi in refs]
                    common = set(loc[keys[0]]).intersection(*(loc[k] for k in keys[1:]))
                    holders, read = sorted(common), sum(sizes[k] for k in keys)
                if not holders or size > read:
                    return None
                workers.append(owner if owner in holders else holders[0])
                nbytes.append(size)
            if not workers:
                return None
            out.append((workers, nbytes))
        return out

    def _local_tree(self, stage: Stage, local: list[tuple[list[int], list[int]]]) -> StagePlacement:
        """A reduction whose partials run where their inputs are (:meth:`_data_local_parts`):
        combined by :func:`combine_schedule`, as :meth:`_tree` places them.

        Only what crosses workers goes through the simulator op by op; the partials and
        the combine steps that read their own worker's values add memory, in one step.
        """
        worker, est = self._empty(stage)
        owners = self.owners[stage.name]
        blocks = self._blocks(stage)
        sim = self.sim
        start = sim.moves
        nparts = max(len(w) for w, _ in local)
        parts = np.zeros((*stage.numblocks, nparts), dtype=np.int32)
        memory = np.zeros(sim.n_workers, dtype=np.float64)
        for idx, (workers, nbytes) in zip(blocks, local, strict=True):
            owner = int(owners[idx])
            parts[idx][: len(workers)] = workers
            memory += np.bincount(workers, weights=nbytes, minlength=sim.n_workers)
            est[idx] = self._combine_local(stage, idx, workers, nbytes, owner, memory)
            worker[idx] = owner
        sim.add_memory(memory)
        moves = sim.moves - start
        total = format_bytes(int(est.sum()))
        why = (
            f"tree reduce: {_count(stage.nblocks, 'block')} x {nparts} partials where their "
            f"blocks are, co-located parts combined first, {_count(moves, 'block move')} "
            f"predicted ({total})"
        )
        return StagePlacement("tree", worker, est, moves, why, parts)

    def _combine_local(
        self,
        stage: Stage,
        idx: tuple[int, ...],
        workers: list[int],
        nbytes: list[int],
        owner: int,
        memory: np.ndarray,
    ) -> int:
        """Commit the combine steps of one block whose partials ran on ``workers``, and its
        result on ``owner``; returns the bytes copied. A step whose values are all on its
        worker adds its bytes to ``memory`` (applied later, loads only grow); the others,
        and the values they read, go through the simulator."""
        sim = self.sim
        n = len(workers)
        where, size = list(workers), list(nbytes)
        named: dict[int, tuple] = {}  # slot -> its simulator key, once a copy reads it

        def key_of(slot: int) -> tuple:
            k = named.get(slot)
            if k is None:
                k = (
                    (stage.name, idx, "part", slot)
                    if slot < n
                    else (stage.name, idx, "sum", slot - n)
                )
                sim.hold(k, size[slot], where[slot])
                named[slot] = k
            return k

        moved = 0
        steps = combine_schedule(workers, owner, sim.host_of, fan_in(stage))
        for j, (*ins, w) in enumerate(steps):
            step_bytes = max(size[a] for a in ins)
            if all(where[a] == w for a in ins):
                memory[w] += step_bytes  # co-located values: no copy
            else:
                out = (stage.name, idx, "sum", j)
                moved += sim.commit(SimOp(tuple(key_of(a) for a in ins), out, step_bytes), w)
                named[n + j] = out
            where.append(w)
            size.append(step_bytes)
        last = len(where) - 1
        out_bytes = self.reads(stage).block_nbytes(idx)
        moved += sim.commit(SimOp((key_of(last),), (stage.name, idx), out_bytes), owner)
        return moved

    def _contraction(self, stage: Stage) -> StagePlacement:
        base = self.sim
        self.sim = base.copy()
        owner_way = self._map(stage, owner_only=True)
        owner_sim, self.sim = self.sim, base
        fits = self.memory_limit is None or owner_way.panel <= self.memory_limit
        parts_of = []
        reads = self.reads(stage)
        for idx in self._blocks(stage):
            size = reads.block_nbytes(idx)
            _, products = reads.products(idx)
            parts_of.append([(self._keys(stage, refs), size) for _, refs in products])
        tree_way = self._tree(stage, parts_of, reduce=False)
        a, b = owner_sim.score(), base.score()
        if fits and a <= b:
            self.sim = owner_sim
            owner_way.why += f"; chosen over tree ({_score_text(a, '<=', b)})"
            return owner_way
        reason = "panels exceed the memory limit" if not fits else _score_text(b, "<", a)
        tree_way.why += f"; chosen over owner-computes ({reason})"
        return tree_way
