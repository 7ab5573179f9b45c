"""Philox words addressed by position: any region of a random array drawn alone.

Every element of a random array owns a fixed run of words of one Philox
stream: the element at flat (C-order) index ``i`` owns words
``[i * per, (i + 1) * per)``, where ``per`` is the distribution's words per
element. A block draws only its own words, jumping over the words of the
elements it does not hold, so its cost follows its own size and its values
do not depend on the chunking.

NumPy's ``Philox`` (4x64-10) makes four 64-bit words per counter value and
steps its counter *before* computing: a generator at counter ``c`` first
puts out the four words of counter ``c + 1``. So word ``w`` of a key's
stream is output ``w % 4`` of counter ``w // 4 + 1``: what ``Philox(key=key,
counter=w // 4)`` puts out after ``w % 4`` words, and what ``Philox(key=key)``
puts out as its ``w``-th word. ``tests/kernels/test_philox.py`` pins this.
A draw sets a per-thread generator's ``state`` to the key and the counter
(a jump in O(1)) and drops whatever words it had buffered.
"""

from __future__ import annotations

import functools
import itertools
import math
import threading
from typing import NamedTuple

import numpy as np

from lazyarr.graph.expr import Region
from lazyarr.kernels.reference.bits import mulhi

__all__ = ["WORD_GAP", "Runs", "key", "region_words", "runs", "stream"]

WORD_GAP = 512
"""Rows of runs closer than this many words are drawn through, not jumped:
a jump (moving the generator plus another draw call, ~1.5 us) costs about
as much as drawing 500 words."""

_WORD = np.dtype(np.uint64)
_M64 = (1 << 64) - 1


@functools.lru_cache(maxsize=256)
def key(seed: int) -> np.ndarray:
    """The Philox key of ``seed``: two words of NumPy's ``SeedSequence(seed)``.

    Hashing the seed (rather than using it as the key) gives unrelated
    streams for neighbouring seeds and takes seeds of any size.
    """
    words = np.random.SeedSequence(seed).generate_state(2, np.uint64)
    words.flags.writeable = False
    return words


class _Scratch(threading.local):
    """One Philox per thread, set to each draw's key and counter.

    Setting ``state`` costs a third of building a generator, which would
    otherwise be the largest fixed cost of a small block.
    """

    def __init__(self) -> None:
        self.bg = np.random.Philox(0)
        self.counter = np.zeros(4, _WORD)
        self.buffer = np.zeros(4, _WORD)


_SCRATCH = _Scratch()


def _generator(k: np.ndarray, counter: int) -> np.random.Philox:
    """This thread's Philox at ``counter`` with key ``k`` and no buffered words."""
    s = _SCRATCH
    c = s.counter
    c[0] = counter & _M64
    c[1] = (counter >> 64) & _M64
    c[2] = (counter >> 128) & _M64
    c[3] = (counter >> 192) & _M64
    s.bg.state = {
        "bit_generator": "Philox",
        "state": {"counter": c, "key": k},
        "buffer": s.buffer,
        "buffer_pos": 4,
        "has_uint32": 0,
        "uinteger": 0,
    }
    return s.bg


def _draw(bg: np.random.Philox, n: int) -> np.ndarray:
    # the one place words are drawn (tests count the words through it)
    return bg.random_raw(n)


def stream(k: np.ndarray, first: int, n: int) -> np.ndarray:
    """Words ``[first, first + n)`` of the stream of key ``k``."""
    skip = first % 4
    return _draw(_generator(k, first // 4), skip + n)[skip:]


class Runs(NamedTuple):
    """A region as runs of flat indices.

    A run is the region's extent along the last axis together with the
    trailing axes it covers whole; ``outer`` holds the ``(count, stride)``
    of the other axes with more than one run, in C order.
    """

    counts: tuple[int, ...]
    start: int
    run: int
    outer: tuple[tuple[int, int], ...]


def _strides(shape: tuple[int, ...]) -> list[int]:
    out = [1] * len(shape)
    for ax in range(len(shape) - 2, -1, -1):
        out[ax] = out[ax + 1] * shape[ax + 1]
    return out


def runs(shape: tuple[int, ...], region: Region) -> Runs:
    """The runs of ``region`` in an array of ``shape``."""
    if len(shape) == 1:  # the common case, kept short
        (sl,) = region
        return Runs((sl.stop - sl.start,), sl.start, sl.stop - sl.start, ())
    return strided_runs(shape, tuple((sl.start, 1, sl.stop - sl.start) for sl in region))


def strided_runs(shape: tuple[int, ...], axes: tuple[tuple[int, int, int], ...]) -> Runs:
    """The runs of the positions ``start + step * i`` (``i < count``) per axis of an
    array of ``shape`` (steps positive): a window's elements, in C order."""
    counts = tuple(c for _, _, c in axes)
    if not shape:
        return Runs((), 0, 1, ())
    strides = _strides(shape)
    start = sum(s * st for (s, _, _), st in zip(axes, strides, strict=True))
    ax = len(shape) - 1
    while ax > 0 and counts[ax] == shape[ax]:
        ax -= 1
    # the run covers axis ``ax`` when its positions are adjacent, else one element of it
    last = ax if axes[ax][1] == 1 or counts[ax] <= 1 else ax + 1
    run = counts[ax] * strides[ax] if last == ax else strides[ax]
    outer = tuple((counts[a], axes[a][1] * strides[a]) for a in range(last) if counts[a] > 1)
    return Runs(counts, start, run, outer)


def region_words(k: np.ndarray, r: Runs, per: int) -> np.ndarray:
    """The words of the elements of the region ``r``: shape ``(*counts, per)``, uint64.

    Rows of runs closer than ``WORD_GAP`` words are drawn as one span, gaps
    included; the generator jumps to each of the remaining rows (one draw
    per row). The result is a strided view of the drawn words.
    """
    counts, start, run, outer = r
    if 0 in counts:
        return np.empty((*counts, per), _WORD)
    if not outer:
        return stream(k, start * per, run * per).reshape(*counts, per)
    # draw through short gaps: merge the innermost outer axes whose rows are close
    span = run
    rows = len(outer)
    while rows and (outer[rows - 1][1] - span) * per < WORD_GAP:
        count, stride = outer[rows - 1]
        span += (count - 1) * stride
        rows -= 1
    row_words = span * per
    if rows == 0:
        words = stream(k, start * per, row_words)
    else:
        words = _rows(k, start, outer[:rows], row_words, per)
    row_strides = _strides(tuple(c for c, _ in outer[:rows]))
    view = np.ndarray(
        (*(c for c, _ in outer), run, per),
        _WORD,
        buffer=words,
        strides=(
            *(s * row_words * 8 for s in row_strides),
            *(st * per * 8 for _, st in outer[rows:]),
            per * 8,
            8,
        ),
    )
    return view.reshape(*counts, per)


SHORT_ROW_WORDS = 16
"""Rows of at most this many words, when there are at least :data:`MANY_ROWS` of
them, are computed by :func:`counter_words` instead of one generator jump each."""
MANY_ROWS = 16

_M0, _M1 = 0xD2E7470EE14C6C93, 0xCA5A826395121157
_W0, _W1 = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBB67AE8584CAA73B)


def counter_words(k: np.ndarray, counters: np.ndarray) -> np.ndarray:
    """The four words of each Philox4x64-10 counter value (what a generator at counter
    ``c`` puts out first, NumPy stepping it before computing), for many counters at once:
    shape ``(n, 4)``. ``tests/kernels/test_philox.py`` pins it to NumPy's ``Philox``.
    ``k`` is one key (two words) or one key per counter (shape ``(2, n)``)."""
    c0 = counters.astype(np.uint64) + np.uint64(1)
    c1 = (c0 == 0).astype(np.uint64)  # the carry of counter 2**64 - 1
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0, k1 = np.asarray(k[0], np.uint64), np.asarray(k[1], np.uint64)
    with np.errstate(over="ignore"):
        for _ in range(10):
            hi0, lo0 = mulhi(c0, _M0), c0 * np.uint64(_M0)
            hi1, lo1 = mulhi(c2, _M1), c2 * np.uint64(_M1)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
            k0, k1 = k0 + _W0, k1 + _W1
    return np.stack([c0, c1, c2, c3], axis=1)


def _rows(
    k: np.ndarray, start: int, rows: tuple[tuple[int, int], ...], row_words: int, per: int
) -> np.ndarray:
    """``row_words`` words from each row start: ``start`` plus a C-order mix of
    ``rows``' ``(count, stride)``; one draw per row, or, for many short rows
    (``x[::1000, 0]``), every word computed at once by :func:`counter_words`."""
    n_rows = math.prod(c for c, _ in rows)
    if row_words <= SHORT_ROW_WORDS and n_rows >= MANY_ROWS:
        first = np.full((), start, dtype=np.int64)
        for c, st in rows:
            first = (first[..., None] + np.arange(c, dtype=np.int64) * st) if c else first
        first = first.reshape(-1) * per
        last = int(first.max()) + row_words if first.size else 0
        if last < 1 << 62:
            pos = (first[:, None] + np.arange(row_words, dtype=np.int64)).ravel()
            block = counter_words(k, (pos // 4).astype(np.uint64))
            return block[np.arange(pos.size), pos % 4].reshape(n_rows, row_words)
    words = np.empty((n_rows, row_words), _WORD)
    offsets = itertools.product(*(range(0, c * st, st) for c, st in rows))
    for i, offset in enumerate(offsets):
        words[i] = stream(k, (start + sum(offset)) * per, row_words)
    return words
