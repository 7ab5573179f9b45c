"""Uniform random blocks drawn by a compiled Philox4x64-10: no generator object per block.

The reference kernel (``reference/creation.py``) draws a block's words from
NumPy's ``Philox`` by setting a per-thread generator's state, then converts
them with NumPy: about 13 µs of fixed cost per block, most of a 100-element
block's time. This kernel computes the same words (``reference/philox.py``
fixes which words an element owns: word ``w`` is output ``w % 4`` of counter
``w // 4 + 1``) and converts them in one compiled call, so a block costs a
call plus its own words (about 10 ns per element, so only regions of up to
:data:`COMPILED_MAX_ELEMENTS` use it). Larger regions that are one run of flat
indices take NumPy's C Philox words a piece at a time and convert them with a
compiled loop that releases the GIL (:func:`stream_source`). Values are
bit-identical to the reference kernel's (``tests/kernels/test_numba_random.py``);
only ``random`` draws (float64 and float32) over plain regions are compiled,
everything else stays with the reference kernel.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lazyarr.graph.expr import Expr, Region
from lazyarr.graph.ops.creation import Random
from lazyarr.kernels.compile import Options, compile_kernel
from lazyarr.kernels.emit import Arg, Kernel
from lazyarr.kernels.reference import philox

__all__ = [
    "COMPILED_MAX_ELEMENTS",
    "STREAM_PIECE_WORDS",
    "by_size",
    "random_source",
    "stream_source",
    "supports",
]

Source = Callable[[Region], np.ndarray]

# The block's runs (philox.Runs) travel as one int64 array: start, run, then
# (count, stride) of each outer axis, in C order.
_SOURCE = '''
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_M0 = np.uint64(0xD2E7470EE14C6C93)
_M1 = np.uint64(0xCA5A826395121157)
_W0 = np.uint64(0x9E3779B97F4A7C15)
_W1 = np.uint64(0xBB67AE8584CAA73B)
_ONE = np.uint64(1)
_TWO = np.uint64(2)
_THREE = np.uint64(3)


@njit(inline="always")
def _mulhi(a, b):
    """High 64 bits of the 128-bit product of two uint64."""
    ah, al = a >> _S32, a & _M32
    bh, bl = b >> _S32, b & _M32
    hl, lh = ah * bl, al * bh
    mid = ((al * bl) >> _S32) + (hl & _M32) + (lh & _M32)
    return ah * bh + (hl >> _S32) + (lh >> _S32) + (mid >> _S32)


@njit(inline="always")
def _block(k0, k1, counter, words):
    """The four words of Philox4x64-10 at ``counter + 1`` (NumPy steps first)."""
    c0 = counter + _ONE
    c1 = _ONE if c0 == np.uint64(0) else np.uint64(0)
    c2 = np.uint64(0)
    c3 = np.uint64(0)
    for _ in range(10):
        hi0, lo0 = _mulhi(c0, _M0), c0 * _M0
        hi1, lo1 = _mulhi(c2, _M1), c2 * _M1
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
        k0 = k0 + _W0
        k1 = k1 + _W1
    words[0] = c0
    words[1] = c1
    words[2] = c2
    words[3] = c3


@njit(nogil=True)
def {name}(key, runs, out):
    k0, k1 = key[0], key[1]
    start, run = runs[0], runs[1]
    n_outer = (runs.shape[0] - 2) // 2
    rows = 1
    for a in range(n_outer):
        rows *= runs[2 + 2 * a]
    words = np.empty(4, np.uint64)
    pos = np.zeros(max(n_outer, 1), np.int64)
    held = np.uint64(0xFFFFFFFFFFFFFFFF)  # the counter whose words are in ``words``
    i = 0
    for _row in range(rows):
        first = start
        for a in range(n_outer):
            first += pos[a] * runs[3 + 2 * a]
        for j in range(run):
            w = np.uint64(first + j)
            c = w >> _TWO
            if c != held:
                _block(k0, k1, c, words)
                held = c
            v = words[w & _THREE]
            out[i] = {convert}
            i += 1
        for a in range(n_outer - 1, -1, -1):  # the next row, C order
            pos[a] += 1
            if pos[a] < runs[2 + 2 * a]:
                break
            pos[a] = 0
'''

_CONVERT = {
    # bit-identical to reference/distributions._random
    np.dtype(np.float64): "np.float64(v >> np.uint64(11)) * 1.1102230246251565e-16",
    np.dtype(np.float32): "np.float32(v >> np.uint64(40)) * np.float32(5.960464477539063e-08)",
}


COMPILED_MAX_ELEMENTS = 768
"""Regions up to this many elements are drawn by the compiled kernel, bigger ones by the
reference kernel. Measured per region (1-d, float64): compiled 3.4 / 7.1 / 11.7 / 42 µs
for 100 / 512 / 1,024 / 4,096 elements, reference 6.9 / 9.0 / 11.1 / 24 µs: NumPy's
C Philox multiplies in 128 bits where this one splits each product into four 32-bit ones,
so the compiled kernel only wins where the reference's fixed cost dominates."""


STREAM_PIECE_WORDS = 1 << 16
"""Words a large region draws from NumPy's Philox at a time before the compiled
conversion writes them into the block (512 KiB: the words stay in cache)."""

_CONVERT_SOURCE = """
@njit(nogil=True)
def {name}(words, out):
    for i in range(out.shape[0]):
        v = words[i]
        out[i] = {convert}
"""


def by_size(compiled: Source, large: Source) -> Source:
    """A source that draws regions of up to ``COMPILED_MAX_ELEMENTS`` with ``compiled``
    and larger ones with ``large`` (both give the same values)."""

    def draw(out: Region) -> np.ndarray:
        n = 1
        for sl in out:
            n *= sl.stop - sl.start
        return compiled(out) if n <= COMPILED_MAX_ELEMENTS else large(out)

    return draw


def supports(expr: Expr) -> bool:
    """Whether ``expr`` is a source this kernel draws (``random`` float draws, no window)."""
    op = expr.op
    return (
        isinstance(op, Random)
        and op.dist == "random"
        and op.window is None
        and expr.dtype in _CONVERT
    )


def _kernel(dtype: np.dtype) -> Kernel:
    name = f"philox_random_{dtype.name}"
    source = _SOURCE.replace("{name}", name).replace("{convert}", _CONVERT[dtype])
    args = (Arg("key", "uint64", readonly=True), Arg("runs", "int64"), Arg("out", dtype.name))
    return Kernel(source=source, args=args, n_inputs=2, name=name)


def _converter(dtype: np.dtype) -> Kernel:
    name = f"philox_words_to_{dtype.name}"
    source = _CONVERT_SOURCE.replace("{name}", name).replace("{convert}", _CONVERT[dtype])
    args = (Arg("words", "uint64", readonly=True), Arg("out", dtype.name))
    return Kernel(source=source, args=args, n_inputs=1, name=name)


def stream_source(expr: Expr, options: Options, reference: Source) -> Source:
    """``region -> block`` for large regions: NumPy's C Philox draws the words a piece at
    a time and a compiled, GIL-free loop converts each piece into the block. The
    reference kernel's NumPy conversion makes two temporaries per piece and holds the
    GIL between them: two threads drawing 1 MiB blocks ran only 1.3x faster than one.
    Regions that are not one run of flat indices (a 2-d block narrower than its array)
    go to ``reference``. Values equal the reference kernel's."""
    dtype = np.dtype(expr.dtype)
    fn = compile_kernel(_converter(dtype), options)
    key = philox.key(expr.op.seed)
    shape = expr.shape

    def draw(out: Region) -> np.ndarray:
        r = philox.runs(shape, out)
        if r.outer:
            return reference(out)
        block = np.empty(tuple(sl.stop - sl.start for sl in out), dtype)
        flat = block.reshape(-1)
        for lo in range(0, flat.size, STREAM_PIECE_WORDS):
            hi = min(flat.size, lo + STREAM_PIECE_WORDS)
            fn(philox.stream(key, r.start + lo, hi - lo), flat[lo:hi])
        return block

    return draw


def random_source(expr: Expr, options: Options) -> Source:
    """The compiled source function of ``expr`` (``supports(expr)`` must hold):
    ``region -> block``, values equal to the reference kernel's."""
    dtype = np.dtype(expr.dtype)
    fn = compile_kernel(_kernel(dtype), options)
    key = philox.key(expr.op.seed)
    shape = expr.shape

    def draw(out: Region) -> np.ndarray:
        if len(out) == 1:  # the common case, kept short: one run
            (sl,) = out
            block = np.empty(sl.stop - sl.start, dtype)
            if block.size:
                fn(key, np.array((sl.start, block.size), np.int64), block)
            return block
        _, start, run, outer = philox.runs(shape, out)
        block = np.empty(tuple(sl.stop - sl.start for sl in out), dtype)
        if block.size:
            spec = np.empty(2 + 2 * len(outer), np.int64)
            spec[0], spec[1] = start, run
            for a, (c, st) in enumerate(outer):
                spec[2 + 2 * a], spec[3 + 2 * a] = c, st
            fn(key, spec, block.reshape(-1))
        return block

    return draw
