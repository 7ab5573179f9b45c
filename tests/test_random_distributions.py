"""The random distributions of issue 13: chunk-independent values, statistics, NumPy's errors.

Every distribution must give the same values for every chunking (1, 7,
100, whole) on every local executor, with scalar and array parameters;
its samples must have the right moments and pass a two-sample KS test
against NumPy's own generator for the same parameters (fixed seeds, so
these statistical checks are deterministic); bad arguments raise NumPy's
exception types when the expression is written; ``choice`` follows ``p``
and permutations are permutations.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from test_random_counter import assert_chunk_independent

import lazyarr as la
from lazyarr.testing import assert_same_error, executors_under_test

SHAPES = [(), (0,), (157,), (13, 11)]
LAM = np.linspace(0.0, 40.0, 11)  # both poisson regimes (inversion below 10, PTRS above)

MAKERS = {
    "exponential": lambda s, **kw: la.random.exponential(2.5, s, **kw),
    "standard_exponential": lambda s, **kw: la.random.standard_exponential(s, **kw),
    "lognormal": lambda s, **kw: la.random.lognormal(0.5, 0.75, s, **kw),
    "gamma_small": lambda s, **kw: la.random.gamma(0.3, 2.0, s, **kw),
    "gamma": lambda s, **kw: la.random.gamma(4.5, 0.5, s, **kw),
    "standard_gamma32": lambda s, **kw: la.random.standard_gamma(2.0, s, dtype="f4", **kw),
    "beta": lambda s, **kw: la.random.beta(0.5, 3.0, s, **kw),
    "poisson_small": lambda s, **kw: la.random.poisson(3.5, s, **kw),
    "poisson_large": lambda s, **kw: la.random.poisson(250.0, s, **kw),
    "binomial_small": lambda s, **kw: la.random.binomial(12, 0.3, s, **kw),
    "binomial_large": lambda s, **kw: la.random.binomial(1000, 0.7, s, **kw),
}

ARRAY_MAKERS = {
    "normal_numpy": lambda s, **kw: la.random.normal(np.arange(11.0), 2.0, (*s, 11), **kw),
    "normal_lazy": lambda s, **kw: la.random.normal(
        la.arange(11.0, chunks=4), la.full((1,), 0.5), (*s, 11), **kw
    ),
    "uniform": lambda s, **kw: la.random.uniform(0.0, np.arange(1.0, 12.0), (*s, 11), **kw),
    "exponential": lambda s, **kw: la.random.exponential(np.arange(11.0), (*s, 11), **kw),
    "lognormal": lambda s, **kw: la.random.lognormal(np.ones(11), 0.1, (*s, 11), **kw),
    "poisson": lambda s, **kw: la.random.poisson(LAM, (*s, 11), **kw),
    "gamma": lambda s, **kw: la.random.gamma(LAM + 0.1, la.ones(11), (*s, 11), **kw),
    "beta": lambda s, **kw: la.random.beta(LAM + 0.5, 2.0, (*s, 11), **kw),
    "binomial": lambda s, **kw: la.random.binomial(np.arange(0, 110, 10), 0.4, (*s, 11), **kw),
}


def _chunkings(shape: tuple[int, ...]) -> list:
    return [1, 7, 100, shape or ()]


@pytest.mark.parametrize("name", sorted(MAKERS))
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_values_do_not_depend_on_chunks_or_executor(name, shape):
    assert_chunk_independent(MAKERS[name], shape, _chunkings(shape))


@pytest.mark.parametrize("name", sorted(ARRAY_MAKERS))
def test_array_parameters_do_not_depend_on_chunks_or_executor(name):
    make = ARRAY_MAKERS[name]
    ref = make((9,), chunks=(9, 11), seed=5).compute(executor="numpy")
    assert ref.shape == (9, 11)
    for chunks in (1, 7, 100):
        for executor in executors_under_test():
            got = make((9,), chunks=chunks, seed=5).compute(executor=executor)
            np.testing.assert_array_equal(got, ref, err_msg=f"{chunks=} {executor=}")


def test_array_parameters_draw_the_values_of_equal_scalar_parameters():
    # a RandomMap element is the Random source's element where the parameters agree
    got = la.random.gamma(np.full((5, 7), 2.5), 1.5, seed=3).compute()
    want = la.random.gamma(2.5, 1.5, (5, 7), seed=3).compute()
    np.testing.assert_array_equal(got, want)
    got = la.random.poisson(np.array([3.0, 30.0]), (6, 2), seed=4).compute()
    np.testing.assert_array_equal(got[:, 0], la.random.poisson(3.0, (6, 2), seed=4).compute()[:, 0])
    np.testing.assert_array_equal(
        got[:, 1], la.random.poisson(30.0, (6, 2), seed=4).compute()[:, 1]
    )


def test_array_parameters_broadcast_as_numpy_does():
    assert la.random.normal(np.zeros(3), np.ones((2, 1))).shape == (2, 3)
    assert la.random.poisson(la.ones((4, 1)), (5, 4, 3)).shape == (5, 4, 3)
    assert la.random.binomial(np.arange(3), 0.5).dtype == np.int64
    for call in (
        lambda m: m.normal(np.zeros(3), 1.0, (2, 2)),
        lambda m: m.normal(np.zeros(3), np.ones(2)),
        lambda m: m.gamma(np.ones((2, 3)), 1.0, 3),
    ):
        assert_same_error(lambda c=call: c(np.random.default_rng(0)), lambda c=call: c(la.random))


# -- statistics ------------------------------------------------------------------------

N = 200_000

# name: (lazy sampler, NumPy sampler, mean, variance)
STATS = {
    "exponential": (
        lambda: la.random.exponential(2.5, N, seed=11),
        lambda g: g.exponential(2.5, N),
        2.5,
        6.25,
    ),
    "lognormal": (
        lambda: la.random.lognormal(0.5, 0.75, N, seed=12),
        lambda g: g.lognormal(0.5, 0.75, N),
        math.exp(0.5 + 0.75**2 / 2),
        (math.exp(0.75**2) - 1) * math.exp(1 + 0.75**2),
    ),
    "gamma_small": (
        lambda: la.random.gamma(0.3, 2.0, N, seed=13),
        lambda g: g.gamma(0.3, 2.0, N),
        0.6,
        1.2,
    ),
    "gamma": (
        lambda: la.random.gamma(4.5, 0.5, N, seed=14),
        lambda g: g.gamma(4.5, 0.5, N),
        2.25,
        1.125,
    ),
    "beta": (
        lambda: la.random.beta(0.5, 3.0, N, seed=15),
        lambda g: g.beta(0.5, 3.0, N),
        0.5 / 3.5,
        1.5 / (3.5**2 * 4.5),
    ),
    "poisson_small": (
        lambda: la.random.poisson(3.5, N, seed=16),
        lambda g: g.poisson(3.5, N),
        3.5,
        3.5,
    ),
    "poisson_large": (
        lambda: la.random.poisson(250.0, N, seed=17),
        lambda g: g.poisson(250.0, N),
        250.0,
        250.0,
    ),
    "binomial_small": (
        lambda: la.random.binomial(12, 0.3, N, seed=18),
        lambda g: g.binomial(12, 0.3, N),
        3.6,
        2.52,
    ),
    "binomial_large": (
        lambda: la.random.binomial(1000, 0.7, N, seed=19),
        lambda g: g.binomial(1000, 0.7, N),
        700.0,
        210.0,
    ),
    "normal_arrays": (
        lambda: la.random.normal(np.full(N, 1.0), la.full(N, 2.0), seed=20),
        lambda g: g.normal(1.0, 2.0, N),
        1.0,
        4.0,
    ),
}


@pytest.mark.parametrize("name", sorted(STATS))
def test_moments_and_ks_against_numpys_generator(name):
    lazy, numpy_sampler, mean, var = STATS[name]
    x = lazy().compute().astype(np.float64)
    # sample mean within 5 standard errors, sample variance within 5% (fixed seeds)
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N), (x.mean(), mean)
    assert abs(x.var() / var - 1) < 0.05, (x.var(), var)
    ref = numpy_sampler(np.random.default_rng(2024))
    assert stats.ks_2samp(x, ref).pvalue > 1e-3


def test_gamma_and_poisson_with_array_parameters_follow_each_elements_law():
    lam = np.array([0.5, 7.0, 12.0, 1000.0])
    x = la.random.poisson(lam, (50_000, 4), seed=21).compute()
    np.testing.assert_allclose(x.mean(axis=0), lam, rtol=0.02)
    np.testing.assert_allclose(x.var(axis=0), lam, rtol=0.05)
    k = np.array([0.2, 1.0, 30.0])
    g = la.random.gamma(k, 2.0, (50_000, 3), seed=22).compute()
    np.testing.assert_allclose(g.mean(axis=0), 2 * k, rtol=0.03)


def test_edge_parameters_give_numpys_values():
    assert (la.random.poisson(0.0, 10, seed=1).compute() == 0).all()
    assert (la.random.gamma(0.0, 1.0, 10, seed=1).compute() == 0).all()
    assert (la.random.binomial(7, 1.0, 10, seed=1).compute() == 7).all()
    assert (la.random.binomial(0, 0.5, 10, seed=1).compute() == 0).all()
    assert (la.random.binomial(7, 0.0, 10, seed=1).compute() == 0).all()
    b = la.random.beta(1e-3, 1e-3, 1000, seed=2).compute()
    assert ((b >= 0) & (b <= 1)).all()


# -- argument errors -------------------------------------------------------------------

BAD = [
    lambda m: m.exponential(-1.0, 3),
    lambda m: m.exponential(np.array([1.0, -1.0])),
    lambda m: m.lognormal(0.0, -1.0, 3),
    lambda m: m.poisson(-1.0, 3),
    lambda m: m.poisson(1e20, 3),
    lambda m: m.poisson(np.array([1.0, -2.0])),
    lambda m: m.gamma(-1.0, 1.0, 3),
    lambda m: m.gamma(1.0, -1.0, 3),
    lambda m: m.beta(0.0, 1.0, 3),
    lambda m: m.beta(1.0, -1.0, 3),
    lambda m: m.binomial(-1, 0.5, 3),
    lambda m: m.binomial(5, 1.5, 3),
    lambda m: m.binomial(5, np.nan, 3),
    lambda m: m.normal(0.0, -1.0, 3),
    lambda m: m.normal(0.0, 1.0, -3),
    lambda m: m.choice(0, 3),
    lambda m: m.choice(5, 6, replace=False),
    lambda m: m.choice(5, 3, p=[0.5, 0.5]),
    lambda m: m.choice(3, 3, p=[0.5, 0.6, -0.1]),
    lambda m: m.choice(3, 2, replace=False, p=[1.0, 0.0, 0.0]),
    lambda m: m.choice(np.ones((2, 2)), 3, axis=2),
    lambda m: m.permutation(np.float64(3.0)),
    lambda m: m.permutation(np.ones((2, 3)), axis=2),
    lambda m: m.multivariate_normal([0.0, 0.0], np.eye(3)),
    lambda m: m.multivariate_normal([0.0], [[1.0]], check_valid="nope"),
    lambda m: m.multivariate_normal([0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]], check_valid="raise"),
]


@pytest.mark.parametrize("call", BAD, ids=range(len(BAD)))
def test_bad_arguments_raise_numpys_exception_types(call):
    assert_same_error(
        lambda: call(np.random.default_rng(0)), lambda: call(la.random.default_rng(0))
    )


# -- choice, permutations, multivariate normal -----------------------------------------

SAMPLERS = {
    "choice": lambda c, s: la.random.choice(50, (7, 9), chunks=c, seed=s),
    "choice_p": lambda c, s: la.random.choice(4, 63, p=[0.1, 0.2, 0.3, 0.4], chunks=c, seed=s),
    "choice_array": lambda c, s: la.random.choice(
        la.arange(40.0, chunks=c).reshape(8, 5), 6, axis=1, seed=s
    ),
    "choice_noreplace": lambda c, s: la.random.choice(100, 30, replace=False, seed=s),
    "choice_noreplace_p": lambda c, s: la.random.choice(
        6, 4, replace=False, p=[0.0, 0.1, 0.2, 0.3, 0.4, 0.0], seed=s
    ),
    "permutation_n": lambda c, s: la.random.permutation(60, chunks=c, seed=s),
    "permutation_x": lambda c, s: la.random.permutation(
        la.arange(60, chunks=c).reshape(12, 5), axis=1, seed=s
    ),
    "shuffle": lambda c, s: la.random.shuffle(la.arange(60, chunks=c), seed=s),
    "permuted": lambda c, s: la.random.permuted(
        la.arange(60, chunks=c).reshape(6, 10), axis=1, seed=s
    ),
    "permuted_flat": lambda c, s: la.random.permuted(
        la.arange(60, chunks=c).reshape(6, 10), seed=s
    ),
    "mvn": lambda c, s: la.random.multivariate_normal(
        [1.0, -1.0, 0.0], [[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]], 40, chunks=c, seed=s
    ),
}


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_samplers_do_not_depend_on_chunks_or_executor(name):
    make = SAMPLERS[name]
    ref = make(1000, 9).compute(executor="numpy")
    for chunks in (1, 7, 100):
        for executor in executors_under_test():
            got = make(chunks, 9).compute(executor=executor)
            assert got.shape == ref.shape and got.dtype == ref.dtype
            if name == "mvn":  # a matmul: BLAS may round the last bits differently
                np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-14)
            else:
                np.testing.assert_array_equal(got, ref, err_msg=f"{chunks=} {executor=}")


def test_shapes_and_dtypes_follow_numpy():
    g, r = la.random.default_rng(1), np.random.default_rng(1)
    pairs = [
        (g.choice(5), r.choice(5)),
        (g.choice(5, (2, 3)), r.choice(5, (2, 3))),
        (g.choice(np.ones((4, 3)), 2), r.choice(np.ones((4, 3)), 2)),
        (g.choice(np.ones((4, 3)), (2, 5), axis=1), r.choice(np.ones((4, 3)), (2, 5), axis=1)),
        (g.choice(np.ones((4, 3))), r.choice(np.ones((4, 3)))),
        (g.permutation(0), r.permutation(0)),
        (g.permutation(np.ones((3, 4)), axis=1), r.permutation(np.ones((3, 4)), axis=1)),
        (
            g.multivariate_normal([0, 0], np.eye(2), (3, 4)),
            r.multivariate_normal([0, 0], np.eye(2), (3, 4)),
        ),
        (g.poisson(2.0), r.poisson(2.0)),
    ]
    for got, want in pairs:
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)


def test_choice_respects_p():
    p = np.array([0.05, 0.0, 0.25, 0.7])
    x = la.random.choice(4, 100_000, p=p, seed=31).compute()
    freq = np.bincount(x, minlength=4) / x.size
    np.testing.assert_allclose(freq, p, atol=0.005)
    assert freq[1] == 0
    # without replacement: distinct, never a zero-probability item, first pick ~ p
    first = np.array(
        [la.random.choice(4, 2, replace=False, p=p, seed=s).compute() for s in range(400)]
    )
    assert (first[:, 0] != first[:, 1]).all() and not (first == 1).any()
    freq = np.bincount(first[:, 0], minlength=4) / len(first)
    np.testing.assert_allclose(freq, p, atol=0.06)
    # the law of the whole sample: choice(3, 2, replace=False, p) against NumPy's
    q = [0.5, 0.3, 0.2]
    got = [tuple(la.random.choice(3, 2, replace=False, p=q, seed=s).compute()) for s in range(600)]
    g = np.random.default_rng(0)
    want = [tuple(g.choice(3, 2, replace=False, p=q)) for _ in range(600)]
    pairs = sorted(set(want))
    counts = [[got.count(k) for k in pairs], [want.count(k) for k in pairs]]
    assert stats.chi2_contingency(counts).pvalue > 1e-3


def test_choice_without_replacement_is_uniform_and_distinct():
    x = la.random.choice(np.arange(10.0, 20.0), 10, replace=False, seed=3).compute()
    assert sorted(x) == list(np.arange(10.0, 20.0))
    firsts = [int(la.random.choice(5, 3, replace=False, seed=s).compute()[0]) for s in range(500)]
    assert stats.chisquare(np.bincount(firsts, minlength=5)).pvalue > 1e-3


def test_permutations_are_permutations():
    for n in (0, 1, 2, 1000):
        perm = la.random.permutation(n, chunks=7, seed=n).compute()
        assert perm.dtype == np.int64
        np.testing.assert_array_equal(np.sort(perm), np.arange(n))
    assert not (la.random.permutation(1000, seed=1).compute() == np.arange(1000)).all()
    x = np.arange(60).reshape(12, 5)
    rows = la.random.permutation(x, seed=2).compute()
    np.testing.assert_array_equal(np.sort(rows[:, 0]), x[:, 0])
    np.testing.assert_array_equal(rows[:, 1:] - rows[:, :1], x[:, 1:] - x[:, :1])  # rows stay whole
    each = la.random.permuted(x, axis=1, seed=3).compute()
    np.testing.assert_array_equal(np.sort(each, axis=1), x)
    flat = la.random.permuted(x, seed=4).compute()
    assert flat.shape == x.shape
    np.testing.assert_array_equal(np.sort(flat.ravel()), x.ravel())
    # every one of the 6 orders of 3 items, about equally often
    orders = [tuple(la.random.permutation(3, seed=s).compute()) for s in range(600)]
    assert len(set(orders)) == 6
    assert stats.chisquare([orders.count(o) for o in set(orders)]).pvalue > 1e-3


def test_multivariate_normal_has_the_mean_and_covariance():
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    for method in ("svd", "cholesky", "eigh"):
        x = la.random.multivariate_normal(mean, cov, 100_000, method=method, seed=8).compute()
        assert x.shape == (100_000, 3)
        np.testing.assert_allclose(x.mean(axis=0), mean, atol=0.02)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.03)
    ref = np.random.default_rng(3).multivariate_normal(mean, cov, 100_000)
    assert stats.ks_2samp(x[:, 1], ref[:, 1]).pvalue > 1e-3


def test_default_rng_has_numpys_methods_and_repeats_with_the_seed():
    g = la.random.default_rng(5)
    names = [n for n in dir(np.random.Generator) if not n.startswith("_")]
    wanted = {
        "beta", "binomial", "choice", "exponential", "gamma", "integers", "lognormal",
        "multivariate_normal", "normal", "permutation", "permuted", "poisson", "random",
        "shuffle", "standard_exponential", "standard_gamma", "standard_normal", "uniform",
    }  # fmt: skip
    assert wanted <= set(names) and all(callable(getattr(g, n)) for n in wanted)
    a = [g.gamma(2.0, 1.0, 50), g.poisson(4.0, 50), g.choice(10, 5, replace=False)]
    h = la.random.default_rng(5)
    b = [h.gamma(2.0, 1.0, 50), h.poisson(4.0, 50), h.choice(10, 5, replace=False)]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.compute(), y.compute())
    assert not np.array_equal(a[0].compute(), g.gamma(2.0, 1.0, 50).compute())


# -- how the words are used ------------------------------------------------------------


def test_retries_read_numpys_philox_keyed_by_the_elements_own_words():
    from lazyarr.kernels.reference import philox

    words = np.random.Philox(key=[7, 9]).random_raw(30).reshape(5, 6)
    keys = words[:, 4:].T
    for j in (0, 1, 5):
        got = philox.counter_words(keys, np.full(5, j, dtype=np.uint64))
        for i in range(5):
            want = np.random.Philox(key=words[i, 4:], counter=j).random_raw(4)
            np.testing.assert_array_equal(got[i], want)


def test_a_slice_draws_the_values_of_the_whole_array():
    # pushdown makes the Random source draw only the sliced elements
    for make in (
        lambda: la.random.gamma(0.8, 1.0, (50, 40), chunks=(9, 13), seed=6),
        lambda: la.random.poisson(30.0, (50, 40), chunks=(9, 13), seed=6),
        lambda: la.random.beta(2.0, 0.5, (50, 40), chunks=(9, 13), seed=6),
        lambda: la.random.poisson(np.arange(40.0), (50, 40), chunks=(9, 13), seed=6),
    ):
        whole = make().compute()
        np.testing.assert_array_equal(make()[3:40:3, ::7].compute(), whole[3:40:3, ::7])
        np.testing.assert_array_equal(make()[::-5, 2].compute(), whole[::-5, 2])


def test_plans_of_the_new_ops_survive_json():
    from lazyarr.graph.serialize import exprs_from_json, exprs_to_json

    xs = [
        la.random.poisson(np.arange(3.0), (4, 3), seed=1),
        la.random.binomial(la.arange(3), 0.5, seed=2),
        la.random.permutation(5, seed=3),
        la.random.choice(4, 3, replace=False, p=[0.1, 0.2, 0.3, 0.4], seed=4),
    ]
    table, roots = exprs_to_json([x._expr for x in xs])
    back = exprs_from_json(table)
    assert [back[r].key for r in roots] == [x._expr.key for x in xs]


def test_writing_the_expressions_computes_nothing():
    with la.config.set(executor="raise"):
        lam = la.arange(6.0)
        g = la.random.default_rng(3)
        xs = [
            g.poisson(lam),
            g.gamma(lam + 1, 2.0, (4, 6)),
            g.normal(lam, la.ones(6)),
            g.choice(lam, 3),
            g.choice(lam, 3, replace=False),
            g.permutation(lam.reshape(2, 3), axis=1),
            g.permuted(lam.reshape(2, 3), axis=0),
            g.shuffle(lam),
            g.multivariate_normal(np.zeros(2), np.eye(2), 5),
        ]
    assert all(isinstance(x, la.LazyArray) for x in xs)
