"""``LazyArray``: the user-facing lazy array.

A thin, mutable handle on an immutable :class:`~lazyarr.graph.Expr`.
Methods build new expressions through ``graph.ops`` (errors surface here,
when the expression is written) and computing goes through ``api``.
``__setitem__`` and in-place operators rebind the handle's expression.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from lazyarr import api, dask_collection, planview
from lazyarr._convert import as_expr, as_operand, chunks_for
from lazyarr._fallback import numpy_fallback
from lazyarr._operators import ArrayOperators, is_operand
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import elementwise, reduce
from lazyarr.graph.ops import indexing as ix
from lazyarr.graph.ops import linalg as lin
from lazyarr.graph.ops import manipulation as manip
from lazyarr.graph.ops import rechunk as rechunk_op
from lazyarr.graph.ops import statistics as stats
from lazyarr.graph.ops.elementwise import ELEMENTWISE_FUNCS
from lazyarr.viz.arrayrepr import array_repr, array_repr_html

__all__ = ["HANDLED_FUNCTIONS", "SERVED", "LazyArray", "lazy", "serve", "served", "wrap"]

# What modules above this one serve to LazyArray, each registered by the module that
# defines it when it is imported (see ``serve``): so this module imports nothing above it.
SERVED: dict[str, Any] = {}

F = TypeVar("F")


def serve(name: str) -> Callable[[F], F]:
    """Register the decorated function (or class, or module) as what ``LazyArray`` uses for
    ``name``: ``"to_zarr"``, ``"store"``, ``"map_blocks"``, ``"map_overlap"``,
    ``"to_dask"``, indexing (``"index"``: ``x[mask]`` with a lazy boolean mask;
    ``"vindex"``, ``"blocks"``) and ``"namespace"`` (what ``__array_namespace__`` returns)."""

    def register(value: F) -> F:
        SERVED[name] = value
        return value

    return register


def served(name: str) -> Any:
    """What the namespace registered for ``name`` (see :func:`serve`)."""
    try:
        return SERVED[name]
    except KeyError:
        raise NotImplementedError(
            f"LazyArray needs {name!r} from lazyarr's namespace, which has not registered it "
            "(import lazyarr)"
        ) from None


# numpy function -> lazyarr implementation, filled by the namespace modules.
HANDLED_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}

# ufunc.reduce methods that map onto our reductions
_UFUNC_REDUCE = {
    "add": "sum",
    "multiply": "prod",
    "minimum": "min",
    "maximum": "max",
    "logical_or": "any",
    "logical_and": "all",
    "fmin": "nanmin",
    "fmax": "nanmax",
}


def wrap(expr: Expr) -> LazyArray:
    """A new lazy array for ``expr``."""
    arr = LazyArray.__new__(LazyArray)
    arr._expr = expr
    return arr


def lazy(x: Any) -> LazyArray:
    """``x`` as a lazy array (lazy arrays pass through)."""
    return x if isinstance(x, LazyArray) else wrap(as_expr(x))


class LazyArray(ArrayOperators, dask_collection.DaskCollection):
    """A lazy, chunked N-d array: nothing runs until ``.compute()``."""

    __array_priority__ = 20
    _expr: Expr

    def __init__(self, data: Any, chunks: Any = "auto") -> None:
        self._expr = as_expr(data, chunks)

    # -- facts ------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._expr.shape

    @property
    def dtype(self) -> np.dtype:
        return self._expr.dtype

    @property
    def ndim(self) -> int:
        return self._expr.ndim

    @property
    def size(self) -> int:
        return self._expr.size

    @property
    def nbytes(self) -> int:
        return self._expr.nbytes

    @property
    def itemsize(self) -> int:
        return self._expr.dtype.itemsize

    @property
    def chunks(self) -> tuple[tuple[int, ...], ...]:
        return self._expr.chunks

    @property
    def chunksize(self) -> tuple[int, ...]:
        return tuple(max(c) for c in self._expr.chunks)

    @property
    def numblocks(self) -> tuple[int, ...]:
        return self._expr.numblocks

    @property
    def npartitions(self) -> int:
        return int(np.prod(self.numblocks, dtype=np.int64))

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def key(self) -> str:
        """The structural key: equal expressions have equal keys."""
        return self._expr.key

    @property
    def T(self) -> LazyArray:
        """All axes reversed (NumPy's ``ndarray.T``; the Array API allows only 2-D)."""
        return self.transpose()

    @property
    def mT(self) -> LazyArray:
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return self.swapaxes(-1, -2)

    @property
    def real(self) -> LazyArray:
        return wrap(elementwise("real", self._expr))

    @property
    def imag(self) -> LazyArray:
        return wrap(elementwise("imag", self._expr))

    def to_device(self, device: Any, /, *, stream: Any = None) -> LazyArray:
        if device not in ("cpu", None):
            raise ValueError(f"lazyarr arrays live on 'cpu', not {device!r}")
        return self

    # -- computing -----------------------------------------------------------
    def compute(
        self,
        executor: str | None = None,
        *,
        optimize: bool | None = None,
        passes: Sequence[str] | None = None,
        progress: Any = None,
        memory_limit: Any = None,
    ) -> np.ndarray:
        """The values as a NumPy array (``executor`` and ``memory_limit`` override the config)."""
        (result,) = api.compute_exprs(
            [self._expr],
            executor=executor,
            optimize=optimize,
            passes=passes,
            progress=progress,
            memory_limit=memory_limit,
        )
        return result

    def persist(
        self,
        executor: str | None = None,
        *,
        optimize: bool | None = None,
        passes: Sequence[str] | None = None,
        progress: Any = None,
        memory_limit: Any = None,
    ) -> LazyArray:
        """A lazy array backed by computed blocks, kept where they were computed."""
        (expr,) = api.persist_exprs(
            [self._expr],
            executor=executor,
            optimize=optimize,
            passes=passes,
            progress=progress,
            memory_limit=memory_limit,
        )
        return wrap(expr)

    def to_zarr(self, url: Any, component: str | None = None, **options: Any) -> Any:
        """Write this array to a new zarr array, block by block (see ``lazyarr.to_zarr``)."""
        return served("to_zarr")(self, url, component, **options)

    def store(self, target: Any, region: Any = None, **options: Any) -> Any:
        """Write this array into ``target`` block by block (see ``lazyarr.store``)."""
        return served("store")(self, target, region, **options)

    def map_blocks(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> LazyArray:
        """``la.map_blocks(func, self, *args, **kwargs)``."""
        return served("map_blocks")(func, self, *args, **kwargs)

    def map_overlap(self, func: Callable[..., Any], depth: Any, **kwargs: Any) -> LazyArray:
        """``la.map_overlap(func, self, depth=depth, **kwargs)`` (``boundary=``, ``trim=``)."""
        return served("map_overlap")(func, self, depth=depth, **kwargs)

    def rechunk(self, chunks: Any = "auto") -> LazyArray:
        """The same values on another block grid."""
        return wrap(rechunk_op(self._expr, chunks_for(chunks, self.shape, self.dtype)))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            raise ValueError(
                "a lazy array cannot be converted to NumPy without computing (copy=False)"
            )
        out = self.compute()
        return out if dtype is None else out.astype(dtype, copy=False)

    def _scalar(self, kind: type) -> Any:
        if self.size != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        if self.ndim > 0:
            warnings.warn(
                "Conversion of an array with ndim > 0 to a scalar is deprecated, and will error "
                "in future. Ensure you extract a single element from your array before "
                "performing this operation. (Deprecated NumPy 1.25.)",
                DeprecationWarning,
                stacklevel=3,
            )
        return kind(self.compute().reshape(()))

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self.compute().reshape(()))

    def __int__(self) -> int:
        return self._scalar(int)

    def __float__(self) -> float:
        return self._scalar(float)

    def __complex__(self) -> complex:
        return self._scalar(complex)

    def __index__(self) -> int:
        if self.ndim != 0 or self.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return operator.index(self.compute()[()])

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.compute().item()

    def tolist(self) -> Any:
        return self.compute().tolist()

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self) -> Iterator[LazyArray]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    # -- NumPy protocols -----------------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if kwargs.get("out") is not None:
            return NotImplemented
        if any(not is_operand(x) for x in inputs):
            return NotImplemented
        if method == "__call__" and ufunc in HANDLED_FUNCTIONS:  # gufuncs: matmul, vecdot...
            return HANDLED_FUNCTIONS[ufunc](*inputs, **kwargs)
        known = ELEMENTWISE_FUNCS.get(ufunc.__name__) is ufunc
        if method == "__call__" and ufunc.nout == 1 and known:
            return wrap(elementwise(ufunc.__name__, *(as_operand(x) for x in inputs), **kwargs))
        if method == "__call__" and ufunc.nout == 1 and not kwargs:  # a user's (numba) ufunc
            ops = [wrap(o) if isinstance(o, Expr) else o for o in map(as_operand, inputs)]
            return served("map_blocks")(ufunc, *ops)
        if method == "reduce" and ufunc.__name__ in _UFUNC_REDUCE and len(inputs) == 1:
            axis = kwargs.pop("axis", 0)
            keepdims = kwargs.pop("keepdims", False)
            dtype = kwargs.pop("dtype", None)
            if kwargs:
                return NotImplemented
            return wrap(
                reduce(_UFUNC_REDUCE[ufunc.__name__], as_expr(inputs[0]), axis, keepdims, dtype)
            )
        return NotImplemented

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        impl = HANDLED_FUNCTIONS.get(func)
        if impl is None:  # NumPy's own function on the computed arguments, warned once
            return numpy_fallback(func, args, kwargs, LazyArray)
        return impl(*args, **kwargs)

    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported Array API version {api_version!r}")
        return served("namespace")

    def to_dask(self) -> Any:
        """A Dask array with these chunks; its blocks are lazyarr computes (``lazyarr.to_dask``)."""
        return served("to_dask")(self)

    to_dask_array = to_dask  # the name `dask.array.asarray` looks for

    # -- representation -------------------------------------------------------
    def __repr__(self) -> str:
        return array_repr(self._expr)

    def _repr_html_(self) -> str:
        return array_repr_html(self._expr)

    def __str__(self) -> str:
        return repr(self)

    # -- methods ------------------------------------------------------------------
    def rename(self, name: str | None) -> LazyArray:
        """This array under a name that plan pictures, ``explain`` and ``la.last_run()`` show.

        The name changes nothing else: equal arrays keep sharing plans.
        """
        if name is not None and not isinstance(name, str):
            raise TypeError(f"rename() takes a str or None, not {type(name).__name__}")
        return wrap(self._expr.renamed(name))

    def astype(self, dtype: Any, *, copy: bool = True, casting: str = "unsafe") -> LazyArray:
        dtype = np.dtype(dtype)
        if not np.can_cast(self.dtype, dtype, casting=casting):
            raise TypeError(
                f"Cannot cast array data from {self.dtype!r} to {dtype!r} according to the rule "
                f"{casting!r}"
            )
        if dtype == self.dtype and not copy:
            return self
        return wrap(elementwise("astype", self._expr, dtype=dtype))

    def copy(self) -> LazyArray:
        return wrap(self._expr)

    def conj(self) -> LazyArray:
        return wrap(elementwise("conjugate", self._expr))

    conjugate = conj

    def reshape(self, *shape: Any, order: str = "C", copy: bool | None = None) -> LazyArray:
        if order != "C":
            raise NotImplementedError("lazyarr reshapes in C order only")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return wrap(manip.reshape(self._expr, tuple(shape)))

    def transpose(self, *axes: Any) -> LazyArray:
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        return wrap(manip.permute_dims(self._expr, tuple(axes) if axes else None))

    def swapaxes(self, axis1: int, axis2: int) -> LazyArray:
        return wrap(manip.swapaxes(self._expr, axis1, axis2))

    def squeeze(self, axis: Any = None) -> LazyArray:
        return wrap(manip.squeeze(self._expr, axis))

    def flatten(self) -> LazyArray:
        return self.reshape(-1)

    def ravel(self) -> LazyArray:
        return self.reshape(-1)

    def _reduce(self, func: str, axis: Any, keepdims: bool, dtype: Any = None, ddof: float = 0):
        return wrap(reduce(func, self._expr, axis, keepdims, dtype, ddof))

    def sum(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("sum", axis, keepdims, dtype)

    def prod(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("prod", axis, keepdims, dtype)

    def mean(self, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("mean", axis, keepdims, dtype)

    def var(self, axis: Any = None, dtype: Any = None, ddof: float = 0, keepdims: bool = False):
        return self._reduce("var", axis, keepdims, dtype, ddof)

    def std(self, axis: Any = None, dtype: Any = None, ddof: float = 0, keepdims: bool = False):
        return self._reduce("std", axis, keepdims, dtype, ddof)

    def min(self, axis: Any = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("min", axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("max", axis, keepdims)

    def argmin(self, axis: int | None = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("argmin", axis, keepdims)

    def argmax(self, axis: int | None = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("argmax", axis, keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("any", axis, keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> LazyArray:
        return self._reduce("all", axis, keepdims)

    def cumsum(
        self, axis: int | None = None, dtype: Any = None, out: Any = None, *, method: str = ""
    ) -> LazyArray:
        stats.check_scan_options("cumsum", out, method)
        return wrap(stats.cumulative("sum", self._expr, axis, dtype))

    def cumprod(
        self, axis: int | None = None, dtype: Any = None, out: Any = None, *, method: str = ""
    ) -> LazyArray:
        stats.check_scan_options("cumprod", out, method)
        return wrap(stats.cumulative("prod", self._expr, axis, dtype))

    def round(self, decimals: int = 0) -> LazyArray:
        return wrap(elementwise("round", self._expr, decimals=decimals))

    def clip(self, min: Any = None, max: Any = None) -> LazyArray:
        if min is None and max is None:
            raise ValueError("One of max or min must be given")
        return wrap(elementwise("clip", self._expr, _clip_bound(min), _clip_bound(max)))

    def dot(self, other: Any) -> LazyArray:
        b = as_expr(other)
        if self.ndim == 0 or b.ndim == 0:
            return wrap(elementwise("multiply", self._expr, b))
        if self.ndim <= 2 and b.ndim <= 2:
            return wrap(lin.matmul(self._expr, b))
        return wrap(lin.tensordot(self._expr, b, ((self.ndim - 1,), (max(b.ndim - 2, 0),))))

    # -- seeing the plan ------------------------------------------------------------
    def visualize(
        self,
        filename: str | None = None,
        format: str | None = None,
        stage: str | None = None,
        measured: bool = False,
        executor: str | None = None,
    ) -> Any:
        """A picture of this array's optimized plan (a notebook shows it; ``filename`` writes it).

        ``stage="raw"`` or a pass name draws the plan as it was after that pass;
        ``measured=True`` adds the latest compute's measurements.
        """
        return planview.visualize(
            self,
            filename=filename,
            format=format,
            stage=stage,
            measured=measured,
            executor=executor,
        )

    def explain(
        self, measured: bool = False, executor: str | None = None, stage: str | None = None
    ) -> Any:
        """The plan as text, like a database EXPLAIN: stages, bytes, and why (not) fused/placed."""
        return planview.explain(self, measured=measured, executor=executor, stage=stage)

    # -- NumPy methods served by namespace functions ---------------------------------
    def _via(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        impl = HANDLED_FUNCTIONS.get(func)
        if impl is None:  # pragma: no cover - the namespace registers all of these
            raise NotImplementedError(f"{func.__name__} is not available")
        return impl(self, *args, **kwargs)

    def sort(self, axis: int = -1, kind: str | None = None, order: Any = None) -> None:
        """Sort in place along ``axis`` (rebinds this array's expression, like NumPy)."""
        self._expr = self._via(np.sort, axis, kind, order)._expr

    def argsort(self, axis: int = -1, kind: str | None = None, order: Any = None) -> LazyArray:
        return self._via(np.argsort, axis, kind, order)

    def nonzero(self) -> tuple[LazyArray, ...]:
        """Indices of non-zero elements (computes now: the length depends on the data)."""
        return self._via(np.nonzero)

    def searchsorted(self, v: Any, side: str = "left", sorter: Any = None) -> LazyArray:
        return self._via(np.searchsorted, v, side, sorter)

    def repeat(self, repeats: Any, axis: int | None = None) -> LazyArray:
        return self._via(np.repeat, repeats, axis)

    def take(self, indices: Any, axis: int | None = None) -> LazyArray:
        return self._via(np.take, indices, axis)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> LazyArray:
        return self._via(np.diagonal, offset, axis1, axis2)

    def trace(
        self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None
    ) -> LazyArray:
        return self._via(np.trace, offset, axis1, axis2, dtype)

    # -- indexing -----------------------------------------------------------
    @property
    def vindex(self) -> Any:
        """dask's pointwise indexing: integer arrays broadcast, their dimensions first."""
        return served("vindex")(self)

    @property
    def blocks(self) -> Any:
        """dask's block indexing: ``x.blocks[i, j]`` is block ``(i, j)`` as a lazy array."""
        return served("blocks")(self)

    def __getitem__(self, index: Any) -> LazyArray:
        mask = index[0] if isinstance(index, tuple) and len(index) == 1 else index
        if isinstance(mask, LazyArray) and mask.dtype == np.bool_:
            # lazy: the length is the count of true values, computed before planning
            return served("index")(self, mask)
        return wrap(ix.getitem(self._expr, _concrete_index(index)))

    def __setitem__(self, index: Any, value: Any) -> None:
        if (
            isinstance(index, LazyArray)
            and index.dtype == np.bool_
            and index.shape == self.shape
            and isinstance(value, (bool, int, float))
        ):
            # x[mask] = scalar with a full-shape lazy mask stays lazy: where(mask, v, x)
            fill = np.asarray(value, dtype=self.dtype)  # NumPy's casting/overflow errors
            result = elementwise("where", index._expr, fill.item(), self._expr)
            if result.dtype != self.dtype:
                result = elementwise("astype", result, dtype=self.dtype)
            self._expr = result
            return
        value = as_operand(value)
        self._expr = ix.setitem(self._expr, _concrete_index(index), value)

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: Any = None,
        dl_device: Any = None,
        copy: Any = None,
    ) -> Any:
        """The computed array's DLPack capsule (the standard's keywords; CPU: no stream)."""
        if stream is not None:
            raise BufferError("lazyarr arrays live on the CPU: stream must be None")
        kwargs = {"max_version": max_version, "dl_device": dl_device, "copy": copy}
        return self.compute().__dlpack__(**{k: v for k, v in kwargs.items() if v is not None})

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)


def _clip_bound(v: Any) -> Any:
    return None if v is None else as_operand(v)


def _concrete_index(index: Any) -> Any:
    """Lazy arrays inside an index are computed: the result shape depends on them."""
    if isinstance(index, LazyArray):
        return index.compute()
    if isinstance(index, tuple):
        return tuple(i.compute() if isinstance(i, LazyArray) else i for i in index)
    if isinstance(index, list):
        arr = np.asarray(index)
        # NumPy reads an empty list as an empty integer index, not a float one
        return arr.astype(np.intp) if arr.size == 0 else arr
    return index
