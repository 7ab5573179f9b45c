"""Lazy arrays whose lengths depend on values: counted first, then planned.

``x[mask]``, ``nonzero``, ``compress``, ``bincount`` without ``minlength``
and the ``unique`` family have lengths that no shape rule gives. Such a
result is a :class:`Deferred` lazy array: it knows its dtype, its number of
axes and which axes have unknown lengths, and how to build its expression
once a few small values are known (its *needs*: the count of selected
elements in each block of a mask, a maximum). Writing expressions on it
computes nothing: every namespace function and array method called with a
deferred argument records the call, after trying it once on stand-ins
(arrays with the unknown lengths set to :data:`STAND_INS`) so that NumPy's
errors still come when the expression is written. ``compute``/``persist``,
and questions that need the lengths (``.shape``, ``len``), first compute the
needs of every deferred array the result depends on, all in one compute,
then build the rest with exact lengths and plan it. Like dask's unknown
chunks, but the lengths are never NaN to the user: asking for them computes
the counts only, never the values.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap

__all__ = ["STAND_INS", "Deferred", "defer_namespace", "deferring", "resolved", "resolving"]

STAND_INS = (840, 1680)
"""The two lengths unknown axes take when a call is tried on stand-ins: axes whose
lengths differ between the two results are unknown in the result too. Both have many
divisors, so reshapes such as ``reshape(-1, 2)`` can be tried."""

SHORT_STAND_IN = 1
"""A third length, tried where the call allows it: ``d[:5]`` has length 5 with both
:data:`STAND_INS` but not with this one, so its length stays unknown."""

_PREVIEW = -1  # _swap's marker for previews

Build = Callable[[Sequence[np.ndarray]], LazyArray]


class Deferred(LazyArray):
    """A lazy array with lengths that depend on its data (see the module docstring).

    Made by :meth:`root` (an op whose lengths come from ``needs``) or by a call
    recorded on deferred arguments; :meth:`resolve` gives the ordinary lazy
    array once the lengths are known.
    """

    _root: tuple[tuple[LazyArray, ...], Build, Callable[[int], LazyArray]] | None
    _preview: Callable[[], LazyArray] | None
    _call: tuple[_Call, int | None] | None  # the recorded call and the item it gives
    _siblings: tuple[Deferred, ...]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("deferred arrays are made by lazyarr's data-dependent functions")

    @classmethod
    def root(
        cls,
        needs: Sequence[LazyArray],
        build: Build,
        stand_in: Callable[[int], LazyArray],
        known: tuple[int | None, ...],
        preview: Callable[[], LazyArray] | None = None,
    ) -> Deferred:
        """An array built by ``build(values of needs)``; ``stand_in(n)`` is an array like
        it with its unknown axes (``None`` in ``known``) of length ``n``; ``preview()``
        the array as it would be planned with its largest lengths, for plan pictures
        (default: the stand-in)."""
        d = cls._new(known, stand_in(STAND_INS[0]).dtype)
        d._root = (tuple(needs), build, stand_in)
        d._preview = preview
        return d

    @staticmethod
    def siblings(roots: Sequence[Deferred]) -> None:
        """Make ``roots`` resolve together: resolving one resolves all, their needs computed
        once (results of one call counted by the same counts, such as ``unique_all``'s)."""
        group = tuple(roots)
        for r in group:
            if r._root is None:
                raise ValueError("only root deferred arrays can be siblings")
            r._siblings = group

    @classmethod
    def _new(cls, known: tuple[int | None, ...], dtype: np.dtype) -> Deferred:
        d = object.__new__(cls)
        d._known = known
        d._dtype = np.dtype(dtype)
        d._root = d._call = d._preview = None
        d._siblings = ()
        d._resolved = None
        d._stand_ins = {}
        return d

    # -- stand-ins and resolution ----------------------------------------------------
    def stand_in(self, n: int) -> LazyArray:
        """This array with its unknown lengths set to ``n`` (values unspecified)."""
        if self._root is None:  # the recorded call keeps its results
            call, item = self._call
            got = _pick(call.on(n), item)
            # a call whose lengths depend on the values of its stand-ins too: a stand-in
            # is plain
            return got.stand_in(n) if isinstance(got, Deferred) else got
        got = self._stand_ins.get(n)
        if got is None:
            got = self._stand_ins[n] = self._root[2](n)
        return got

    def preview(self) -> LazyArray:
        """The array as it would be planned before its lengths are counted: each root at
        its largest (every element selected), for plan pictures and ``explain``."""
        if self._resolved is not None:
            return self._resolved
        if self._root is None:
            call, item = self._call
            got = _pick(call.on(_PREVIEW), item)
            return got.preview() if isinstance(got, Deferred) else got
        got = self._stand_ins.get(_PREVIEW)
        if got is None:
            got = self._preview() if self._preview is not None else self.stand_in(STAND_INS[0])
            self._stand_ins[_PREVIEW] = got
        return got

    def resolve(self, executor: str | None = None) -> LazyArray:
        """The ordinary lazy array, built with exact lengths.

        Computes the needs of every unresolved root it depends on in one compute
        (on ``executor``, default: the configured one), once.
        """
        if self._resolved is None:
            roots = _with_siblings([r for r in _roots(self) if r._resolved is None])
            if roots:
                from lazyarr.namespace.compute import compute

                at: dict[int, int] = {}  # a need shared by siblings is computed once
                needs: list[LazyArray] = []
                for r in roots:
                    for n in r._root[0]:
                        if id(n) not in at:
                            at[id(n)] = len(needs)
                            needs.append(n)
                values = compute(*needs, executor=executor) if needs else ()
                for r in roots:
                    got = r._root[1]([values[at[id(n)]] for n in r._root[0]])
                    r._resolved = _checked(r, got, executor)
            if self._resolved is None:
                call, item = self._call
                got = _pick(call.resolved(executor), item)
                self._resolved = _checked(self, got, executor)
        return self._resolved

    @property
    def _expr(self) -> Any:  # type: ignore[override]
        # reached by code that takes any lazy array's expression: the lengths are needed now
        return self.resolve()._expr

    @_expr.setter
    def _expr(self, value: Any) -> None:
        raise AttributeError("a deferred array's expression is built when its lengths are known")

    # -- facts that need no values ----------------------------------------------------
    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._known)

    @property
    def itemsize(self) -> int:
        return self._dtype.itemsize

    @property
    def device(self) -> str:
        return "cpu"

    @property
    def known_shape(self) -> tuple[int | None, ...]:
        """The shape with ``None`` for the lengths not known until the data is counted."""
        return self._known

    # -- facts that need the lengths: computes the counts, never the values ------------
    @property
    def shape(self) -> tuple[int, ...]:
        if None not in self._known:
            return self._known  # type: ignore[return-value]
        return self.resolve().shape

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __setitem__(self, index: Any, value: Any) -> None:
        before = Deferred._new(self._known, self._dtype)
        before._root, before._call = self._root, self._call
        before._resolved, before._stand_ins = self._resolved, self._stand_ins
        after = _recorded(_assigned, (before, index, value), {})
        self._root, self._call = None, after._call
        self._resolved, self._stand_ins = None, {}
        self._known, self._dtype = after._known, after._dtype

    def __repr__(self) -> str:
        shape = ", ".join("?" if n is None else str(n) for n in self._known)
        shape += "," if len(self._known) == 1 else ""
        why = (
            "lengths marked ? are counted when it is computed or its shape is asked for"
            if None in self._known
            else "computed from an array whose length is counted first"
        )
        return f"lazyarr.Deferred<shape=({shape}), dtype={self._dtype}>: {why}"

    def _repr_html_(self) -> str:
        import html

        return f"<pre>{html.escape(repr(self))}</pre>"

    def __reduce__(self) -> Any:
        return self.resolve().__reduce__()


def _assigned(a: LazyArray, index: Any, value: Any) -> LazyArray:
    out = wrap(a._expr)  # a new handle: ``a`` itself is not written into
    out[index] = value
    return out


def _pick(result: Any, item: int | None) -> Any:
    return result if item is None else result[item]


def _checked(d: Deferred, got: Any, executor: str | None) -> LazyArray:
    """``got`` as the resolution of ``d``: a lazy array with ``d``'s dtype and known lengths
    (a deferred ``got``, from a data-dependent call, is resolved on ``executor``)."""
    if isinstance(got, Deferred):
        got = got.resolve(executor)
    if not isinstance(got, LazyArray):
        raise TypeError(f"a deferred array resolved to {type(got).__name__}, not a lazy array")
    fits = len(got.shape) == len(d._known) and all(
        k is None or k == n for k, n in zip(d._known, got.shape)
    )
    if not fits or got.dtype != d._dtype:
        raise AssertionError(
            f"deferred array of shape {d._known} and dtype {d._dtype} resolved to shape "
            f"{got.shape} and dtype {got.dtype}"
        )
    return got


def _with_siblings(roots: list[Deferred]) -> list[Deferred]:
    """``roots`` and their unresolved siblings (:meth:`Deferred.siblings`), each once."""
    out: dict[int, Deferred] = {}
    for r in roots:
        for x in (r, *r._siblings):
            # (a sibling written into by __setitem__ is a recorded call now, not a root)
            if x._resolved is None and x._root is not None:
                out.setdefault(id(x), x)
    return list(out.values())


def _roots(d: Deferred) -> list[Deferred]:
    """The root deferred arrays ``d`` depends on, each once."""
    seen: dict[int, Deferred] = {}
    stack = [d]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen[id(x)] = x
        if x._resolved is None and x._call is not None:
            stack.extend(_found((x._call[0].args, x._call[0].kwargs)))
    return [x for x in seen.values() if x._root is not None]


# -- deferring calls -----------------------------------------------------------------


def _found(value: Any) -> list[Deferred]:
    """The deferred arrays in ``value`` (arguments: nested tuples, lists and dicts).

    A long sequence is searched only if it starts with a lazy array (a list of
    arrays to stack), so ``la.asarray`` of a million Python numbers stays cheap.
    """
    if isinstance(value, Deferred):
        return [value]
    if isinstance(value, (tuple, list)):
        if len(value) > 64 and not isinstance(value[0], LazyArray):
            return []
        return [d for v in value for d in _found(v)]
    if isinstance(value, dict):
        return [d for v in value.values() for d in _found(v)]
    return []


def _swap(value: Any, n: int | None, executor: str | None = None) -> Any:
    """``value`` with each deferred array replaced by its stand-in of length ``n``, its
    preview (``n`` is ``_PREVIEW``) or its resolution (``n`` is None; the counts are
    computed on ``executor``)."""
    if isinstance(value, Deferred):
        if n is None:
            return value.resolve(executor)
        return value.preview() if n is _PREVIEW else value.stand_in(n)
    if isinstance(value, (tuple, list)) and _found(value):
        items = [_swap(v, n, executor) for v in value]
        if hasattr(value, "_fields"):  # a named tuple
            return type(value)(*items)
        return type(value)(items)
    if isinstance(value, dict) and _found(value):
        return {k: _swap(v, n, executor) for k, v in value.items()}
    return value


def resolved(value: Any, executor: str | None = None) -> Any:
    """``value`` with each deferred array in it resolved (its lengths computed on
    ``executor``, default: the configured one)."""
    return _swap(value, None, executor)


def _recorded(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` with deferred arguments: tried on stand-ins, then recorded.

    A result of lazy arrays (one, or a tuple of them) becomes deferred arrays of the
    same structure; a result of anything else (a Python number, a bool) depends on
    values, so the arguments are resolved and ``fn`` runs now.
    """
    try:
        tries = [fn(*_swap(args, n), **_swap(kwargs, n)) for n in STAND_INS]
    except Exception:
        # no stand-in fits (a reshape to a length only the data has): run it for real,
        # which raises NumPy's error if the call is wrong
        return _resolved_call(fn, args, kwargs)
    with contextlib.suppress(Exception):  # a short stand-in too, where it fits: it
        # catches lengths capped by a slice
        tries.append(fn(*_swap(args, SHORT_STAND_IN), **_swap(kwargs, SHORT_STAND_IN)))
    first = tries[0]
    call = _Call(fn, args, kwargs, dict(zip((*STAND_INS, SHORT_STAND_IN), tries)))
    if isinstance(first, LazyArray):
        return _deferred_like(tries, (call, None))
    if isinstance(first, (tuple, list)) and all(isinstance(v, LazyArray) for v in first):
        items = [_deferred_like([t[i] for t in tries], (call, i)) for i in range(len(first))]
        return type(first)(*items) if hasattr(first, "_fields") else type(first)(items)
    return _resolved_call(fn, args, kwargs)


class _Call:
    """A recorded call on deferred arguments, shared by the items of its result: it runs
    once per stand-in length, once for the preview and once resolved."""

    __slots__ = ("args", "fn", "kwargs", "results")

    def __init__(self, fn: Callable[..., Any], args: tuple, kwargs: dict, tried: dict) -> None:
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.results: dict[Any, Any] = tried

    def on(self, n: int) -> Any:
        """The call on stand-ins of length ``n`` (or on previews: ``_PREVIEW``)."""
        if n not in self.results:
            self.results[n] = self.fn(*_swap(self.args, n), **_swap(self.kwargs, n))
        return self.results[n]

    def resolved(self, executor: str | None) -> Any:
        """The call on the resolved arguments (their counts computed on ``executor``)."""
        if "resolved" not in self.results:
            args, kwargs = resolved(self.args, executor), resolved(self.kwargs, executor)
            self.results["resolved"] = self.fn(*args, **kwargs)
        return self.results["resolved"]


def _known(a: LazyArray) -> tuple[int | None, ...]:
    return a.known_shape if isinstance(a, Deferred) else a.shape


def _deferred_like(tries: list[LazyArray], call: tuple) -> Deferred:
    """The deferred result of ``call``: the lengths all ``tries`` agree on are known."""
    shapes = [_known(t) for t in tries if t.ndim == tries[0].ndim]
    known = tuple(x if all(s[ax] == x for s in shapes) else None for ax, x in enumerate(shapes[0]))
    d = Deferred._new(known, tries[0].dtype)
    d._call = call
    return d


def _wrapped(fn: Callable[..., Any], with_deferred: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, calling ``with_deferred(fn, args, kwargs)`` where an argument is deferred."""
    if getattr(fn, "__lazyarr_deferring__", False):
        return fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not (_found(args) or _found(kwargs)):
            return fn(*args, **kwargs)
        return with_deferred(fn, args, kwargs)

    call.__lazyarr_deferring__ = True  # type: ignore[attr-defined]
    return call


def _resolved_call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    executor = kwargs.get("executor")  # a compute's counts run where its values will
    return fn(*resolved(args, executor), **resolved(kwargs, executor))


def deferring(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` made to record calls whose arguments hold deferred arrays (else unchanged)."""
    return _wrapped(fn, _recorded)


def resolving(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` made to resolve deferred arguments first (it computes or writes anyway)."""
    return _wrapped(fn, _resolved_call)


# Methods of LazyArray that need the values, or write: a deferred array resolves first.
_RESOLVING_METHODS = frozenset(
    {
        "compute",
        "persist",
        "to_zarr",
        "store",
        "to_dask",
        "to_dask_array",
        "__array__",
        "_scalar",
        "__bool__",
        "__int__",
        "__float__",
        "__complex__",
        "__index__",
        "item",
        "tolist",
        "__iter__",
        "__dlpack__",
        "__dlpack_device__",
        "visualize",
        "explain",
        "chunks",
        "chunksize",
        "numblocks",
        "npartitions",
        "key",
    }
)
# Kept as Deferred defines them (facts, representation, construction).
_OWN = frozenset(vars(Deferred)) | {
    "__init__",
    "__new__",
    "__class__",
    "__getattribute__",
    "__setattr__",
    "__delattr__",
    "__init_subclass__",
    "__subclasshook__",
    "__dir__",
    "__sizeof__",
    "__format__",
    "__reduce_ex__",
    "__getstate__",
    "__str__",
    "__array_namespace__",
    "__hash__",
    "__eq__",
    "__ne__",
}


def _method(name: str, fn: Callable[..., Any], resolve: bool) -> Callable[..., Any]:
    if resolve:

        def method(self: Deferred, *args: Any, **kwargs: Any) -> Any:
            # the counts run where the values will (a compute's own executor)
            return getattr(self.resolve(kwargs.get("executor")), name)(*args, **kwargs)

    else:

        def method(self: Deferred, *args: Any, **kwargs: Any) -> Any:
            return _recorded(fn, (self, *args), kwargs)

    method.__name__ = name
    method.__doc__ = fn.__doc__
    return method


def _property(name: str, prop: property, resolve: bool) -> property:
    if resolve:
        return property(lambda self: getattr(self.resolve(), name), doc=prop.__doc__)
    return property(lambda self: _recorded(prop.fget, (self,), {}), doc=prop.__doc__)


def _install() -> None:
    """Every method and property of LazyArray on Deferred: recorded, or resolving first."""
    done = set(_OWN)
    for klass in LazyArray.__mro__[:-1]:  # not object's
        for name, value in vars(klass).items():
            if name in done:
                continue
            done.add(name)
            resolve = name in _RESOLVING_METHODS or name.startswith("__dask")
            if isinstance(value, property):
                setattr(Deferred, name, _property(name, value, resolve))
            elif callable(value) and not isinstance(value, (type, staticmethod, classmethod)):
                setattr(Deferred, name, _method(name, value, resolve))


_install()


def _eq(self: Deferred, other: Any) -> Any:
    return _recorded(LazyArray.__eq__, (self, other), {})


def _ne(self: Deferred, other: Any) -> Any:
    return _recorded(LazyArray.__ne__, (self, other), {})


Deferred.__eq__ = _eq  # type: ignore[method-assign,assignment]
Deferred.__ne__ = _ne  # type: ignore[method-assign,assignment]
Deferred.__hash__ = None  # type: ignore[assignment]


# Namespace functions that compute or write: deferred arguments are resolved first.
_RESOLVING_FUNCTIONS = frozenset(
    {"compute", "persist", "store", "to_zarr", "to_npy", "to_dask", "plan", "from_dask"}
)


def defer_namespace(
    names: dict[str, Any], handled: dict[Any, Callable[..., Any]], served: dict[str, Any]
) -> None:
    """Make the namespace functions in ``names`` (a module's globals), NumPy's dispatch
    table ``handled`` and the methods' table ``served`` (``_array.serve``: those named as
    a namespace function, ``x.map_blocks`` as ``la.map_blocks``) record calls on deferred
    arrays."""
    import types

    def wrapped(name: str, fn: Any) -> Any:
        ours = isinstance(fn, types.FunctionType) and fn.__module__.startswith("lazyarr.namespace")
        if not ours or name.startswith("_"):
            return fn
        return resolving(fn) if name in _RESOLVING_FUNCTIONS else deferring(fn)

    exported = {}  # id of a namespace function -> its wrapped version, as exported
    for name, fn in list(names.items()):
        names[name] = exported[id(fn)] = wrapped(name, fn)
    for key, fn in list(handled.items()):
        handled[key] = wrapped(getattr(fn, "__name__", ""), fn)
    for name, fn in list(served.items()):
        if name in names:
            served[name] = exported.get(id(fn), fn)
