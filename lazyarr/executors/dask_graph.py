"""One compute of the ``dask`` executor as one Dask graph, sent in one message.

``client.submit`` per task costs a scheduler message and client CPU for
each block; a :class:`DaskGraph` collects the run's tasks instead and hands
them to the scheduler at once (``Client.get`` on a ``HighLevelGraph``, one
``update-graph`` message).

Worker restrictions are per task, and Dask applies annotations per layer
of a ``HighLevelGraph`` (the scheduler spreads a layer's annotations over
its keys): the tasks are grouped into one layer per restriction, each
``(worker address, others allowed)``, annotated ``{"workers":
[address]}`` plus ``"allow_other_workers": True`` when others may take
over, like ``client.submit(..., workers=[address], allow_other_workers=...)``;
tasks without a worker go to an unannotated layer. Priorities differ from
task to task (a depth-first order gives each its own): a layer whose tasks
have them is annotated ``{"priority": f}``, where ``f`` is a
:class:`KeyPriorities`, which the scheduler calls with each key of the layer
(Dask runs the ready tasks of a higher priority first; a key without one
keeps Dask's own order).

Arguments that are futures (blocks scattered or persisted earlier) become
references (``TaskRef``) to their keys, which the scheduler already holds:
the graph keeps each future alive until the graph is sent, after which
the scheduler keeps the data for the tasks that read it. A key the
scheduler has lost by then cancels the whole graph (its futures end
``cancelled``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import dask
from dask.highlevelgraph import HighLevelGraph, MaterializedLayer
from dask.task_spec import Task, TaskRef
from distributed import Client, Future

__all__ = ["DaskGraph", "KeyPriorities"]

Group = tuple[str | None, bool]
"""A layer's restriction: (worker address or None, whether other workers may run it)."""


class KeyPriorities:
    """A layer's ``priority`` annotation: each key's priority (None for a key without one, so
    the scheduler annotates only the keys that have one)."""

    def __init__(self, priorities: dict[str, int]) -> None:
        self.priorities = priorities

    def __call__(self, key: str) -> int | None:
        return self.priorities.get(key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyPriorities) and other.priorities == self.priorities

    __hash__ = None  # type: ignore[assignment]


class DaskGraph:
    """The tasks of one run, grouped by worker restriction, sent with :meth:`send`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._layers: dict[Group, dict[str, Task]] = {}
        self._group_of: dict[str, Group] = {}
        self._priority: dict[Group, dict[str, int]] = {}
        self._futures: dict[str, Future] = {}  # inputs from earlier: alive until sent

    def __len__(self) -> int:
        return len(self._group_of)

    def __contains__(self, key: object) -> bool:
        return key in self._group_of

    def add(
        self,
        key: str,
        fn: Callable[..., Any],
        *args: Any,
        worker: str | None,
        loose: bool,
        priority: int = 0,
    ) -> TaskRef:
        """Task ``key`` = ``fn(*args)``, on ``worker`` (None: anywhere); a reference to it.

        ``loose``: other workers may run it too (ignored without a worker).
        ``priority``: Dask's (higher runs first among ready tasks; 0 by default).
        Arguments that are futures or references (not inside other
        arguments) become dependencies.
        """
        if key in self._group_of:
            raise ValueError(f"task {key!r} is already in the graph")
        group = (worker, bool(loose)) if worker else (None, False)
        self._layers.setdefault(group, {})[key] = Task(key, fn, *map(self._ref, args))
        self._group_of[key] = group
        if priority:
            self._priority.setdefault(group, {})[key] = priority
        return TaskRef(key)

    def inline(self, fn: Callable[..., Any], *args: Any) -> Task:
        """``fn(*args)`` as a task without a key of its own, to pass as an argument of one
        other task: the scheduler sees only that task, which computes this one first (its
        dependencies become the outer task's), and its value is never stored."""
        return Task(None, fn, *map(self._ref, args))

    def _ref(self, arg: Any) -> Any:
        if isinstance(arg, Future):  # a ``TaskRef`` too; sent as a plain reference
            self._futures[arg.key] = arg
            return TaskRef(arg.key)
        return arg

    def high_level_graph(self) -> HighLevelGraph:
        """One layer per restriction, annotated; layer dependencies from the tasks' arguments."""
        names = {g: self._layer_name(g) for g in self._layers}
        layers = {}
        deps: dict[str, set[str]] = {}
        for group, tasks in self._layers.items():
            name = names[group]
            worker, loose = group
            annotations: dict[str, Any] = {}
            if worker is not None:
                annotations["workers"] = [worker]
                if loose:
                    annotations["allow_other_workers"] = True
            if group in self._priority:
                annotations["priority"] = KeyPriorities(self._priority[group])
            layers[name] = MaterializedLayer(tasks, annotations=annotations or None)
            deps[name] = {
                names[self._group_of[d]]
                for t in tasks.values()
                for d in t.dependencies
                if d in self._group_of and self._group_of[d] != group
            }
        return HighLevelGraph(layers, deps)

    def _layer_name(self, group: Group) -> str:
        worker, loose = group
        where = "any" if worker is None else f"{worker}-{'soft' if loose else 'hard'}"
        return f"{self.name}-{where}"

    def send(self, client: Client, keys: Sequence[str]) -> dict[str, Future]:
        """Send the graph in one message; futures of ``keys`` (tasks of this graph).

        Tasks that no key depends on are not run. The futures given as
        arguments are released here (the scheduler now holds them for
        their readers).
        """
        missing = [k for k in keys if k not in self._group_of]
        if missing:
            raise KeyError(f"not tasks of this graph: {missing[:3]}")
        if not keys:
            self._futures.clear()
            return {}
        keys = list(keys)
        # one graph per compute is the design (one message, not one per task), and user data
        # is scattered, not embedded: Dask's big-graph advice ("load the data with Dask
        # directly") does not apply to a compute of many small blocks
        with dask.config.set({"distributed.admin.large-graph-warning-threshold": "1PiB"}):
            futures = client.get(self.high_level_graph(), keys, sync=False)
        self._futures.clear()
        return dict(zip(keys, futures))
