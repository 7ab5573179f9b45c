"""NumPy's shape helpers built from existing lazy ops: rot90, pad, split, insert, delete, diag.

Nothing here adds a graph op. Positions along an axis are worked out with
NumPy on small index arrays at expression time (``np.pad(np.arange(n))``,
``np.delete(np.arange(n), obj)``), so edge cases and errors are NumPy's own,
and the data moves with ``getitem``, ``concat``, ``flip`` and ``transpose``.
An ``obj``/``indices`` argument that is itself a lazy array is computed
when called (it decides the result's shape).

``linspace_nd`` (NumPy's ``linspace`` for lazy or array endpoints) lives
here for ``pad(mode="linear_ramp")`` and is reused by ``logspace`` and
``geomspace`` (:mod:`lazyarr.namespace.spacing`).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, lazy, wrap
from lazyarr.graph.ops import manipulation as m
from lazyarr.graph.ops._common import normalize_axis
from lazyarr.namespace._register import implements
from lazyarr.namespace.composing import computed, concat, take, take_positions, with_len
from lazyarr.namespace.creation import arange, eye, full
from lazyarr.namespace.elementwise import where
from lazyarr.namespace.linalg import diagonal
from lazyarr.namespace.quantiles import median
from lazyarr.namespace.reductions import max as amax
from lazyarr.namespace.reductions import mean
from lazyarr.namespace.reductions import min as amin

__all__ = [
    "append",
    "array_split",
    "delete",
    "diag",
    "diagflat",
    "dsplit",
    "hsplit",
    "insert",
    "pad",
    "rot90",
    "split",
    "vsplit",
]


# -- rot90 ----------------------------------------------------------------------------------


@implements("rot90")
def rot90(m_: Any, k: int = 1, axes: Any = (0, 1)) -> LazyArray:
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes`` (NumPy's steps)."""
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    x = lazy(m_)
    nd = x.ndim
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    if not all(-nd <= a < nd for a in axes):
        raise ValueError(f"Axes={axes} out of range for array of ndim={nd}.")
    k = operator.index(k) % 4
    e = x._expr
    if k == 0:
        return wrap(e)
    if k == 2:
        return wrap(m.flip(m.flip(e, axes[0]), axes[1]))
    perm = list(range(nd))
    perm[axes[0]], perm[axes[1]] = perm[axes[1]], perm[axes[0]]
    if k == 1:
        return wrap(m.permute_dims(m.flip(e, axes[1]), perm))
    return wrap(m.flip(m.permute_dims(e, perm), axes[1]))


# -- pad ------------------------------------------------------------------------------------

_PAD_KWARGS = {
    "empty": (),
    "edge": (),
    "wrap": (),
    "constant": ("constant_values",),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "minimum": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def _as_pairs(x: Any, ndim: int, as_index: bool = False) -> list[tuple[Any, Any]]:
    """NumPy's ``np.pad`` argument broadcasting: one (before, after) pair per axis."""
    if x is None:
        return [(None, None)] * ndim
    x = np.array(computed(x) if isinstance(x, LazyArray) else x)
    if as_index:
        x = np.round(x).astype(np.intp, copy=False)
    if x.ndim < 3:
        if x.size == 1:
            x = x.ravel()
            if as_index and x < 0:
                raise ValueError("index can't contain negative values")
            return [(x[0], x[0])] * ndim
        if x.size == 2 and x.shape != (2, 1):
            x = x.ravel()
            if as_index and (x[0] < 0 or x[1] < 0):
                raise ValueError("index can't contain negative values")
            return [(x[0], x[1])] * ndim
    if as_index and x.min() < 0:
        raise ValueError("index can't contain negative values")
    return [tuple(p) for p in np.broadcast_to(x, (ndim, 2)).tolist()]


def _pad_width(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    if isinstance(pad_width, dict):
        seq: list[Any] = [(0, 0)] * ndim
        for axis, width in pad_width.items():
            seq[axis] = (width, width) if isinstance(width, int) else tuple(width)
        pad_width = seq
    pw = np.asarray(pad_width)
    if pw.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    return [(int(b), int(a)) for b, a in _as_pairs(pw, ndim, as_index=True)]


def _fill(x: LazyArray, axis: int, width: int, value: Any) -> LazyArray | None:
    """A block of ``width`` copies of the scalar ``value`` along ``axis`` (x's dtype)."""
    if width == 0:
        return None
    value = np.array(value).astype(x.dtype)[()]
    return full(with_len(x.shape, axis, width), value, dtype=x.dtype)


def _broadcast_along(stat: LazyArray, x: LazyArray, axis: int, width: int) -> LazyArray | None:
    if width == 0:
        return None
    if stat.dtype != x.dtype:
        stat = stat.astype(x.dtype)
    return wrap(m.broadcast_to(stat._expr, with_len(x.shape, axis, width)))


def _odd_reflect(x: LazyArray, axis: int, width: tuple[int, int], mode: str) -> LazyArray:
    """``reflect_type='odd'``: each padded value is a fixed combination of inputs.

    The combination is found by padding an identity matrix with NumPy: for
    numbers, integer coefficients of a sum of gathered copies of ``x``; for
    booleans (where NumPy's ``2 * edge - x`` stored as bool is ``edge | x``),
    the set of inputs to OR together.
    """
    n = x.shape[axis]
    boolean = x.dtype.kind == "b"
    eye = np.eye(n, dtype=bool if boolean else np.int64)
    coef = np.pad(eye, (width, (0, 0)), mode, reflect_type="odd")
    terms = int(np.max(np.count_nonzero(coef, axis=1)))
    order = np.argsort(coef == 0, axis=1, kind="stable")[:, :terms]  # non-zero columns first
    shape = [1] * x.ndim
    shape[axis] = coef.shape[0]
    total: Any = None
    for t in range(terms):
        c = np.take_along_axis(coef, order[:, t : t + 1], axis=1)[:, 0]
        weight = lazy(c.astype(x.dtype).reshape(shape))
        gathered = take(x, order[:, t], axis)
        term = (gathered & weight) if boolean else gathered * weight
        total = term if total is None else (total | term if boolean else total + term)
    return total.astype(x.dtype) if total.dtype != x.dtype else total


def _stat_pad(
    x: LazyArray, axis: int, width: tuple[int, int], length: tuple[Any, Any], mode: str
) -> list[LazyArray | None]:
    func = {"maximum": amax, "minimum": amin, "mean": mean, "median": median}[mode]
    n = x.shape[axis]
    lengths = [n if (ln is None or n < ln) else int(ln) for ln in length]
    if 0 in lengths and mode in ("maximum", "minimum"):
        raise ValueError("stat_length of 0 yields no value for padding")
    stats = []
    for side, ln in enumerate(lengths):
        region = slice(0, ln) if side == 0 else slice(n - ln, n)
        stat = func(take(x, region, axis), axis=axis, keepdims=True)
        if x.dtype.kind in "iu" and stat.dtype.kind in "fc":
            stat = np.round(stat)
        stats.append(stat)
    return [_broadcast_along(s, x, axis, w) for s, w in zip(stats, width)]


def _dummy(v: Any) -> Any:
    """A stand-in with ``v``'s dtype for NumPy's dtype rules (Python scalars stay weak)."""
    return np.zeros((), v.dtype) if isinstance(v, LazyArray) else v


def linspace_nd(
    start: Any, stop: Any, num: int, endpoint: bool = True, dtype: Any = None, axis: int = 0
) -> LazyArray:
    """NumPy's ``linspace`` for array or lazy endpoints: samples along a new ``axis``.

    The same steps as NumPy (``arange * step + start``, the last sample set
    to ``stop``, floor for integer dtypes).
    """
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    dt = np.linspace(_dummy(start), _dummy(stop), 0).dtype
    out_dtype = dt if dtype is None else np.dtype(dtype)
    lo, hi = lazy(start).astype(dt), lazy(stop).astype(dt)
    delta = hi - lo
    y = arange(num, dtype=dt).reshape((-1,) + (1,) * delta.ndim)
    if div > 0:
        step = delta / div
        y = where(step == 0, y / div * delta, y * step)
    else:
        y = y * delta
    y = y + lo
    if endpoint and num > 1:
        last = wrap(m.broadcast_to(hi._expr, y.shape[1:])).reshape((1, *y.shape[1:]))
        y = concat([take(y, slice(0, num - 1), 0), last], 0)
    if axis != 0:
        y = wrap(m.moveaxis(y._expr, 0, axis))
    if out_dtype.kind in "iu":
        y = np.floor(y)
    return y.astype(out_dtype) if y.dtype != out_dtype else y


def _ramp_pad(
    x: LazyArray, axis: int, width: tuple[int, int], ends: tuple[Any, Any]
) -> list[LazyArray | None]:
    n = x.shape[axis]
    out: list[LazyArray | None] = []
    for side, (w, end) in enumerate(zip(width, ends)):
        if w == 0:
            out.append(None)
            continue
        edge = take(x, 0 if side == 0 else n - 1, axis)
        ramp = linspace_nd(end, edge, w, endpoint=False, dtype=x.dtype, axis=axis)
        out.append(ramp if side == 0 else wrap(m.flip(ramp._expr, axis)))
    return out


@implements("pad")
def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> LazyArray:
    """``array`` padded along each axis (NumPy's modes, except a callable ``mode``).

    Axes are padded one after another, as NumPy does, so corner values come
    out the same. Index-based modes (edge, wrap, reflect, symmetric) gather
    with positions computed by ``np.pad`` on ``arange(n)``; ``'empty'``
    pads with zeros (NumPy leaves the values unspecified).
    """
    x = lazy(array)
    widths = _pad_width(pad_width, x.ndim)
    if callable(mode):
        raise NotImplementedError("lazyarr.pad does not support a callable mode")
    if mode not in _PAD_KWARGS:
        raise ValueError(f"mode '{mode}' is not supported")
    unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if mode not in ("constant", "empty") and x.size == 0:
        for axis, pair in enumerate(widths):
            if x.shape[axis] == 0 and any(pair):
                raise ValueError(
                    f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
                )
        final = tuple(n + b + a for n, (b, a) in zip(x.shape, widths))
        return full(final, 0, dtype=x.dtype)
    values = _as_pairs(kwargs.get("constant_values", 0), x.ndim)
    ends = _as_pairs(kwargs.get("end_values", 0), x.ndim)
    stat_lengths = _as_pairs(kwargs.get("stat_length"), x.ndim, as_index=True)
    reflect_type = kwargs.get("reflect_type", "even")
    for axis, (before, after) in enumerate(widths):
        if before == 0 and after == 0:
            continue
        if mode in ("constant", "empty"):
            v = (0, 0) if mode == "empty" else values[axis]
            x = concat([_fill(x, axis, before, v[0]), x, _fill(x, axis, after, v[1])], axis)
        elif mode in ("maximum", "minimum", "mean", "median"):
            left, right = _stat_pad(x, axis, (before, after), stat_lengths[axis], mode)
            x = concat([left, x, right], axis)
        elif mode == "linear_ramp":
            left, right = _ramp_pad(x, axis, (before, after), ends[axis])
            x = concat([left, x, right], axis)
        elif mode in ("reflect", "symmetric") and reflect_type == "odd" and x.shape[axis] > 1:
            x = _odd_reflect(x, axis, (before, after), mode)
        else:
            extra = {"reflect_type": reflect_type} if mode in ("reflect", "symmetric") else {}
            positions = np.pad(np.arange(x.shape[axis]), (before, after), mode, **extra)
            x = _gather_runs(x, positions, axis)
    return x


def _gather_runs(x: LazyArray, positions: np.ndarray, axis: int) -> LazyArray:
    """``x`` at ``positions`` along ``axis``: the original run as a slice, pads by index."""
    n = x.shape[axis]
    hits = np.flatnonzero(positions == 0)
    for start in hits:
        if start + n <= positions.size and np.array_equal(
            positions[start : start + n], np.arange(n)
        ):
            parts = [
                take_positions(x, positions[:start], axis) if start else None,
                x,
                take_positions(x, positions[start + n :], axis)
                if start + n < positions.size
                else None,
            ]
            return concat(parts, axis)
    return take_positions(x, positions, axis)


# -- split ----------------------------------------------------------------------------------


@implements("array_split")
def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[LazyArray]:
    """``ary`` split into sections along ``axis`` (sections may differ in size by one)."""
    x = lazy(ary)
    ax = normalize_axis(axis, x.ndim, "array_split")
    n = x.shape[ax]
    if isinstance(indices_or_sections, LazyArray):
        indices_or_sections = computed(indices_or_sections)
    try:
        count = len(indices_or_sections) + 1
        points = [0, *list(indices_or_sections), n]
    except TypeError:
        count = int(indices_or_sections)
        if count <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(n, count)
        sizes = [0] + extras * [each + 1] + (count - extras) * [each]
        points = np.array(sizes, dtype=np.intp).cumsum().tolist()
    return [take(x, slice(points[i], points[i + 1]), ax) for i in range(count)]


@implements("split")
def split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[LazyArray]:
    """``ary`` split into equal sections (or at the given indices) along ``axis``."""
    x = lazy(ary)
    try:
        len(indices_or_sections)
    except TypeError:
        n = x.shape[normalize_axis(axis, x.ndim, "split")]
        if n % indices_or_sections:
            raise ValueError("array split does not result in an equal division") from None
    return array_split(x, indices_or_sections, axis)


@implements("hsplit")
def hsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """Split along axis 1 (axis 0 for 1-d input)."""
    x = lazy(ary)
    if x.ndim == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(x, indices_or_sections, 1 if x.ndim > 1 else 0)


@implements("vsplit")
def vsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """Split along axis 0 (input must be at least 2-d)."""
    x = lazy(ary)
    if x.ndim < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(x, indices_or_sections, 0)


@implements("dsplit")
def dsplit(ary: Any, indices_or_sections: Any) -> list[LazyArray]:
    """Split along axis 2 (input must be at least 3-d)."""
    x = lazy(ary)
    if x.ndim < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(x, indices_or_sections, 2)


# -- append / insert / delete ------------------------------------------------------------


def _flat_axis(x: LazyArray, axis: Any, name: str) -> tuple[LazyArray, int]:
    if axis is None:
        return (x if x.ndim == 1 else x.reshape(-1)), 0
    return x, normalize_axis(axis, x.ndim, name)


@implements("append")
def append(arr: Any, values: Any, axis: int | None = None) -> LazyArray:
    """``values`` joined to the end of ``arr`` (both flattened when ``axis`` is None)."""
    x, v = lazy(arr), lazy(values)
    if axis is None:
        x = x if x.ndim == 1 else x.reshape(-1)
        v = v.reshape(-1)
        axis = x.ndim - 1
    return wrap(m.concat([x._expr, v._expr], axis))


def _static_obj(obj: Any) -> Any:
    return computed(obj) if isinstance(obj, LazyArray) else obj


@implements("delete")
def delete(arr: Any, obj: Any, axis: int | None = None) -> LazyArray:
    """``arr`` without the entries ``obj`` (int, slice, int or bool array) along ``axis``.

    The kept positions come from ``np.delete(np.arange(n), obj)``, so the
    index rules and errors are NumPy's. A lazy ``obj`` is computed when called.
    """
    x, ax = _flat_axis(lazy(arr), axis, "delete")
    keep = np.delete(np.arange(x.shape[ax]), _static_obj(obj))
    return take_positions(x, keep, ax)


def _insert_indices(obj: Any, n: int) -> np.ndarray:
    if isinstance(obj, slice):
        return np.arange(*obj.indices(n), dtype=np.intp)
    indices = np.array(obj)
    if indices.dtype == bool:
        if indices.ndim != 1:
            raise ValueError("boolean array argument obj to insert must be one dimensional")
        return np.flatnonzero(indices)
    if indices.ndim > 1:
        raise ValueError("index array argument obj to insert must be one dimensional or scalar")
    return indices


@implements("insert")
def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> LazyArray:
    """``values`` inserted before the positions ``obj`` along ``axis`` (NumPy's rules).

    Values are cast to ``arr``'s dtype. A scalar ``obj`` inserts a block
    (``values`` broadcast against ``arr``'s other axes); an index array
    inserts one slice per index. A lazy ``obj`` is computed when called.
    """
    x, ax = _flat_axis(lazy(arr), axis, "insert")
    obj = _static_obj(obj)
    n = x.shape[ax]
    indices = _insert_indices(obj, n)
    v = lazy(values)
    if v.dtype != x.dtype:
        v = v.astype(x.dtype)
    if indices.size == 1:
        index = indices.item()
        if index < -n or index > n:
            raise IndexError(f"index {obj} is out of bounds for axis {ax} with size {n}")
        index = index + n if index < 0 else index
        if v.ndim < x.ndim:
            v = v.reshape((1,) * (x.ndim - v.ndim) + v.shape)
        if indices.ndim == 0:
            v = wrap(m.moveaxis(v._expr, 0, ax))
        block = wrap(m.broadcast_to(v._expr, with_len(x.shape, ax, v.shape[ax])))
        head = take(x, slice(0, index), ax)
        tail = take(x, slice(index, n), ax)
        return concat([head, block, tail], ax)
    if indices.size == 0 and not isinstance(obj, np.ndarray):
        indices = indices.astype(np.intp)
    indices = indices.astype(np.intp, copy=True)
    indices[indices < 0] += n
    numnew = len(indices)
    order = indices.argsort(kind="mergesort")
    indices[order] += np.arange(numnew)
    total = n + numnew
    old = np.ones(total, dtype=bool)
    old[indices] = False
    source = np.empty(total, dtype=np.intp)
    source[old] = np.arange(n)
    source[indices] = n + np.arange(numnew)
    block = wrap(m.broadcast_to(v._expr, with_len(x.shape, ax, numnew)))
    return take_positions(concat([x, block], ax), source, ax)


# -- diag / diagflat ------------------------------------------------------------------------


def _diag_from_vector(v: LazyArray, k: int) -> LazyArray:
    """The square matrix with ``v`` on its ``k``-th diagonal and zeros elsewhere."""
    s = v.shape[0]
    n = s + abs(k)
    padded = concat([v, full((abs(k),), 0, dtype=v.dtype)], 0) if k else v
    line = padded.reshape(n, 1) if k >= 0 else padded.reshape(1, n)
    mask = eye(n, n, k=k, dtype=bool)
    zero = full((), 0, dtype=v.dtype)
    return where(mask, line, zero)


@implements("diag")
def diag(v: Any, k: int = 0) -> LazyArray:
    """The ``k``-th diagonal of a 2-d ``v``, or a 2-d array with the 1-d ``v`` on it."""
    x = lazy(v)
    k = operator.index(k)
    if x.ndim == 1:
        return _diag_from_vector(x, k)
    if x.ndim == 2:
        return diagonal(x, k)
    raise ValueError("Input must be 1- or 2-d.")


@implements("diagflat")
def diagflat(v: Any, k: int = 0) -> LazyArray:
    """A 2-d array with the flattened ``v`` on its ``k``-th diagonal."""
    x = lazy(v)
    return _diag_from_vector(x if x.ndim == 1 else x.reshape(-1), operator.index(k))
