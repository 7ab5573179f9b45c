"""User functions applied per block: ``map_blocks``, ``blockwise``, ``apply_gufunc``, and
user ufuncs that fuse like built-in elementwise ops.

Two op types:

* :class:`BlockFunc` calls a Python function once per output block with the
  aligned blocks of its array arguments (dask's ``blockwise``: every input
  axis carries an index label; a label of the output picks the block with
  the output block's position along it, a label missing from the output is
  contracted and read whole). The function may change block sizes: its block
  rule works on block *positions*, never on global coordinates, so a block
  is always computed whole.
* :class:`UserElementwise` is an :class:`~lazyarr.graph.ops.elementwise.Elementwise`
  op whose function is the user's (a ``numba.vectorize`` ufunc or an
  ``@numba.njit`` scalar function): every rule of elementwise ops applies to
  it (fusion, slice pushdown, broadcasting), and the Numba kernel set calls
  the compiled function from inside its generated loop.

The user's function and its constant arguments travel in
:class:`UserFunc` and :class:`Params`, compared and keyed by a token. A
function's token is unique to the function object in this process (two
definitions with one name never share compiled kernels).
"""

from __future__ import annotations

import bisect
import dataclasses
import inspect
import itertools
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.chunks import Chunks, broadcast_chunks, offsets
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops._common import broadcast_shape, is_scalar
from lazyarr.graph.ops.elementwise import Elementwise
from lazyarr.graph.ops.rechunk import rechunk
from lazyarr.graph.token import HOLE, ByToken, Hole, canonical

__all__ = [
    "BlockFunc",
    "Params",
    "UserElementwise",
    "UserFunc",
    "block_index",
    "blockwise",
    "common_chunks",
    "numba_kind",
    "user_elementwise",
    "user_func",
]


# ----------------------------------------------------------------- the function and its params


def numba_kind(fn: Any) -> str | None:
    """``"vectorize"`` for a Numba ufunc, ``"njit"`` for a Numba dispatcher, else None.

    Told by duck typing: the graph layer never imports Numba.
    """
    module = type(fn).__module__ or ""
    if not module.startswith("numba"):
        return None
    if hasattr(fn, "ufunc") and hasattr(fn, "nin") and hasattr(fn, "types"):
        # a guvectorize gufunc has core dimensions: it is not elementwise
        return "vectorize" if getattr(fn.ufunc, "signature", None) is None else None
    if hasattr(fn, "py_func") and hasattr(fn, "overloads"):
        return "njit"
    return None


class UserFunc(ByToken):
    """A user's callable, compared and keyed by a token unique to the object."""

    __slots__ = ("fn", "label", "token")

    def __init__(self, fn: Callable[..., Any], token: str, label: str) -> None:
        self.fn = fn
        self.token = token
        self.label = label

    @property
    def kind(self) -> str | None:
        """``"vectorize"``/``"njit"`` for Numba functions (see :func:`numba_kind`), else None."""
        return numba_kind(self.fn)

    def __reduce__(self) -> tuple:
        return (UserFunc, (self.fn, self.token, self.label))

    def __repr__(self) -> str:
        return f"UserFunc({self.label})"


class _Tokens:
    """Tokens of user functions: one per live function object, never reused in a process."""

    def __init__(self) -> None:
        self._weak: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._strong: dict[int, tuple[Any, str]] = {}
        self._run = uuid.uuid4().hex[:12]
        self._count = itertools.count()

    def token(self, fn: Any, label: str) -> str:
        try:
            found = self._weak.get(fn)
        except TypeError:  # not weak-referenceable (or unhashable): keep it alive instead
            held = self._strong.get(id(fn))
            if held is not None:
                return held[1]
            token = self._new(label)
            self._strong[id(fn)] = (fn, token)
            return token
        if found is None:
            found = self._weak[fn] = self._new(label)
        return found

    def _new(self, label: str) -> str:
        return f"{label}-{self._run}-{next(self._count)}"


_TOKENS = _Tokens()


def _label(fn: Any) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def user_func(fn: Any) -> UserFunc:
    """``fn`` wrapped for an op (``TypeError`` if it is not callable)."""
    if isinstance(fn, UserFunc):
        return fn
    if not callable(fn):
        raise TypeError(f"'{type(fn).__name__}' object is not callable")
    label = _label(fn)
    return UserFunc(fn, _TOKENS.token(fn, label), label)


class Params(ByToken):
    """Constant positional and keyword arguments of a user function.

    Keyed by their canonical text when they have one (equal calls share a
    key), else by a fresh token.
    """

    __slots__ = ("args", "kwargs", "token")

    def __init__(self, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None) -> None:
        self.args = tuple(args)
        self.kwargs = dict(kwargs or {})
        try:
            self.token = canonical((self.args, tuple(sorted(self.kwargs.items()))))
        except TypeError:
            self.token = uuid.uuid4().hex

    def __reduce__(self) -> tuple:
        return (_params, (self.args, self.kwargs, self.token))


def _params(args: tuple, kwargs: dict, token: str) -> Params:
    p = Params.__new__(Params)
    p.args, p.kwargs, p.token = args, kwargs, token
    return p


def accepts(fn: Any, name: str) -> bool:
    """Whether ``fn`` takes a keyword argument ``name`` (dask's ``has_keyword``)."""
    target = getattr(fn, "py_func", fn)
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False
    return name in params


# ----------------------------------------------------------------- blocks by position


def block_index(chunks: Chunks, region: Region, op: str) -> tuple[int, ...]:
    """The index of the block ``region`` is; ``ValueError`` when it is not exactly one block.

    An empty region is the first empty block at its offset (empty blocks at one
    offset have the same inputs' regions up to empty ones, so any would do).
    """
    index = []
    for blocks, s in zip(chunks, region):
        o = offsets(blocks)
        if s.start == s.stop:
            b = bisect.bisect_left(o, s.start)
        else:
            b = bisect.bisect_right(o, s.start) - 1
        if len(blocks) == 1 and s.start == 0 and s.stop == o[-1]:
            b = 0
        elif b >= len(blocks) or o[b] != s.start or o[b + 1] != s.stop:
            raise ValueError(f"{op}: region {region} is not one block of chunks {chunks}")
        index.append(b)
    return tuple(index)


def _block_slice(blocks: tuple[int, ...], b: int) -> slice:
    o = offsets(blocks)
    return slice(o[b], o[b + 1])


@dataclasses.dataclass(frozen=True)
class BlockFunc(MapOp):
    """``fn`` called per output block with the aligned blocks of its inputs (dask's blockwise).

    ``out_ind``: the index label of each output axis; ``in_inds``: per
    argument position, the labels of an array's axes, or None for a constant
    (taken from ``params.args`` in order). ``concatenate``: contracted labels
    arrive as one array (else as lists of blocks). ``block_info``/``block_id``:
    pass dask's keyword of that name. ``output``: the item of a tuple result
    this op keeps (-1: the result itself). ``whole``: argument positions of
    arrays every call gets whole (as one array, whatever ``concatenate``).
    """

    name = "map_blocks"
    fn: UserFunc | None = None
    out_ind: tuple[int, ...] = ()
    in_inds: tuple[tuple[int, ...] | None, ...] = ()
    params: Params | None = None
    concatenate: bool = True
    block_info: bool = False
    block_id: bool = False
    output: int = -1
    whole: tuple[int, ...] = ()

    def label(self) -> str:
        return self.fn.label if self.fn is not None else self.name

    def input_inds(self) -> list[tuple[int, ...]]:
        """The labels of each input expression (the array positions, in order)."""
        return [ind for ind in self.in_inds if ind is not None]

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        index = block_index(expr.chunks, out, self.label())
        return self.regions_of(expr, index)

    def regions_of(self, expr: Expr, index: Sequence[int]) -> tuple[Region, ...]:
        """Each input's region for output block ``index``."""
        where = {lab: a for a, lab in enumerate(self.out_ind)}
        result = []
        for inp, ind in zip(expr.inputs, self.input_inds()):
            region = []
            for ax, lab in enumerate(ind):
                n = inp.shape[ax]
                a = where.get(lab)
                if a is None or len(inp.chunks[ax]) == 1:
                    region.append(slice(0, n))
                else:
                    region.append(_block_slice(inp.chunks[ax], index[a]))
            result.append(tuple(region))
        return tuple(result)


def _adjusted(label: int, chunks: tuple[int, ...], adjust: Any, op: str) -> tuple[int, ...]:
    if callable(adjust):
        return tuple(int(adjust(c)) for c in chunks)
    if isinstance(adjust, (int, np.integer)) and not isinstance(adjust, bool):
        return (int(adjust),) * len(chunks)
    new = tuple(int(c) for c in adjust)
    if len(new) != len(chunks):
        raise ValueError(
            f"{op}: dimension {label} has {len(chunks)} blocks, adjust_chunks specified with "
            f"{len(new)} blocks"
        )
    return new


def common_chunks(lists: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """The common refinement of several chunkings of one length."""
    cuts: set[int] = set()
    for c in lists:
        cuts.update(offsets(c))
    edges = sorted(cuts)
    return tuple(b - a for a, b in itertools.pairwise(edges)) or lists[0]


def blockwise(
    fn: UserFunc,
    out_ind: Sequence[int],
    args: Sequence[tuple[Any, tuple[int, ...] | None]],
    dtype: Any,
    *,
    kwargs: Mapping[str, Any] | None = None,
    new_axes: Mapping[int, Any] | None = None,
    adjust_chunks: Mapping[int, Any] | None = None,
    concatenate: bool = True,
    output: int = -1,
    whole: Sequence[int] = (),
    op: str = "blockwise",
) -> Expr:
    """``fn`` applied per block of ``args`` (``(Expr, labels)`` or ``(constant, None)``).

    Labels of the output found in the inputs take their chunks from the
    inputs (inputs whose chunks along a label differ are rechunked to the
    common refinement; a length-1 axis broadcasts); ``new_axes`` gives the
    length (or chunks) of labels only the output has; ``adjust_chunks``
    replaces an output label's chunks (a callable per chunk, an int for
    every chunk, or the chunks).
    """
    out_ind = tuple(out_ind)
    if len(set(out_ind)) != len(out_ind):
        raise ValueError(f"{op}: repeated index {out_ind} in the output")
    new_axes = dict(new_axes or {})
    adjust_chunks = dict(adjust_chunks or {})
    sizes: dict[int, int] = {}
    per_label: dict[int, list[tuple[int, int]]] = {}  # label -> (arg, axis) of non-1 lengths
    arrays = []
    for pos, (a, ind) in enumerate(args):
        if ind is None:
            continue
        if not isinstance(a, Expr):
            raise TypeError(f"{op}: argument {pos} has an index but is not an array")
        ind = tuple(ind)
        if len(ind) != a.ndim:
            raise ValueError(
                f"{op}: index string {ind} does not match array dimension {a.ndim} (argument "
                f"{pos}, shape {a.shape})"
            )
        arrays.append(pos)
        for ax, lab in enumerate(ind):
            n = a.shape[ax]
            if n == 1 and lab in out_ind:
                sizes.setdefault(lab, 1)
                continue
            if sizes.get(lab, 1) not in (1, n):
                raise ValueError(
                    f"{op}: shapes do not align along index {lab}: {sizes[lab]} and {n}"
                )
            sizes[lab] = n
            per_label.setdefault(lab, []).append((pos, ax))
    if not arrays:
        raise ValueError(f"{op}: needs at least one array argument")
    # unify the chunks of every output label (contracted labels are read whole)
    new_args = [a for a, _ in args]
    for lab, uses in per_label.items():
        if lab not in out_ind:
            continue
        chunkings = [args[p][0].chunks[ax] for p, ax in uses]
        if len(set(chunkings)) == 1:
            continue
        common = common_chunks(chunkings)
        for p, ax in uses:
            e = new_args[p]
            if e.chunks[ax] != common:
                new_args[p] = rechunk(e, (*e.chunks[:ax], common, *e.chunks[ax + 1 :]))
    chunks = []
    for lab in out_ind:
        if lab in new_axes:
            spec = new_axes[lab]
            c = (int(spec),) if isinstance(spec, (int, np.integer)) else tuple(spec)
        elif lab in per_label:
            p, ax = per_label[lab][0]
            c = new_args[p].chunks[ax]
        elif lab in sizes:  # only length-1 axes
            c = (1,)
        else:
            raise ValueError(f"{op}: unknown dimension {lab} in the output index {out_ind}")
        if lab in adjust_chunks:
            c = _adjusted(lab, c, adjust_chunks[lab], op)
        chunks.append(c)
    inputs = tuple(new_args[p] for p in arrays)
    in_inds = tuple(None if ind is None else tuple(ind) for _, ind in args)
    consts = [a for a, ind in args if ind is None]
    bf = BlockFunc(
        fn=fn,
        out_ind=out_ind,
        in_inds=in_inds,
        params=Params(consts, kwargs),
        concatenate=bool(concatenate),
        block_info=accepts(fn.fn, "block_info"),
        block_id=accepts(fn.fn, "block_id"),
        output=int(output),
        whole=tuple(whole),
    )
    shape = tuple(sum(c) for c in chunks)
    return Expr(bf, inputs, shape, np.dtype(dtype), tuple(chunks))


# ----------------------------------------------------------------- fused user ufuncs


@dataclasses.dataclass(frozen=True)
class UserElementwise(Elementwise):
    """A user's elementwise function (``numba.vectorize`` or ``@njit`` on scalars).

    ``func`` is ``"user:<name>"`` (never a NumPy function's name);
    ``fn`` holds the function.
    """

    name = "user_elementwise"
    fn: UserFunc | None = None

    def label(self) -> str:
        return self.fn.label if self.fn is not None else self.func


def _scalar_dtype(fn: Any, args: Sequence[Any], result: Any) -> np.dtype:
    """The dtype an ``@njit`` function returns for these scalar arguments (its signature)."""
    want = tuple(str(np.asarray(a).dtype) if isinstance(a, np.generic) else None for a in args)
    for key, overload in getattr(fn, "overloads", {}).items():
        names = tuple(str(t) for t in key)
        if all(w is None or w == n for w, n in zip(want, names)) and len(names) == len(want):
            try:
                return np.dtype(str(overload.signature.return_type))
            except TypeError:
                break
    return np.asarray(result).dtype


def elementwise_dtype(fn: UserFunc, args: Sequence[Any]) -> np.dtype | None:
    """The result dtype of ``fn`` applied elementwise to ``args``; None if it is not elementwise.

    A Numba ufunc is called on one-element arrays; an ``@njit`` function on
    scalars of the inputs' dtypes (it must return a scalar, and on a
    two-element array either fail or return two elements: a function that
    reduces its argument is not elementwise).
    """
    kind = fn.kind
    with np.errstate(all="ignore"):
        if kind == "vectorize":
            dummies = [np.ones((1,), a.dtype) if isinstance(a, Expr) else a for a in args]
            try:
                out = fn.fn(*dummies)
            except Exception:  # no loop for these dtypes: the caller reports it
                return None
            return None if isinstance(out, tuple) else np.asarray(out).dtype
        if kind != "njit":
            return None
        scalars = [np.ones((), a.dtype)[()] if isinstance(a, Expr) else a for a in args]
        try:
            out = fn.fn(*scalars)
        except Exception:  # does not compile for scalars: a block function
            return None
        if isinstance(out, (tuple, np.ndarray)):
            return None
        if not _maps_each_element(fn.fn, args):
            return None
        return _scalar_dtype(fn.fn, scalars, out)


def _maps_each_element(fn: Any, args: Sequence[Any]) -> bool:
    """Whether ``fn`` on two-element arrays gives what it gives on each element alone
    (``np.sum``, ``np.cumsum`` or a reversal compile for scalars too, but act on the whole
    array); True when it compiles for scalars only."""
    pairs = [np.array([2, 1]).astype(a.dtype) if isinstance(a, Expr) else a for a in args]
    try:
        whole = fn(*pairs)
    except Exception:  # scalars only
        return True
    if np.shape(whole) != (2,):
        return False
    each = [fn(*[p[i] if isinstance(p, np.ndarray) else p for p in pairs]) for i in range(2)]
    return bool(np.array_equal(np.asarray(whole), np.asarray(each), equal_nan=True))


def user_elementwise(fn: UserFunc, *args: Any, dtype: Any = None) -> Expr | None:
    """``fn(*args)`` as a fusible elementwise op, or None when ``fn`` is not elementwise.

    ``args``: Exprs or Python/NumPy scalars; broadcasting is NumPy's.
    """
    arrays = [a for a in args if isinstance(a, Expr)]
    if not arrays or any(not isinstance(a, Expr) and not _is_const(a) for a in args):
        return None
    got = elementwise_dtype(fn, args)
    if got is None:
        return None
    if dtype is not None and np.dtype(dtype) != got:
        return None
    shape = broadcast_shape(fn.label, [a.shape for a in arrays])
    template = tuple(HOLE if isinstance(a, Expr) else a for a in args)
    op = UserElementwise(func=f"user:{fn.label}", template=template, fn=fn)
    chunks = broadcast_chunks(shape, [(a.shape, a.chunks) for a in arrays])
    return Expr(op, arrays, shape, got, chunks)


def _is_const(a: Any) -> bool:
    return is_scalar(a) or isinstance(a, np.generic)


def template_args(template: tuple, arrays: Sequence[Any]) -> list[Any]:
    """Arguments with arrays in the holes (shared by the kernels)."""
    it = iter(arrays)
    return [next(it) if isinstance(t, Hole) else t for t in template]
