"""What each built-in reduction keeps per block: one description for every layer that needs it.

A :class:`ReductionState` lists the arrays of a reduction's partial state (their dtypes,
the value a fold starts from, the NumPy ufunc that joins two states' fields, whether a
field is one number per block) and how the output is made from the joined state. The
NumPy reference kernels (``kernels/reference/reduction.py``) combine and finalize by it,
the Numba folds (``kernels/emit_fold.py``) take their registers and starting values from
it, the compiled partials (``kernels/numba_fused.py``) hand back states in its layout, and
the planners (``optimize/blockreads.py``, through :meth:`ReduceOp.state_itemsize`) size
states by it.

A *monoid* reduction (one field folded by one ufunc from its identity: ``sum``, ``max``,
``any``...) needs nothing else: its reference partial is ``ufunc.reduce`` and its Numba
fold ``a = ufunc(a, v)``. A new one is an entry of :data:`MONOIDS` (and of ``REDUCTIONS``
in :mod:`~lazyarr.graph.ops.reduction`) plus its namespace function.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

__all__ = [
    "MONOIDS",
    "Monoid",
    "ReductionState",
    "StateField",
    "extreme",
    "layout",
    "reduction_state",
]

_INTP = np.dtype(np.intp)


@dataclasses.dataclass(frozen=True)
class StateField:
    """One part of a partial state.

    ``join``: the NumPy ufunc joining this field of two states elementwise (empty
    when the reduction joins its fields together, as Chan's moments do);
    ``per_block``: one Python number per block (a count), not an array shaped
    like the block with its reduced axes of length one.
    """

    name: str
    dtype: np.dtype
    identity: Any
    join: str = ""
    per_block: bool = False


@dataclasses.dataclass(frozen=True)
class ReductionState:
    """The partial state of reduction ``func`` and how its output is made.

    ``finalize``: ``"value"`` (the one field is the output), ``"divide"``
    (total / count), ``"moments"`` (variance from count, mean and M2) or
    ``"index"`` (the second field of (value, index)). ``folds_values``: the
    partial is ``join.reduce`` over the block's values (a monoid), NaN taken as
    the identity where ``skips_nan``.
    """

    func: str
    fields: tuple[StateField, ...]
    finalize: str = "value"
    folds_values: bool = False
    skips_nan: bool = False

    @property
    def pairwise(self) -> str | None:
        """The ufunc joining two whole states, when the state is one array field."""
        if len(self.fields) == 1 and self.fields[0].join:
            return self.fields[0].join
        return None

    def itemsize(self) -> int:
        """Bytes per kept element of one state (per-block numbers not counted)."""
        return sum(f.dtype.itemsize for f in self.fields if not f.per_block)


def extreme(dt: np.dtype, largest: bool) -> Any:
    """The largest (``largest``) or smallest value of ``dt``: min's and max's identities."""
    if dt.kind == "b":
        return largest
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.max if largest else info.min
    if dt.kind in "mM":
        return None  # datetimes run NumPy's kernels, which need no identity
    inf = np.inf if largest else -np.inf
    return complex(inf, inf) if dt.kind == "c" else inf


@dataclasses.dataclass(frozen=True)
class Monoid:
    """A reduction folding values with ``join`` from ``identity``.

    ``acc``: the state's dtype: ``"out"`` the output's (or the ``dtype=`` asked
    for), ``"value"`` the values', ``"bool"``. ``identity``: a number, or
    ``"largest"``/``"smallest"`` of the state's dtype (NaN for floats when
    ``nan_identity``: ``fmin``/``fmax`` skip it). ``skips_nan``: NaN values
    count as the identity (``nansum``).
    """

    join: str
    identity: Any
    acc: str = "out"
    nan_identity: bool = False
    skips_nan: bool = False

    def state(self, func: str, value: np.dtype, out: np.dtype, asked: Any) -> ReductionState:
        if self.acc == "out":
            dt = np.dtype(asked) if asked is not None else out
        else:
            dt = value if self.acc == "value" else np.dtype(bool)
        ident = self.identity
        if ident in ("largest", "smallest"):
            ident = extreme(dt, ident == "largest")
            if self.nan_identity and dt.kind == "f":
                ident = np.nan
        field = StateField("value", dt, ident, self.join)
        return ReductionState(func, (field,), "value", True, self.skips_nan)


MONOIDS: dict[str, Monoid] = {
    "sum": Monoid("add", 0),
    "nansum": Monoid("add", 0, skips_nan=True),
    "prod": Monoid("multiply", 1),
    "nanprod": Monoid("multiply", 1, skips_nan=True),
    "min": Monoid("minimum", "largest", "value"),
    "max": Monoid("maximum", "smallest", "value"),
    "nanmin": Monoid("fmin", "largest", "value", nan_identity=True),
    "nanmax": Monoid("fmax", "smallest", "value", nan_identity=True),
    "any": Monoid("logical_or", False, "bool"),
    "all": Monoid("logical_and", True, "bool"),
}
"""The reductions whose state is one array folded by one ufunc."""


def _float_acc(value: np.dtype, asked: Any) -> np.dtype:
    """Accumulation dtype of mean and variance: the one asked for, else inexact."""
    if asked is not None:
        return np.dtype(asked)
    return value if value.kind in "fc" else np.dtype(np.float64)


def reduction_state(func: str, value: np.dtype, out: np.dtype, asked: Any = None) -> ReductionState:
    """The state of ``func`` over values of dtype ``value`` (output ``out``; ``asked``: the
    ``dtype=`` given, or None)."""
    value, out = np.dtype(value), np.dtype(out)
    monoid = MONOIDS.get(func)
    if monoid is not None:
        return monoid.state(func, value, out, asked)
    if func == "count_nonzero":
        return ReductionState(func, (StateField("count", _INTP, 0, "add"),))
    if func in ("mean", "nanmean"):
        acc = _float_acc(value, asked)
        total = StateField("total", acc, 0, "add")
        count = StateField("count", _INTP, 0, "add", per_block=func == "mean")
        return ReductionState(func, (total, count), "divide")
    if func in ("var", "std"):
        acc = _float_acc(value, asked)
        real = np.dtype(acc.char.lower()) if acc.kind == "c" else acc
        fields = (
            StateField("count", _INTP, 0, per_block=True),
            StateField("mean_hi", acc, 0),
            StateField("mean_lo", acc, 0),
            StateField("m2", real, 0),
        )
        return ReductionState(func, fields, "moments")
    if func in ("argmin", "argmax"):
        fields = (StateField("value", value, 0), StateField("index", _INTP, 0))
        return ReductionState(func, fields, "index")
    raise ValueError(f"unknown reduction {func!r}")


_F8 = np.dtype(np.float64)


def layout(func: str) -> ReductionState:
    """The fields, joins and finalize of ``func``'s state, which no dtype changes (the
    dtypes are float64 stand-ins): what combining two states needs."""
    return reduction_state(func, _F8, _F8)
