"""The Numba kernel set: generated, compiled kernels for elementwise groups and reductions.

Every map or reduce stage whose members are all elementwise (a fused group,
a single elementwise op, or a lone reduction of another stage's output)
gets a generated Numba kernel (:mod:`lazyarr.kernels.numba_fused`), and
the sample sort's counts stage a compiled count
(:mod:`lazyarr.kernels.numba_samplesort`), top-k partials a compiled filter
(:mod:`lazyarr.kernels.numba_topk`); everything else runs the NumPy
reference kernels, as do, by declaration, stages holding datetimes or timedeltas
(:data:`~lazyarr.kernels.emit_ops.NUMPY_KERNEL_KINDS`: NumPy's units and NaT
rules, no warning). A user's reduction (``la.reduction``) gets its fused
elementwise body compiled and its ``chunk`` called on the block the body
makes. :meth:`NumbaKernels.supports`
answers, per op, whether the emitters can compile it, so the ``fuse`` pass
never builds a group that would fall back whole.

Only the errors that mean "cannot be compiled" (:class:`Unsupported`: no
emitter; :class:`CompileError`: Numba does not support what was emitted)
fall back to NumPy, with one :class:`FallbackWarning` per distinct reason
naming the stage's ops (none for the ops that are NumPy-only by design,
``graph.ops.elementwise.NUMPY_ONLY``); any other error is a bug and
propagates. The test configuration makes the warning an error.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from lazyarr._lru import LRU
from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops import Elementwise, Reduce
from lazyarr.graph.ops.elementwise import NUMPY_ONLY
from lazyarr.graph.ops.userreduce import UserReduce
from lazyarr.kernels import numba_random, numba_samplesort, numba_topk
from lazyarr.kernels.compile import CompileError, Options
from lazyarr.kernels.emit import unsupported
from lazyarr.kernels.emit_group import structure_text
from lazyarr.kernels.emit_ops import Unsupported, numpy_kernels_only
from lazyarr.kernels.fused import GetRegion
from lazyarr.kernels.numba_fused import (
    joint_map_function,
    joint_partial_function,
    map_function,
    partial_function,
)
from lazyarr.kernels.reference import kernel_for
from lazyarr.kernels.sets import MapFn, PartialFn, ProductFn, ReferenceKernels, SourceFn

__all__ = ["CANNOT_COMPILE", "FallbackWarning", "NumbaKernels"]

CANNOT_COMPILE = (Unsupported, CompileError)
"""The errors that mean a kernel cannot be generated or compiled (anything else is a bug)."""


class FallbackWarning(UserWarning):
    """A stage runs with the NumPy kernels because its Numba kernel could not be built."""


_SUPPORT: LRU[bool] = LRU(1 << 14)  # op key -> whether the emitters compile it
_WARNED: set[str] = set()


def _warn_once(reason: str, exprs: Sequence[Expr]) -> None:
    """One :class:`FallbackWarning` per distinct ``reason``, naming the ops of ``exprs``."""
    if reason in _WARNED:
        return
    _WARNED.add(reason)
    ops = ", ".join(dict.fromkeys(e.op.label() for e in exprs))
    warnings.warn(
        f"numba executor: a stage of {ops} runs with NumPy kernels instead ({reason})",
        FallbackWarning,
        stacklevel=4,
    )


def _numpy_only(exprs: Sequence[Any]) -> bool:
    """Whether one of ``exprs`` runs with NumPy by design (``graph.ops.elementwise.NUMPY_ONLY``)."""
    return any(isinstance(m.op, Elementwise) and m.op.func in NUMPY_ONLY for m in exprs)


def _all_elementwise(exprs: Sequence[Any]) -> bool:
    return all(isinstance(m.op, Elementwise) for m in exprs)


def _user_partial(stage: Any, body: MapFn) -> PartialFn:
    """The partial of a user's reduction (``la.reduction``) over a compiled body: the body
    block from the Numba kernel, then the user's ``chunk`` on it."""
    expr = stage.expr
    kernel = kernel_for(expr.op)
    in_shape = expr.inputs[0].shape

    def run(region: Region, get: GetRegion) -> Any:
        return kernel.partial(expr.op, expr, body(region, get), region, in_shape)

    return run


def _numpy_by_declaration(stage: Any) -> bool:
    """Whether ``stage`` runs NumPy's kernels by its dtypes' declaration (datetimes)."""
    return numpy_kernels_only((*stage.members, *stage.input_exprs))


class NumbaKernels:
    """A kernel set: compiled kernels where possible, NumPy reference kernels elsewhere.

    ``min_bytes``: stages touching fewer bytes run NumPy kernels (not worth a
    compile). ``fallbacks`` records, per stage name, why it runs with NumPy;
    ``compiled`` the stages that got a kernel; ``joint_refused`` the sibling
    sets whose joint kernel could not be built.
    """

    def __init__(self, options: Options, min_bytes: int = 0) -> None:
        self.options = options
        self.min_bytes = min_bytes
        self.reference = ReferenceKernels()
        self.fallbacks: dict[str, str] = {}
        self.compiled: list[str] = []
        self.joint_refused: dict[str, str] = {}

    @staticmethod
    def supports(expr: Expr) -> bool:
        """Whether the emitters compile ``expr`` (an elementwise op or a reduction)."""
        if isinstance(expr.op, UserReduce):
            return True  # its body compiles; the user's functions run on the block it makes
        if not isinstance(expr.op, (Elementwise, Reduce)):
            return False
        if numpy_kernels_only((expr, *expr.inputs)):
            return False
        return _SUPPORT.get_or_make(expr.key, lambda: unsupported(expr) is None)

    def _fallback(self, stage: Any, error: Exception) -> None:
        """Record why ``stage`` runs NumPy kernels; warn unless its op is NumPy-only by design."""
        reason = f"{type(error).__name__}: {error}"
        self.fallbacks[stage.name] = reason
        if not (isinstance(error, Unsupported) and _numpy_only(stage.members)):
            _warn_once(reason, stage.members)

    def _compiled(self, stage: Any, build: Callable[..., Any], *args: Any) -> Any | None:
        """``build(*args)``, the stage recorded as compiled; None, and why recorded, when it
        cannot be compiled."""
        try:
            fn = build(*args)
        except CANNOT_COMPILE as e:
            self._fallback(stage, e)
            return None
        self.compiled.append(stage.name)
        return fn

    def _small(self, stage: Any) -> bool:
        """Too little data to pay for a compiled kernel (config ``numba.compile-threshold``)."""
        touched = stage.expr.nbytes + sum(e.nbytes for e in stage.input_exprs)
        return touched < self.min_bytes

    def source(self, stage: Any) -> SourceFn:
        return self.generate(stage.expr)

    def generate(self, expr: Expr) -> SourceFn:
        """Regions of the source ``expr``: uniform and integer random draws compiled
        (:mod:`~lazyarr.kernels.numba_random`), others NumPy's."""
        if numba_random.supports(expr) and expr.nbytes >= self.min_bytes:
            try:
                return numba_random.random_source(expr, self.options)
            except CANNOT_COMPILE as e:
                reason = f"{type(e).__name__}: {e}"
                self.fallbacks[expr.key] = reason
                _warn_once(reason, [expr])
        return self.reference.generate(expr)

    def map(self, stage: Any) -> MapFn:
        if _numpy_by_declaration(stage):
            return self.reference.map(stage)
        if numba_samplesort.supports(stage) and not self._small(stage):
            fn = self._compiled(stage, numba_samplesort.counts_map, stage, self.options)
            if fn is not None:
                return fn
        if _all_elementwise(stage.members) and not self._small(stage):
            fn = self._compiled(stage, map_function, stage.members, stage.input_exprs, self.options)
            if fn is not None:
                return fn
        return self.reference.map(stage)

    def partial(self, stage: Any) -> PartialFn:
        if _numpy_by_declaration(stage):
            return self.reference.partial(stage)
        if numba_topk.supports(stage) and not self._small(stage):
            fn = self._compiled(stage, numba_topk.partial_function, stage, self.options)
            if fn is not None:
                return fn
        body = stage.members[:-1]
        if isinstance(stage.expr.op, Reduce) and _all_elementwise(body) and not self._small(stage):
            fn = self._compiled(
                stage, partial_function, body, stage.input_exprs, stage.expr, self.options
            )
            if fn is not None:
                return fn
        user = isinstance(stage.expr.op, UserReduce) and body and _all_elementwise(body)
        if user and not self._small(stage):
            fn = self._compiled(stage, map_function, body, stage.input_exprs, self.options)
            if fn is not None:
                return _user_partial(stage, fn)
        return self.reference.partial(stage)

    def reduction(self, stage: Any) -> Any:
        return self.reference.reduction(stage)

    def product(self, stage: Any) -> ProductFn:
        return self.reference.product(stage)

    def joint(self, stages: Sequence[Any]) -> tuple[Callable, list[str], str, list[str]] | None:
        """One compiled pass computing several sibling stages, or None.

        Siblings (see ``optimize.siblings``) are reductions of the same axes of
        bodies on one block grid, or elementwise stages of one shape and
        chunks. The function maps ``(region, get)`` to the reductions' partial
        states (``"reduce"``: the body's region) or ``(region, get, outs)`` to
        the blocks (``"map"``), in the order of the returned stage names;
        ``get`` takes a position in the returned list of input stage names.
        None when a stage would not get a compiled kernel on its own, or the
        joint kernel cannot be built (each stage then runs its own kernel,
        and ``joint_refused`` says why).
        """
        if len(stages) < 2 or any(self._small(s) or _numpy_by_declaration(s) for s in stages):
            return None
        if all(s.kind == "map" and _all_elementwise(s.members) for s in stages):
            kind = "map"
            grids = {(s.expr.shape, s.expr.chunks) for s in stages}
        elif all(
            s.kind == "reduce"
            and isinstance(s.expr.op, Reduce)
            and _all_elementwise(s.members[:-1])
            for s in stages
        ):
            kind = "reduce"
            grids = {
                (s.expr.inputs[0].shape, s.expr.inputs[0].chunks, s.expr.op.axes) for s in stages
            }
        else:
            return None
        if len(grids) != 1:
            return None
        # parts in an order of their structure, not of node names: the same source text
        # (and the kernel compiled on disk) in every process
        stages = sorted(stages, key=lambda s: structure_text(s.members[:-1], s.expr))
        inputs: dict[str, Expr] = {}
        for s in stages:
            for name, e in zip(s.inputs, s.input_exprs):
                inputs.setdefault(name, e)
        try:
            if kind == "map":
                parts = [s.members for s in stages]
                fn = joint_map_function(parts, list(inputs.values()), self.options)
            else:
                bodies = [(s.members[:-1], s.expr) for s in stages]
                fn = joint_partial_function(bodies, list(inputs.values()), self.options)
        except CANNOT_COMPILE as e:  # the stages run apart
            self.joint_refused[" ".join(s.name for s in stages)] = f"{type(e).__name__}: {e}"
            return None
        self.compiled.extend(s.name for s in stages)
        return fn, list(inputs), kind, [s.name for s in stages]
