"""Philox words by position: the word-to-counter mapping, regions, words drawn, mulhi.

Every random value is a function of the words its element owns (``philox.py``):
these tests pin the mapping of words to NumPy's Philox, check that any region
reads exactly its elements' words whichever way it is drawn, and count the
words a block draws.
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from lazyarr.kernels.reference import philox
from lazyarr.kernels.reference.distributions import mulhi

KEY = philox.key(2024)


def reference_words(n: int, k: np.ndarray = KEY) -> np.ndarray:
    """Words ``[0, n)``: NumPy's Philox from counter 0, drawn in one go."""
    return np.random.Philox(key=k).random_raw(n)


def test_word_w_is_output_w_mod_4_of_counter_w_div_4_plus_1():
    ref = reference_words(64)
    for w in range(64):
        # Philox at counter c puts out the words of counter c + 1 first
        assert np.random.Philox(key=KEY, counter=w // 4).random_raw(4)[w % 4] == ref[w]
    assert np.array_equal(philox.key(2024), np.random.SeedSequence(2024).generate_state(2, "u8"))


def test_a_stream_from_any_word_equals_the_stream_from_zero_sliced():
    ref = reference_words(300)
    for a in range(0, 41):
        for b in (a, a + 1, a + 2, a + 3, a + 5, a + 8, a + 13, 300):
            np.testing.assert_array_equal(philox.stream(KEY, a, b - a), ref[a:b])
    # a far position, and a counter above 2**64 (every counter word is set)
    far = 4 * 10**12 + 3
    np.testing.assert_array_equal(
        philox.stream(KEY, far, 7), np.random.Philox(key=KEY, counter=far // 4).random_raw(10)[3:]
    )
    huge = 2**70 + 2
    np.testing.assert_array_equal(
        philox.stream(KEY, huge, 5),
        np.random.Philox(key=KEY, counter=huge // 4).random_raw(7)[2:],
    )


def test_draws_of_other_keys_in_between_leave_no_trace():
    other = philox.key(7)
    ref = reference_words(50)
    for a in (1, 5, 9):
        philox.stream(other, 3, 6)  # leaves buffered words of another key
        np.testing.assert_array_equal(philox.stream(KEY, a, 20), ref[a : a + 20])


def random_regions(shape: tuple[int, ...], rng: np.random.Generator, n: int):
    for _ in range(n):
        region = []
        for size in shape:
            lo = int(rng.integers(0, size + 1))
            region.append(slice(lo, int(rng.integers(lo, size + 1))))
        yield tuple(region)


@pytest.mark.parametrize("shape", [(), (1,), (50,), (13, 17), (5, 6, 7), (3, 70, 40), (0, 4)])
@pytest.mark.parametrize("per", [1, 2])
@pytest.mark.parametrize("gap", [0, 64, philox.WORD_GAP, 10**9])
def test_region_words_are_the_elements_own_words(shape, per, gap, monkeypatch):
    """Every split into drawn spans and jumped rows gives each element its own words."""
    monkeypatch.setattr(philox, "WORD_GAP", gap)
    n = math.prod(shape)
    words = reference_words(n * per).reshape(*shape, per)
    rng = np.random.default_rng(sum(shape) + per)
    regions = [tuple(slice(0, s) for s in shape), *random_regions(shape, rng, 40)]
    for region in regions:
        got = philox.region_words(KEY, philox.runs(shape, region), per)
        assert got.shape == (*(s.stop - s.start for s in region), per)
        np.testing.assert_array_equal(got, words[region])


def count_words(monkeypatch) -> list[int]:
    drawn: list[int] = []
    draw = philox._draw
    monkeypatch.setattr(philox, "_draw", lambda bg, n: drawn.append(n) or draw(bg, n))
    return drawn


@pytest.mark.parametrize(
    "shape, region, most",
    [
        # a 100-element block of a 10**7-element array: its words and at most 3 more
        ((10**7,), (slice(5_000_001, 5_000_101),), 103),
        ((10**7,), (slice(9_999_900, 10**7),), 103),
        # rows far apart (1000 words): one jump per row, 3 spare words per row
        ((10**4, 10**3), (slice(200, 210), slice(501, 511)), 10 * 13),
        # rows close together (gaps of 90 words): drawn through as one span
        ((10**5, 100), (slice(70, 80), slice(3, 13)), 9 * 100 + 10 + 3),
        # a 5 x 4 x 5 block of a 10**7-element cube: the 4 runs of each of the 5
        # rows are 200 words apart, so each row is drawn through (605 words);
        # the rows, 50,000 words apart, are jumped
        ((200, 250, 200), (slice(7, 12), slice(9, 13), slice(190, 195)), 5 * (605 + 3)),
    ],
)
def test_a_block_draws_only_its_own_words(shape, region, most, monkeypatch):
    drawn = count_words(monkeypatch)
    got = philox.region_words(KEY, philox.runs(shape, region), 1)
    assert got.size <= sum(drawn) <= most


def test_threads_draw_independently():
    ref = reference_words(4000)
    errors = []

    def work(offset: int) -> None:
        for a in range(offset, 3000, 37):
            if not np.array_equal(philox.stream(KEY, a, 1000), ref[a : a + 1000]):
                errors.append(a)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_mulhi_is_the_exact_high_word_of_the_product():
    rng = np.random.default_rng(5)
    u = np.concatenate(
        [
            rng.integers(0, 2**64, 2000, dtype=np.uint64, endpoint=False),
            np.array([0, 1, 2**32 - 1, 2**32, 2**63, 2**64 - 1], dtype=np.uint64),
        ]
    )
    ranges = [1, 2, 3, 10, 255, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 10**12 + 7]
    ranges += [2**63 - 1, 2**63, 2**63 + 12345, 2**64 - 1, 2**64]
    ranges += [int(r) for r in rng.integers(2**32, 2**63, 5)]
    for r in ranges:
        want = [int(x) * r >> 64 for x in u]
        assert mulhi(u, r).tolist() == want, r


def test_counter_words_are_numpys_philox_words():
    from lazyarr.kernels.reference.philox import counter_words, key, stream

    k = key(5)
    counters = np.array([0, 1, 7, 123_456_789, 2**40 + 3, 2**63 - 1], dtype=np.uint64)
    want = np.stack([stream(k, int(c) * 4, 4) for c in counters])
    np.testing.assert_array_equal(counter_words(k, counters), want)


def test_many_short_rows_equal_the_whole_draw():
    import lazyarr as la

    x = la.random.random((3_000, 700), seed=9, chunks=(1_000, 700))
    whole = x.compute(optimize=False)
    for index in [np.s_[::37, 5], np.s_[::-41, 600:603], np.s_[7::100, ::350]]:
        np.testing.assert_array_equal(x[index].compute(), whole[index])
