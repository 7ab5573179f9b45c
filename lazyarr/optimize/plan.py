"""The Plan: stages in dependency order, each over a block grid.

A stage is one unit an executor runs: for now one array op, after fusion a
group of them. Per-block facts (worker, estimated bytes) are NumPy arrays
shaped like the block grid, never graph nodes, so big grids stay cheap.
What passes decide for later levels are typed fields (``Stage.placement``,
``Plan.siblings``, ``Plan.workers``); ``notes`` holds only the human-readable
"why". Plans and stages are frozen: a pass returns a new plan, and the
plan an executor gets cannot change under it. This module imports no pass.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

import networkx as nx
import numpy as np

from lazyarr.graph.expr import Expr
from lazyarr.graph.serialize import exprs_from_json, exprs_to_json

__all__ = ["PassRecord", "Placement", "Plan", "Stage"]


def _frozen(a: np.ndarray | None) -> np.ndarray | None:
    """A read-only copy of a per-block array (None stays None)."""
    if a is None or not a.flags.writeable:
        return a
    a = a.copy()
    a.flags.writeable = False
    return a


@dataclasses.dataclass(frozen=True)
class Placement:
    """How the ``place`` pass runs a stage's blocks on the workers.

    ``strategy``: ``layout`` (sources), ``owner``, ``search``,
    ``owner-computes`` or ``tree``. For ``tree`` stages (reductions,
    contractions split over their summed axes) ``parts`` is the worker of
    each reduction partial or partial product, shaped ``(*numblocks,
    n_parts)``; executors combine them as ``placement.combine_schedule``
    says, and finish each block on ``stage.worker``.
    """

    strategy: str
    parts: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", _frozen(self.parts))

    @property
    def tree(self) -> bool:
        return self.strategy == "tree" and self.parts is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"strategy": self.strategy}
        if self.parts is not None:
            out["parts"] = self.parts.tolist()
            out["parts_shape"] = list(self.parts.shape)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Placement:
        parts = None
        if d.get("parts") is not None:
            parts = np.asarray(d["parts"], dtype=np.int32).reshape(d["parts_shape"])
        return cls(d["strategy"], parts)


@dataclasses.dataclass(frozen=True)
class Stage:
    """One executable unit over the block grid of ``expr``.

    ``members`` lists the array ops the stage computes in dependency order,
    ``expr`` (the root) last: just ``(expr,)`` unless fusion grouped
    several. ``input_exprs`` are the expressions the stage reads from other
    stages and ``inputs`` the names of those stages, position by position
    (for an unfused stage, ``expr.inputs``).
    """

    name: str
    expr: Expr
    inputs: tuple[str, ...]
    members: tuple[Expr, ...] = ()
    input_exprs: tuple[Expr, ...] = ()
    worker: np.ndarray | None = None
    """The worker that produces each block and holds it afterwards (int32, shaped numblocks)."""
    est_bytes: np.ndarray | None = None
    """Predicted bytes copied between workers to compute each block (int64)."""
    placement: Placement | None = None
    regenerate: bool = False
    """A source made inside every task that reads it, never stored (the ``memory`` pass)."""
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if not self.members:
            set_(self, "members", (self.expr,))
        if not self.input_exprs and len(self.members) == 1:
            set_(self, "input_exprs", self.expr.inputs)
        set_(self, "worker", _frozen(self.worker))
        set_(self, "est_bytes", _frozen(self.est_bytes))

    @property
    def fused(self) -> bool:
        """True when the stage computes several array ops in one pass."""
        return len(self.members) > 1

    @property
    def kind(self) -> str:
        return self.expr.op.kind

    @property
    def numblocks(self) -> tuple[int, ...]:
        return self.expr.numblocks

    @property
    def nblocks(self) -> int:
        return math.prod(self.expr.numblocks)

    def replace(self, **changes: Any) -> Stage:
        return dataclasses.replace(self, **changes)


@dataclasses.dataclass(frozen=True)
class PassRecord:
    """What one pass did: its name, seconds taken and a short summary."""

    name: str
    seconds: float
    summary: str


@dataclasses.dataclass(frozen=True)
class Plan:
    """Stages in dependency order and the names of the requested outputs."""

    stages: dict[str, Stage]
    outputs: tuple[str, ...]
    history: tuple[PassRecord, ...] = ()
    notes: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Why passes decided what they did, by pass name (``notes["fuse"]``, ``notes["place"]``)."""
    siblings: tuple[tuple[str, ...], ...] = ()
    """Sets of independent stages one pass over their shared inputs can compute (``fuse``)."""
    workers: tuple[str, ...] = ()
    """The worker addresses ``Stage.worker`` numbers refer to (``place``; empty: unplaced)."""
    hosts: tuple[str, ...] = ()
    """The host of each of ``workers`` (same order)."""
    memory_limit: int | None = None
    """The bytes one process or worker may hold that the plan was made for
    (``PassContext.memory_limit``, recorded by ``optimize``): executors bound their work by
    it instead of reading the setting again."""
    joint: bool = False
    """Its executor computes ``siblings`` as joint tasks (``PassContext.joint``, recorded by
    ``optimize``): siblings read a shared input once, as one reader."""
    labels: dict[str, str] = dataclasses.field(default_factory=dict)
    """Stage name -> what the user called the arrays it computes (pictures; see ``with_labels``)."""

    @classmethod
    def from_graph(cls, g: nx.DiGraph) -> Plan:
        """One stage per graph node, in a deterministic topological order."""
        stages: dict[str, Stage] = {}
        for n in nx.lexicographical_topological_sort(g):
            expr = g.nodes[n]["expr"]
            by_pos: dict[int, str] = {}
            for src in g.predecessors(n):
                for pos in g.edges[src, n]["positions"]:
                    by_pos[pos] = src
            stages[n] = Stage(n, expr, tuple(by_pos[i] for i in range(len(expr.inputs))))
        return cls(stages, tuple(g.graph["outputs"]))

    @cached_property
    def readers(self) -> dict[str, list[str]]:
        """For each stage, the stages that read it (computed once per plan)."""
        return self.consumers()

    def consumers(self) -> dict[str, list[str]]:
        """For each stage, the stages that read it (each listed once)."""
        out: dict[str, list[str]] = {n: [] for n in self.stages}
        for s in self.stages.values():
            for i in dict.fromkeys(s.inputs):
                out[i].append(s.name)
        return out

    def to_graph(self) -> nx.DiGraph:
        """The stage DAG (for pictures and structural tests)."""
        g = nx.DiGraph()
        for s in self.stages.values():
            g.add_node(s.name, op=s.expr.op.label(), kind=s.kind, nblocks=s.nblocks)
            for pos, i in enumerate(s.inputs):
                if g.has_edge(i, s.name):
                    g.edges[i, s.name]["positions"].append(pos)
                else:
                    g.add_edge(i, s.name, positions=[pos])
        g.graph["outputs"] = list(self.outputs)
        return g

    def with_stages(self, stages: dict[str, Stage], outputs: Sequence[str] | None = None) -> Plan:
        """This plan over other stages (and outputs); sibling sets keep only stages still here."""
        outs = tuple(outputs) if outputs is not None else self.outputs
        siblings = tuple(g for g in self.siblings if all(n in stages for n in g))
        return dataclasses.replace(
            self, stages=stages, outputs=outs, notes=dict(self.notes), siblings=siblings
        )

    def replace(self, **changes: Any) -> Plan:
        return dataclasses.replace(self, **changes)

    def with_labels(self, names: Mapping[str, str]) -> Plan:
        """This plan with stages labelled by the user's names of the arrays they compute.

        ``names`` maps expression keys to names (else a member's own
        ``user_name`` counts). A fused stage may compute several named
        arrays: ``"y → z"``; one whose result is unnamed ends in ``" → …"``
        (``"w → …"``: computes ``w``, then more). Labels the plan already
        had stay where nothing new is found.
        """
        labels = {n: t for n, t in self.labels.items() if n in self.stages}
        for s in self.stages.values():
            found = [names.get(m.key) or m.user_name for m in s.members]
            named = list(dict.fromkeys(n for n in found if n))
            if named:
                labels[s.name] = " → ".join(named) + ("" if found[-1] else " → …")
        return dataclasses.replace(self, labels=labels)

    @cached_property
    def total_blocks(self) -> int:
        return sum(s.nblocks for s in self.stages.values())

    # -- JSON ---------------------------------------------------------------
    def to_json(self) -> str:
        """A self-contained JSON text of the plan (expressions included)."""
        table, _ = exprs_to_json(
            [m for s in self.stages.values() for m in (*s.members, *s.input_exprs)]
        )
        doc = {
            "format": "lazyarr-plan",
            "version": 1,
            "exprs": table,
            "outputs": list(self.outputs),
            "history": [dataclasses.asdict(h) for h in self.history],
            "notes": self.notes,
            "siblings": [list(g) for g in self.siblings],
            "workers": list(self.workers),
            "hosts": list(self.hosts),
            "memory_limit": self.memory_limit,
            "joint": self.joint,
            "labels": self.labels,
            "stages": [
                {
                    "name": s.name,
                    "expr": s.expr.key,
                    "inputs": list(s.inputs),
                    "members": [m.key for m in s.members],
                    "input_exprs": [e.key for e in s.input_exprs],
                    "worker": None if s.worker is None else s.worker.tolist(),
                    "est_bytes": None if s.est_bytes is None else s.est_bytes.tolist(),
                    "placement": None if s.placement is None else s.placement.to_json(),
                    "regenerate": s.regenerate,
                    "notes": s.notes,
                }
                for s in self.stages.values()
            ],
        }
        return json.dumps(doc, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        """Read a plan written by :meth:`to_json`; ``ValueError`` (one line) for any other
        text, so the CLI reports a wrong or damaged file without a traceback."""
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            raise ValueError(f"not a lazyarr plan: not JSON ({e})") from None
        if not isinstance(doc, dict) or doc.get("format") != "lazyarr-plan":
            raise ValueError("not a lazyarr plan (missing format marker)")
        try:
            return cls._from_doc(doc)
        except (KeyError, IndexError, TypeError, AttributeError) as e:
            what = f"missing {e}" if isinstance(e, KeyError) else str(e)
            raise ValueError(f"not a readable lazyarr plan: {what}") from None

    @classmethod
    def _from_doc(cls, doc: dict[str, Any]) -> Plan:
        exprs = exprs_from_json(doc["exprs"])
        stages = {}
        for d in doc["stages"]:
            stages[d["name"]] = Stage(
                name=d["name"],
                expr=exprs[d["expr"]],
                inputs=tuple(d["inputs"]),
                members=tuple(exprs[k] for k in d["members"]),
                input_exprs=tuple(exprs[k] for k in d.get("input_exprs", [])),
                worker=None if d["worker"] is None else np.asarray(d["worker"], dtype=np.int32),
                est_bytes=None
                if d["est_bytes"] is None
                else np.asarray(d["est_bytes"], dtype=np.int64),
                placement=None
                if d.get("placement") is None
                else Placement.from_json(d["placement"]),
                regenerate=bool(d.get("regenerate", False)),
                notes=d["notes"],
            )
        history = tuple(PassRecord(**h) for h in doc["history"])
        return cls(
            stages,
            tuple(doc["outputs"]),
            history,
            doc.get("notes", {}),
            siblings=tuple(tuple(g) for g in doc.get("siblings", ())),
            workers=tuple(doc.get("workers", ())),
            hosts=tuple(doc.get("hosts", ())),
            memory_limit=doc.get("memory_limit"),
            joint=bool(doc.get("joint", False)),
            labels=dict(doc.get("labels", {})),
        )
