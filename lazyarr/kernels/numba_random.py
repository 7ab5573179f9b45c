"""Random blocks drawn by a compiled Philox4x64-10: every region, any size, no generator object.

``reference/philox.py`` fixes which words an element owns (word ``w`` is
output ``w % 4`` of counter ``w // 4 + 1``, NumPy's ``Philox`` stepping its
counter first) and the reference kernel (``reference/creation.py``) draws
them from NumPy's C ``Philox`` and converts them with NumPy. This kernel
computes the same words and converts them in one compiled, GIL-free loop
that writes the block: values are bit-identical to the reference kernel's
(``tests/kernels/test_numba_random.py``), for every region of every shape.

Philox multiplies 64 by 64 bits into 128. Numba has no 128-bit integer, so
the kernel's source defines :func:`_mul128`, a Numba intrinsic that emits
LLVM's ``mul i128`` (one ``mul``/``mulx`` instruction on x86-64); splitting
each product into four 32-bit ones, as plain uint64 arithmetic must, made
the kernel 2.3x slower. Measured per float64 on one core of the 2-core
Xeon (AVX-512) this was written on, into a block in cache: this kernel
4.1 ns, NumPy's ``Philox`` words alone 9.3-10 ns (plus the conversion), and
NumPy's ``PCG64`` ``Generator.random`` (what dask.array draws) 4.2-4.5 ns.

Compiled draws: ``random`` (float64, float32), ``uniform`` with scalar
bounds (float64, float32) and ``integers`` (signed and unsigned integer
dtypes), over plain regions (no slice window). Everything else (the
two-word normals, whose ``log``/``sin`` NumPy computes with its own SIMD
routines, and the rejection samplers) stays with the reference kernel.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.creation import Random
from lazyarr.kernels.compile import Options, compile_kernel
from lazyarr.kernels.emit import Arg, Kernel
from lazyarr.kernels.reference import philox

__all__ = ["random_source", "supports"]

Source = Callable[[Region], np.ndarray]

# The block's runs (philox.Runs) travel as one int64 array: start, run, then
# (count, stride) of each outer axis, in C order. ``params`` are the
# distribution's two scalars (see ``_params``).
_SOURCE = '''
from llvmlite import ir as _ir
from numba import types as _types
from numba.extending import intrinsic as _intrinsic

_M0 = np.uint64(0xD2E7470EE14C6C93)
_M1 = np.uint64(0xCA5A826395121157)
_W0 = np.uint64(0x9E3779B97F4A7C15)
_W1 = np.uint64(0xBB67AE8584CAA73B)
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_TWO = np.uint64(2)
_THREE = np.uint64(3)
_FOUR = np.uint64(4)


@_intrinsic
def _mul128(typingctx, a, b):
    """The 128-bit product of two uint64 as (high, low) words: LLVM's ``mul i128``."""
    sig = _types.UniTuple(_types.uint64, 2)(_types.uint64, _types.uint64)

    def codegen(context, builder, signature, args):
        wide = _ir.IntType(128)
        p = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        hi = builder.trunc(builder.lshr(p, _ir.Constant(wide, 64)), _ir.IntType(64))
        lo = builder.trunc(p, _ir.IntType(64))
        return context.make_tuple(builder, signature.return_type, (hi, lo))

    return sig, codegen


@njit(inline="always")
def _counter(k0, k1, c):
    """The four words of Philox4x64-10 at counter ``c + 1`` (NumPy steps first)."""
    c0 = c + _ONE
    c1 = _ONE if c0 == _ZERO else _ZERO
    c2 = _ZERO
    c3 = _ZERO
    for _ in range(10):
        hi0, lo0 = _mul128(c0, _M0)
        hi1, lo1 = _mul128(c2, _M1)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0 = k0 + _W0
        k1 = k1 + _W1
    return c0, c1, c2, c3


@njit(inline="always")
def _value(v, p0, p1):
    return {convert}


@njit(inline="always")
def _run(k0, k1, w, n, p0, p1, out, i):
    """Elements ``w .. w + n - 1`` (flat indices, one word each) into ``out[i:]``."""
    end = w + np.uint64(n)
    while w < end:
        c = w >> _TWO
        x = _counter(k0, k1, c)
        if (w & _THREE) == _ZERO and w + _FOUR <= end:
            out[i] = _value(x[0], p0, p1)
            out[i + 1] = _value(x[1], p0, p1)
            out[i + 2] = _value(x[2], p0, p1)
            out[i + 3] = _value(x[3], p0, p1)
            i += 4
            w += _FOUR
            continue
        stop = min(end, (c + _ONE) << _TWO)
        while w < stop:
            out[i] = _value(x[w & _THREE], p0, p1)
            i += 1
            w += _ONE
    return i


@njit(nogil=True)
def {name}(key, runs, params, out):
    k0, k1 = key[0], key[1]
    p0, p1 = params[0], params[1]
    start, run = runs[0], runs[1]
    n_outer = (runs.shape[0] - 2) // 2
    rows = 1
    for a in range(n_outer):
        rows *= runs[2 + 2 * a]
    pos = np.zeros(max(n_outer, 1), np.int64)
    i = 0
    for _row in range(rows):
        first = start
        for a in range(n_outer):
            first += pos[a] * runs[3 + 2 * a]
        i = _run(k0, k1, np.uint64(first), run, p0, p1, out, i)
        for a in range(n_outer - 1, -1, -1):  # the next row, C order
            pos[a] += 1
            if pos[a] < runs[2 + 2 * a]:
                break
            pos[a] = 0
'''

_UNIT = "(np.float64(v >> np.uint64(11)) * 1.1102230246251565e-16)"
_INTEGER = "(v if p0 == _ZERO else _mul128(v, p0)[0]) + p1"
_INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")

_CONVERT: dict[tuple[str, str], str] = {
    # each bit-identical to reference/distributions.py's conversion
    ("random", "float64"): _UNIT,
    ("random", "float32"): "np.float32(v >> np.uint64(40)) * np.float32(5.960464477539063e-08)",
    ("uniform", "float64"): f"p0 + p1 * {_UNIT}",
    ("uniform", "float32"): f"np.float32(p0 + p1 * {_UNIT})",
    # low + floor(v * r / 2**64) in uint64 (r = 2**64 passed as 0), wrapped into the dtype
    **{("integers", d): f"np.{d}({_INTEGER})" for d in _INTEGERS},
}

_PARAM_DTYPE = {"random": "float64", "uniform": "float64", "integers": "uint64"}


def supports(expr: Expr) -> bool:
    """Whether ``expr`` is a draw this kernel computes (see the module docstring)."""
    op = expr.op
    if not isinstance(op, Random) or op.window is not None:
        return False
    if (op.dist, np.dtype(expr.dtype).name) not in _CONVERT:
        return False
    return op.dist != "uniform" or all(isinstance(a, numbers.Real) for a in op.args)


def _params(op: Random) -> np.ndarray:
    """The two scalars the conversion reads, as the reference computes them."""
    if op.dist == "uniform":
        low, high = op.args
        # NumPy converts each operand to float64 where it meets the float64 words
        return np.array([np.float64(low), np.float64(high - low)], np.float64)
    if op.dist == "integers":
        low, high = op.args[0], op.args[1]
        r = high - low + (1 if len(op.args) > 2 and op.args[2] else 0)
        return np.array([r % (1 << 64), low % (1 << 64)], np.uint64)
    return np.zeros(2, np.float64)


def _kernel(dist: str, dtype: np.dtype) -> Kernel:
    name = f"philox_{dist}_{dtype.name}"
    source = _SOURCE.replace("{name}", name).replace("{convert}", _CONVERT[dist, dtype.name])
    args = (
        Arg("key", "uint64", readonly=True),
        Arg("runs", "int64", readonly=True),
        Arg("params", _PARAM_DTYPE[dist], readonly=True),
        Arg("out", dtype.name),
    )
    return Kernel(source=source, args=args, n_inputs=3, name=name)


def random_source(expr: Expr, options: Options) -> Source:
    """The compiled source function of ``expr`` (``supports(expr)`` must hold):
    ``region -> block``, values equal to the reference kernel's."""
    dtype = np.dtype(expr.dtype)
    fn = compile_kernel(_kernel(expr.op.dist, dtype), options)
    key = philox.key(expr.op.seed)
    params = _params(expr.op)
    shape = expr.shape

    def draw(out: Region) -> np.ndarray:
        if len(out) == 1:  # the common case, kept short: one run
            (sl,) = out
            block = np.empty(sl.stop - sl.start, dtype)
            if block.size:
                fn(key, np.array((sl.start, block.size), np.int64), params, block)
            return block
        _, start, run, outer = philox.runs(shape, out)
        block = np.empty(tuple(sl.stop - sl.start for sl in out), dtype)
        if block.size:
            spec = np.empty(2 + 2 * len(outer), np.int64)
            spec[0], spec[1] = start, run
            for a, (c, st) in enumerate(outer):
                spec[2 + 2 * a], spec[3 + 2 * a] = c, st
            fn(key, spec, params, block.reshape(-1))
        return block

    return draw
