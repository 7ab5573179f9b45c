"""The Array API ``fft`` extension (``la.fft``) with NumPy's ``numpy.fft`` names.

A transform reads its axes whole: each output block applies ``numpy.fft``
to the full extent of the transformed axes (the executor assembles them
from the input's blocks), while the other axes keep their blocks. So a
transform is exact and lazy, but one full-length line (or plane, for
``fftn``) per block must fit in memory. ``fftshift``/``ifftshift`` work
the same way; ``fftfreq``/``rfftfreq`` are closed forms over ``arange``.
Arguments, errors and warnings follow NumPy (``norm`` included).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from lazyarr._array import LazyArray, wrap
from lazyarr._convert import as_expr
from lazyarr.graph.expr import Expr
from lazyarr.graph.ops import elementwise
from lazyarr.graph.ops import linalg as lin
from lazyarr.namespace._register import implements
from lazyarr.namespace.creation import arange

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]


def __dir__() -> list[str]:
    """The public names only: ``dir()`` and tab completion show no ``np``, ``Expr`` or helpers."""
    return sorted(__all__)


def _axis(axis: Any, ndim: int, name: str) -> int:
    """A non-negative axis; ``IndexError`` when out of range, as ``numpy.fft``."""
    ax = operator.index(axis)
    if not -ndim <= ax < ndim:
        raise IndexError(f"fft.{name}: axis {ax} is out of bounds for an array of dimension {ndim}")
    return ax % ndim


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise TypeError(f"fft.{name}: out= is not supported by lazy arrays")


def _int_or_none(v: Any) -> int | None:
    return None if v is None else operator.index(v)


def _transform(name: str, x: Expr, axes: Sequence[int], kwargs: dict[str, Any]) -> Expr:
    """``numpy.fft.<name>(x, **kwargs)`` over the (already normalized) ``axes``."""
    func = f"fft.{name}"
    probe_kw = dict(kwargs)
    if "axis" in kwargs:
        probe_kw["axis"] = kwargs["axis"] + 1
    else:
        probe_kw["axes"] = tuple(a + 1 for a in kwargs["axes"])
    shape, dtype = lin.probe_prepended(lin.CORE_FUNCS[func], [x], probe_kw, op=func)
    core = tuple(sorted(set(axes)))
    return lin.core_map(func, [x], [core], core, shape, dtype, kwargs)


def _fft1(name: str, a: Any, n: Any, axis: int, norm: str | None, out: Any) -> LazyArray:
    _no_out(out, name)
    x = as_expr(a)
    ax = _axis(axis, x.ndim, name)
    kwargs = {"n": _int_or_none(n), "axis": ax, "norm": norm}
    return wrap(_transform(name, x, (ax,), kwargs))


def _fftn(name: str, a: Any, s: Any, axes: Any, norm: str | None, out: Any) -> LazyArray:
    _no_out(out, name)
    x = as_expr(a)
    if axes is None:
        if s is not None:
            warnings.warn(
                "`axes` should not be `None` if `s` is not `None` (Deprecated in NumPy 2.0). "
                "In a future version of NumPy, this will raise an error and `s[i]` will "
                "correspond to the size along the transformed axis specified by `axes[i]`. "
                "To retain current behaviour, pass a sequence [0, ..., k-1] to `axes` for "
                "an array of dimension k.",
                DeprecationWarning,
                stacklevel=3,
            )
        k = x.ndim if s is None else len(s)
        axes = range(-k, 0)
    axes_n = tuple(_axis(ax, x.ndim, name) for ax in axes)
    if s is not None:
        s = tuple(_int_or_none(v) for v in s)
    return wrap(_transform(name, x, axes_n, {"s": s, "axes": axes_n, "norm": norm}))


@implements("fft.fft")
def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None):
    """One-dimensional discrete Fourier transform along ``axis``."""
    return _fft1("fft", a, n, axis, norm, out)


@implements("fft.ifft")
def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None):
    """One-dimensional inverse discrete Fourier transform along ``axis``."""
    return _fft1("ifft", a, n, axis, norm, out)


@implements("fft.rfft")
def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None):
    """Transform of real input: the ``n // 2 + 1`` non-negative frequencies."""
    return _fft1("rfft", a, n, axis, norm, out)


@implements("fft.irfft")
def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None):
    """Inverse of :func:`rfft` (real output of length ``n``, default ``2 * (m - 1)``)."""
    return _fft1("irfft", a, n, axis, norm, out)


@implements("fft.hfft")
def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None):
    """Transform of a Hermitian-symmetric signal (real output)."""
    return _fft1("hfft", a, n, axis, norm, out)


@implements("fft.ihfft")
def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None, out: Any = None):
    """Inverse of :func:`hfft`."""
    return _fft1("ihfft", a, n, axis, norm, out)


@implements("fft.fftn")
def fftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None):
    """N-dimensional discrete Fourier transform over ``axes`` (all by default)."""
    return _fftn("fftn", a, s, axes, norm, out)


@implements("fft.ifftn")
def ifftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None):
    """N-dimensional inverse discrete Fourier transform."""
    return _fftn("ifftn", a, s, axes, norm, out)


@implements("fft.rfftn")
def rfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None):
    """N-dimensional transform of real input (last axis halved)."""
    return _fftn("rfftn", a, s, axes, norm, out)


@implements("fft.irfftn")
def irfftn(a: Any, s: Any = None, axes: Any = None, norm: str | None = None, out: Any = None):
    """Inverse of :func:`rfftn`."""
    return _fftn("irfftn", a, s, axes, norm, out)


@implements("fft.fft2")
def fft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None):
    """Two-dimensional discrete Fourier transform."""
    return _fftn("fftn", a, s, axes, norm, out)


@implements("fft.ifft2")
def ifft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None):
    """Two-dimensional inverse discrete Fourier transform."""
    return _fftn("ifftn", a, s, axes, norm, out)


@implements("fft.rfft2")
def rfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None):
    """Two-dimensional transform of real input."""
    return _fftn("rfftn", a, s, axes, norm, out)


@implements("fft.irfft2")
def irfft2(a: Any, s: Any = None, axes: Any = (-2, -1), norm: str | None = None, out: Any = None):
    """Inverse of :func:`rfft2`."""
    return _fftn("irfftn", a, s, axes, norm, out)


def _shift(name: str, x: Any, axes: Any) -> LazyArray:
    e = as_expr(x)
    if e.ndim == 0:
        # NumPy's roll fails on 0-d input; fail the same way, but before computing
        raise ValueError(f"fft.{name}: a 0-d array has no axes to shift")
    if axes is None:
        axes_n: tuple[int, ...] = tuple(range(e.ndim))
    elif isinstance(axes, (int, np.integer)):
        axes_n = (_axis(axes, e.ndim, name),)
    else:
        axes_n = tuple(_axis(a, e.ndim, name) for a in axes)
    core = tuple(sorted(set(axes_n)))
    func = f"fft.{name}"
    return wrap(lin.core_map(func, [e], [core], core, e.shape, e.dtype, {"axes": axes_n}))


@implements("fft.fftshift")
def fftshift(x: Any, axes: Any = None) -> LazyArray:
    """Move the zero frequency to the centre (``roll`` by ``n // 2`` on ``axes``)."""
    return _shift("fftshift", x, axes)


@implements("fft.ifftshift")
def ifftshift(x: Any, axes: Any = None) -> LazyArray:
    """Inverse of :func:`fftshift`."""
    return _shift("ifftshift", x, axes)


def _freq_dtype(values: LazyArray, dtype: Any) -> LazyArray:
    return values if dtype is None else values.astype(dtype)


def _check_n(n: Any, name: str) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ValueError(f"fft.{name}: n should be an integer, not {n!r}")
    return int(n)


@implements("fft.fftfreq")
def fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> LazyArray:
    """Sample frequencies ``[0, 1, ..., -1] / (d * n)`` of a length-``n`` transform."""
    n = _check_n(n, "fftfreq")
    val = 1.0 / (n * d)
    i = arange(n)._expr
    k = elementwise(
        "where", elementwise("less", i, (n - 1) // 2 + 1), i, elementwise("subtract", i, n)
    )
    return _freq_dtype(wrap(elementwise("multiply", k, val)), dtype)


@implements("fft.rfftfreq")
def rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None) -> LazyArray:
    """Non-negative sample frequencies ``[0, 1, ..., n // 2] / (d * n)``."""
    n = _check_n(n, "rfftfreq")
    val = 1.0 / (n * d)
    return _freq_dtype(wrap(elementwise("multiply", arange(n // 2 + 1)._expr, val)), dtype)
