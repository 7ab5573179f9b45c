"""Linear algebra ops: matmul, tensordot, einsum, diagonal, and core-axis maps.

* :class:`Matmul` and :class:`Tensordot`: an output block reads the row
  panel of ``a`` and the column panel of ``b`` (the contracted axes in
  full). Their parameters hold only what NumPy's call needs, so a later
  block-pair product summed in a tree can replace the panel read.
* :class:`Einsum`: any Einstein sum given as integer labels; an output
  block reads its own range of every kept label and the whole extent of
  every contracted one. It also serves as the axis permutation
  (``matrix_transpose``), which keeps the input's blocks.
* :class:`Diagonal`: ``numpy.diagonal``, diagonal axis last.
* :class:`CoreMap`: a NumPy function applied to whole "core" axes (the
  gufunc idea): the matrix axes of ``numpy.linalg`` functions, the
  transformed axes of ``numpy.fft``, the vector axis of ``cross``. Other
  ("loop") axes broadcast like elementwise operands and keep their blocks.
  Core axes are read in one piece, so this suits small and medium core
  sizes; no special algorithm is distributed.

Result shapes, dtypes and errors come from NumPy: builders run the NumPy
function on zero-size stand-ins of the inputs (a length-0 axis in front),
which is cheap and raises NumPy's own exception types.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr.graph.chunks import Chunks, broadcast_chunks, regular_chunks
from lazyarr.graph.expr import Expr, MapOp, Region
from lazyarr.graph.ops._common import broadcast_shape, normalize_axis, probe

__all__ = [
    "CORE_FUNCS",
    "CoreMap",
    "Diagonal",
    "Einsum",
    "Matmul",
    "Tensordot",
    "core_map",
    "diagonal",
    "einsum",
    "einsum_labels",
    "matmul",
    "permute",
    "probe_prepended",
    "tensordot",
]

_MATMUL_SIG = "(n?,k),(k,m?)->(n?,m?)"

# Functions a CoreMap may apply, by name (kernels look them up here too).
_CORE_NAMES = {
    "linalg": "cholesky cond det eigh eigvalsh inv matrix_power matrix_rank norm pinv qr "
    "slogdet solve svd svdvals",
    "fft": "fft ifft rfft irfft hfft ihfft fftn ifftn rfftn irfftn fftshift ifftshift",
}
CORE_FUNCS: dict[str, Callable[..., Any]] = {
    f"{mod}.{name}": getattr(getattr(np, mod), name)
    for mod, names in _CORE_NAMES.items()
    for name in names.split()
}


def _vecdot(x1: np.ndarray, x2: np.ndarray, axis1: int = -1, axis2: int = -1) -> np.ndarray:
    """``numpy.vecdot`` with a vector axis of its own for each operand."""
    return np.vecdot(x1, x2, axes=[(axis1,), (axis2,), ()])


def _nonsingular(a: np.ndarray) -> np.ndarray:
    """Per matrix: LU with partial pivoting meets no zero pivot (when
    ``numpy.linalg.solve`` raises ``LinAlgError``; both factor with LAPACK's getrf)."""
    return np.linalg.slogdet(a).sign != 0


def _solve_if_none_singular(a: np.ndarray, b: np.ndarray, none_singular: np.ndarray) -> Any:
    """``numpy.linalg.solve`` of a block, raising NumPy's error when any matrix of the
    whole batch is singular (``none_singular`` is False), as NumPy's one call does."""
    if not none_singular:
        raise np.linalg.LinAlgError("Singular matrix")
    return np.linalg.solve(a, b)


CORE_FUNCS.update(
    {
        "cross": np.cross,
        "vecdot": _vecdot,
        "linalg.nonsingular": _nonsingular,
        "linalg.solve_if_none_singular": _solve_if_none_singular,
    }
)


def _shape_text(*exprs: Expr) -> str:
    return " and ".join(str(e.shape) for e in exprs)


def _reraise(err: Exception, op: str, exprs: Sequence[Expr]) -> None:
    """Raise ``err``'s type (or its nearest constructible base) naming op and shapes."""
    text = str(err)
    if not text.startswith(f"{op.rsplit('.', 1)[-1]}:"):
        text = f"{op}: {text}"
    msg = f"{text} (shapes {_shape_text(*exprs)})"
    for cls in type(err).__mro__:
        try:
            new = cls(msg)
        except Exception:
            continue
        raise new from None
    raise err  # pragma: no cover


def _loop_region(
    in_shape: Sequence[int], out_shape: Sequence[int], out: Sequence[slice]
) -> tuple[slice, ...]:
    """Right-aligned broadcast: the input's slices for the output slices ``out``."""
    lead = len(out_shape) - len(in_shape)
    return tuple(
        slice(0, 1) if (n == 1 and out_shape[lead + j] != 1) else out[lead + j]
        for j, n in enumerate(in_shape)
    )


def _whole(n: int) -> tuple[int, ...]:
    return (n,)


# ----------------------------------------------------------------- matmul


@dataclasses.dataclass(frozen=True)
class Matmul(MapOp):
    """``numpy.matmul``: an output block reads a row panel of ``a`` and a column panel of ``b``."""

    name = "matmul"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        a, b = expr.inputs
        nbatch = expr.ndim - (a.ndim >= 2) - (b.ndim >= 2)
        batch_shape, batch = expr.shape[:nbatch], out[:nbatch]
        ra = _loop_region(a.shape[:-2], batch_shape, batch)
        if a.ndim >= 2:
            ra += (out[nbatch],)
        ra += (slice(0, a.shape[-1]),)
        rb = _loop_region(b.shape[:-2], batch_shape, batch)
        rb += (slice(0, b.shape[0] if b.ndim == 1 else b.shape[-2]),)
        if b.ndim >= 2:
            rb += (out[-1],)
        return (ra, rb)


def matmul(a: Expr, b: Expr) -> Expr:
    """``a @ b`` with NumPy's 1-d promotion and batch broadcasting."""
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(
                f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc "
                f"core with signature {_MATMUL_SIG} requires 1) (shapes {_shape_text(a, b)})"
            )
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ValueError(
            f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
            f"signature {_MATMUL_SIG} (size {kb} is different from {ka}) "
            f"(shapes {_shape_text(a, b)})"
        )
    batch = broadcast_shape("matmul", [a.shape[:-2], b.shape[:-2]])
    dtype = probe(np.matmul, [a, b])
    shape = batch
    if a.ndim >= 2:
        shape = (*shape, a.shape[-2])
    if b.ndim >= 2:
        shape = (*shape, b.shape[-1])
    return Expr(Matmul(), (a, b), shape, dtype, matmul_chunks(a, b, batch))


def matmul_chunks(a: Expr, b: Expr, batch: tuple[int, ...]) -> Chunks:
    """Chunks of ``a @ b``: the batch axes' broadcast grids, ``a``'s rows, ``b``'s columns."""
    chunks = broadcast_chunks(batch, [(a.shape[:-2], a.chunks[:-2]), (b.shape[:-2], b.chunks[:-2])])
    if a.ndim >= 2:
        chunks = (*chunks, a.chunks[-2])
    if b.ndim >= 2:
        chunks = (*chunks, b.chunks[-1])
    return chunks


# -------------------------------------------------------------- tensordot


@dataclasses.dataclass(frozen=True)
class Tensordot(MapOp):
    """``numpy.tensordot`` over ``axes_a``/``axes_b`` (non-negative, paired)."""

    name = "tensordot"
    axes_a: tuple[int, ...] = ()
    axes_b: tuple[int, ...] = ()

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        a, b = expr.inputs
        it = iter(out)
        ra = tuple(slice(0, n) if ax in self.axes_a else next(it) for ax, n in enumerate(a.shape))
        rb = tuple(slice(0, n) if ax in self.axes_b else next(it) for ax, n in enumerate(b.shape))
        return (ra, rb)


def _tensordot_axes(a: Expr, b: Expr, axes: Any) -> tuple[list[int], list[int]]:
    """NumPy's own reading of ``axes`` (same errors, same order of checks)."""
    try:
        iter(axes)
    except Exception:
        axes_a = list(range(-axes, 0))
        axes_b = list(range(axes))
    else:
        axes_a, axes_b = axes
    try:
        na = len(axes_a)
        axes_a = list(axes_a)
    except TypeError:
        axes_a, na = [axes_a], 1
    try:
        nb = len(axes_b)
        axes_b = list(axes_b)
    except TypeError:
        axes_b, nb = [axes_b], 1
    if len(set(axes_a)) != len(axes_a) or len(set(axes_b)) != len(axes_b):
        raise ValueError(f"tensordot: duplicate axes are not allowed (axes {axes!r})")
    equal = na == nb
    if equal:
        for k in range(na):
            try:
                sa, sb = a.shape[axes_a[k]], b.shape[axes_b[k]]
            except IndexError:
                raise IndexError(
                    f"tensordot: axes {axes!r} out of range for shapes {_shape_text(a, b)}"
                ) from None
            if sa != sb:
                equal = False
                break
            axes_a[k] = operator.index(axes_a[k]) % max(a.ndim, 1)
            axes_b[k] = operator.index(axes_b[k]) % max(b.ndim, 1)
    if not equal:
        raise ValueError(
            f"tensordot: shape-mismatch for sum (shapes {_shape_text(a, b)}, axes {axes!r})"
        )
    if len(set(axes_a)) != na or len(set(axes_b)) != nb:
        raise ValueError(f"tensordot: repeated axis in axes {axes!r}")
    return axes_a, axes_b


def tensordot(a: Expr, b: Expr, axes: Any = 2) -> Expr:
    """``numpy.tensordot(a, b, axes)``: the free axes of ``a`` then those of ``b``."""
    axes_a, axes_b = _tensordot_axes(a, b, axes)
    dtype = probe(np.dot, [a, b])
    free_a = [ax for ax in range(a.ndim) if ax not in axes_a]
    free_b = [ax for ax in range(b.ndim) if ax not in axes_b]
    shape = tuple(a.shape[ax] for ax in free_a) + tuple(b.shape[ax] for ax in free_b)
    op = Tensordot(axes_a=tuple(axes_a), axes_b=tuple(axes_b))
    return Expr(op, (a, b), shape, dtype, tensordot_chunks(a, b, op))


def tensordot_chunks(a: Expr, b: Expr, op: Tensordot) -> Chunks:
    """Chunks of a tensordot: the grids of ``a``'s free axes, then ``b``'s."""
    free_a = tuple(a.chunks[ax] for ax in range(a.ndim) if ax not in op.axes_a)
    return free_a + tuple(b.chunks[ax] for ax in range(b.ndim) if ax not in op.axes_b)


# ----------------------------------------------------------------- einsum


@dataclasses.dataclass(frozen=True)
class Einsum(MapOp):
    """``numpy.einsum`` in integer-label form (labels numbered by first appearance)."""

    name = "einsum"
    subscripts: tuple[tuple[int, ...], ...] = ()
    output: tuple[int, ...] = ()
    dtype: Any = None
    casting: str = "safe"

    def label(self) -> str:
        def letters(labels: tuple[int, ...]) -> str:
            return "".join(_LETTERS[i] if i < len(_LETTERS) else "?" for i in labels)

        return f"einsum({','.join(letters(s) for s in self.subscripts)}->{letters(self.output)})"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        where = {lab: i for i, lab in enumerate(self.output)}
        result = []
        for x, labels in zip(expr.inputs, self.subscripts, strict=False):
            region = []
            for lab, n in zip(labels, x.shape, strict=False):
                i = where.get(lab)
                if i is None:
                    region.append(slice(0, n))
                elif n == 1 and expr.shape[i] != 1:
                    region.append(slice(0, 1))
                else:
                    region.append(out[i])
            result.append(tuple(region))
        return tuple(result)


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _sublist_text(sub: Any) -> str:
    out = []
    for s in sub:
        if s is Ellipsis:
            out.append("...")
            continue
        i = operator.index(s)
        if not 0 <= i < len(_LETTERS):
            raise ValueError(f"einsum: subscript {i} is not within the valid range [0, 52)")
        out.append(_LETTERS[i])
    return "".join(out)


def _einsum_string(args: Sequence[Any]) -> tuple[str, list[Any]]:
    """The subscripts string and operands of either einsum calling form."""
    if args and isinstance(args[0], str):
        return args[0], list(args[1:])
    ops, subs = list(args[0::2]), list(args[1::2])
    out = None
    if len(ops) == len(subs) + 1:
        out = ops.pop()  # the trailing output sublist
        out_text = _sublist_text(out)
    ins = ",".join(_sublist_text(s) for s in subs)
    return (ins + "->" + out_text) if out is not None else ins, ops


def _parse_term(term: str, ndim: int, i: int) -> tuple[list[str], int]:
    """Letters of one input term with ``'.'`` per ellipsis axis, and the ellipsis length."""
    if "..." in term:
        head, tail = term.split("...")
        nell = ndim - len(head) - len(tail)
        if nell < 0:
            raise ValueError(f"einsum: too many subscripts for operand {i} (ndim {ndim})")
        return [*head, *["."] * nell, *tail], nell
    if len(term) != ndim:
        raise ValueError(f"einsum: operand {i} has {ndim} dimensions, subscripts {term!r}")
    return list(term), 0


def einsum_labels(
    subscripts: str, exprs: Sequence[Expr]
) -> tuple[list[tuple[int, ...]], tuple[int, ...]]:
    """Integer labels of each operand axis and of the output, from a checked string.

    The string must already have passed NumPy's own parser (see :func:`einsum`).
    Ellipsis axes get labels of their own, aligned from the right.
    """
    text = subscripts.replace(" ", "")
    ins, arrow, out_text = text.partition("->")
    terms = ins.split(",")
    parsed = [_parse_term(t, x.ndim, i) for i, (t, x) in enumerate(zip(terms, exprs, strict=False))]
    nell = max((n for _, n in parsed), default=0)
    ell_labels = [1000 + k for k in range(nell)]

    def to_ints(letters: list[str], n: int) -> tuple[int, ...]:
        ell = iter(ell_labels[nell - n :])
        return tuple(next(ell) if c == "." else ord(c) for c in letters)

    inputs = [to_ints(letters, n) for letters, n in parsed]
    if arrow:
        output = to_ints(list(out_text.replace("...", "." * nell)), nell)
    else:
        counts: dict[str, int] = {}
        for letters, _ in parsed:
            for c in letters:
                if c != ".":
                    counts[c] = counts.get(c, 0) + 1
        once = sorted(c for c, k in counts.items() if k == 1)
        output = tuple(ell_labels) + tuple(ord(c) for c in once)
    return inputs, output


def _label_sizes(inputs: Sequence[tuple[int, ...]], exprs: Sequence[Expr]) -> dict[int, int]:
    sizes: dict[int, int] = {}
    for i, (labels, x) in enumerate(zip(inputs, exprs, strict=False)):
        own: dict[int, int] = {}
        for lab, n in zip(labels, x.shape, strict=False):
            if own.setdefault(lab, n) != n:
                raise ValueError(
                    f"einsum: dimensions in operand {i} for collapsing index "
                    f"{chr(lab)!r} don't match ({own[lab]} != {n}) (shapes {_shape_text(*exprs)})"
                )
        for lab, n in own.items():
            m = sizes.get(lab)
            if m is None or m == 1:
                sizes[lab] = n
            elif n != 1 and n != m:
                raise ValueError(
                    f"einsum: operands could not be broadcast together with shapes "
                    f"{_shape_text(*exprs)}"
                )
    return sizes


def _renumber(
    inputs: Sequence[tuple[int, ...]], output: tuple[int, ...]
) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    order: dict[int, int] = {}
    for labels in (*inputs, output):
        for lab in labels:
            order.setdefault(lab, len(order))
    if len(order) > len(_LETTERS):
        raise ValueError(f"einsum: too many distinct subscripts ({len(order)} > 52)")
    return tuple(tuple(order[x] for x in s) for s in inputs), tuple(order[x] for x in output)


def einsum_expr(
    exprs: Sequence[Expr],
    inputs: Sequence[tuple[int, ...]],
    output: tuple[int, ...],
    dtype: Any = None,
    casting: str = "safe",
) -> Expr:
    """An :class:`Einsum` from integer labels (checked: sizes, dtype via NumPy)."""
    sizes = _label_sizes(inputs, exprs)
    subs, out = _renumber(inputs, output)
    dummies: list[Any] = []
    for x, s in zip(exprs, subs, strict=False):
        dummies += [np.ones((1,) * x.ndim, dtype=x.dtype), list(s)]
    kwargs = {"casting": casting} | ({"dtype": dtype} if dtype is not None else {})
    try:
        res_dtype = np.asarray(np.einsum(*dummies, list(out), **kwargs)).dtype
    except Exception as e:
        _reraise(e, "einsum", exprs)
    shape = tuple(sizes[lab] for lab in output)
    op = Einsum(
        subscripts=subs,
        output=out,
        dtype=None if dtype is None else np.dtype(dtype),
        casting=casting,
    )
    return Expr(op, tuple(exprs), shape, res_dtype, einsum_chunks(exprs, op, shape))


def einsum_chunks(exprs: Sequence[Expr], op: Einsum, shape: tuple[int, ...]) -> Chunks:
    """Chunks of an einsum: per output label, the finest grid of an input axis of full length."""
    chunk_list = [_whole(n) for n in shape]
    for x, labels in zip(exprs, op.subscripts, strict=False):
        for lab, n, c in zip(labels, x.shape, x.chunks, strict=False):
            i = op.output.index(lab) if lab in op.output else -1
            if i >= 0 and n == shape[i] and len(c) > len(chunk_list[i]):
                chunk_list[i] = c
    return tuple(chunk_list)


def einsum(
    args: Sequence[Any], as_expr: Callable[[Any], Expr], dtype: Any = None, casting: str = "safe"
) -> Expr:
    """``numpy.einsum(*args)`` (string or interleaved sublist form).

    ``as_expr`` turns operands into expressions (the top level's converter).
    NumPy parses the subscripts first, on stand-in arrays of the operands'
    ranks, so malformed subscripts raise NumPy's own errors.
    """
    subscripts, operands = _einsum_string(args)
    exprs = [as_expr(o) for o in operands]
    dummies = [np.ones((1,) * x.ndim, dtype=x.dtype) for x in exprs]
    try:
        np.einsum(subscripts, *dummies)
    except Exception as e:
        _reraise(e, "einsum", exprs)
    inputs, output = einsum_labels(subscripts, exprs)
    return einsum_expr(exprs, inputs, output, dtype, casting)


def permute(x: Expr, axes: Sequence[int]) -> Expr:
    """``x`` with its axes in the order ``axes`` (blocks move with their axes)."""
    return einsum_expr([x], [tuple(range(x.ndim))], tuple(axes))


# --------------------------------------------------------------- diagonal


@dataclasses.dataclass(frozen=True)
class Diagonal(MapOp):
    """``numpy.diagonal(x, offset, axis1, axis2)``: the diagonal becomes the last axis."""

    name = "diagonal"
    offset: int = 0
    axis1: int = 0
    axis2: int = 1

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        (x,) = expr.inputs
        d = out[-1]
        r0, c0 = max(-self.offset, 0), max(self.offset, 0)
        it = iter(out[:-1])
        region = []
        for ax, n in enumerate(x.shape):
            if ax == self.axis1:
                region.append(slice(min(d.start + r0, n), min(d.stop + r0, n)))
            elif ax == self.axis2:
                region.append(slice(min(d.start + c0, n), min(d.stop + c0, n)))
            else:
                region.append(next(it))
        return (tuple(region),)


def diagonal(x: Expr, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Expr:
    """``numpy.diagonal`` (a lazy copy, not a view)."""
    if x.ndim < 2:
        raise ValueError(f"diagonal: diag requires an array of at least two dimensions {x.shape}")
    offset = operator.index(offset)
    a1 = normalize_axis(axis1, x.ndim, "diagonal")
    a2 = normalize_axis(axis2, x.ndim, "diagonal")
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 cannot be the same (shape {x.shape})")
    n1, n2 = x.shape[a1], x.shape[a2]
    length = max(0, min(n1 - max(-offset, 0), n2 - max(offset, 0)))
    rest = [ax for ax in range(x.ndim) if ax not in (a1, a2)]
    shape = (*tuple(x.shape[ax] for ax in rest), length)
    size = max(max(x.chunks[a1]), 1)
    chunks = (*tuple(x.chunks[ax] for ax in rest), regular_chunks(length, size))
    op = Diagonal(offset=offset, axis1=a1, axis2=a2)
    return Expr(op, (x,), shape, x.dtype, chunks)


# --------------------------------------------------------------- core map


@dataclasses.dataclass(frozen=True)
class CoreMap(MapOp):
    """``CORE_FUNCS[func](*inputs, **kwargs)[which]`` on whole core axes.

    ``in_core[i]`` are the axes of input ``i`` read in full; ``out_core``
    the output axes made whole. The remaining (loop) axes of the inputs
    broadcast against the output's loop axes, aligned from the right.
    """

    name = "core_map"
    func: str = ""
    in_core: tuple[tuple[int, ...], ...] = ()
    out_core: tuple[int, ...] = ()
    kwargs: tuple = ()
    which: int | None = None

    def label(self) -> str:
        return self.func if self.which is None else f"{self.func}[{self.which}]"

    def regions(self, expr: Expr, out: Region) -> tuple[Region, ...]:
        loop_axes = [ax for ax in range(expr.ndim) if ax not in self.out_core]
        loop_shape = [expr.shape[ax] for ax in loop_axes]
        loop_out = [out[ax] for ax in loop_axes]
        result = []
        for x, core in zip(expr.inputs, self.in_core, strict=False):
            x_loop = [ax for ax in range(x.ndim) if ax not in core]
            it = iter(_loop_region([x.shape[ax] for ax in x_loop], loop_shape, loop_out))
            result.append(
                tuple(slice(0, n) if ax in core else next(it) for ax, n in enumerate(x.shape))
            )
        return tuple(result)


def probe_prepended(
    func: Callable[..., Any],
    exprs: Sequence[Expr],
    kwargs: dict[str, Any],
    which: int | None = None,
    op: str = "",
    cores: Sequence[int | None] | None = None,
) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype of ``func`` by running it on zero-size stand-ins.

    Each stand-in has the input's shape with a length-0 axis in front, so
    ``kwargs`` must name axes as they are in the stand-ins (from the end, or
    shifted by one). With several inputs, ``cores`` gives each one's number
    of core axes: inputs with fewer loop axes get length-1 axes after the 0
    so that it lines up when broadcasting from the right; a core count of
    None passes that input as it is (a small vector whose rank matters).
    Returns the result's shape without the leading axis.
    """
    if cores is None:
        pads: list[int | None] = [0] * len(exprs)
    else:
        loops = [x.ndim - c for x, c in zip(exprs, cores, strict=True) if c is not None]
        most = max(loops, default=0)
        pads = [
            None if c is None else most - (x.ndim - c) for x, c in zip(exprs, cores, strict=True)
        ]
    dummies = [
        np.empty(x.shape if p is None else (0,) + (1,) * p + x.shape, dtype=x.dtype)
        for x, p in zip(exprs, pads, strict=True)
    ]
    try:
        with np.errstate(all="ignore"):
            res = func(*dummies, **kwargs)
    except Exception as e:
        _reraise(e, op or getattr(func, "__name__", "function"), exprs)
    if which is not None:
        res = res[which]
    res = np.asarray(res)
    if not res.shape or res.shape[0] != 0:
        raise TypeError(f"{op}: cannot tell the result shape from a zero-size stand-in")
    return res.shape[1:], res.dtype


def core_map(
    func: str,
    exprs: Sequence[Expr],
    in_core: Sequence[Sequence[int]],
    out_core: Sequence[int],
    shape: Sequence[int],
    dtype: np.dtype,
    kwargs: dict[str, Any] | None = None,
    which: int | None = None,
) -> Expr:
    """A :class:`CoreMap` whose result ``shape`` and ``dtype`` the caller worked out."""
    if func not in CORE_FUNCS:
        raise ValueError(f"{func!r} is not a known core function")
    shape = tuple(shape)
    in_core = tuple(tuple(sorted(int(a) for a in c)) for c in in_core)
    out_core = tuple(sorted(int(a) for a in out_core))
    loop_axes = [ax for ax in range(len(shape)) if ax not in out_core]
    loop_shape = tuple(shape[ax] for ax in loop_axes)
    parts = []
    for x, core in zip(exprs, in_core, strict=False):
        x_loop = [ax for ax in range(x.ndim) if ax not in core]
        parts.append(([x.shape[ax] for ax in x_loop], [x.chunks[ax] for ax in x_loop]))
    if broadcast_shape(func, [p[0] for p in parts] + [loop_shape]) != loop_shape:
        raise ValueError(f"{func}: inputs {_shape_text(*exprs)} do not broadcast to {shape}")
    loop_chunks = iter(broadcast_chunks(loop_shape, parts))
    chunks = tuple(_whole(n) if ax in out_core else next(loop_chunks) for ax, n in enumerate(shape))
    for k, v in (kwargs or {}).items():
        if isinstance(v, list):
            raise TypeError(f"{func}: keyword {k} must be a tuple, not a list")
    op = CoreMap(
        func=func,
        in_core=in_core,
        out_core=out_core,
        kwargs=tuple(sorted((kwargs or {}).items())),
        which=which,
    )
    return Expr(op, tuple(exprs), shape, dtype, chunks)
