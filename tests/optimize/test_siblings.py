"""Horizontal fusion: which stages the fuse pass marks as siblings (one pass over shared inputs)."""

from __future__ import annotations

import numpy as np
from test_fuse import plan_of

import lazyarr as la
from lazyarr.optimize.plan import Plan
from lazyarr.optimize.siblings import sibling_groups
from lazyarr.testing import assert_eq

DATA = np.arange(60.0).reshape(6, 10) % 7


def lazy(chunks=(3, 5)):
    return la.asarray(DATA, chunks=chunks, copy=True)


def ops(plan: Plan, names) -> set[str]:
    return {"+".join(m.op.label() for m in plan.stages[n].members) for n in names}


def test_mean_and_std_of_one_array_are_siblings():
    x = lazy()
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    p = plan_of(y)
    assert [ops(p, g) for g in p.siblings] == [{"mean", "std"}]
    assert "siblings  one pass over shared inputs" in la.explain(y)
    assert_eq(y, (DATA - DATA.mean(0)) / DATA.std(0))


def test_full_reductions_and_fused_bodies_join_one_pass():
    x = lazy()
    outs = (x.sum(), x.max(), (x * 2).min(), la.sqrt(x).mean())
    p = plan_of(*outs)
    assert [ops(p, g) for g in p.siblings] == [{"sum", "max", "multiply+min", "sqrt+mean"}]
    for got, want in zip(
        la.compute(*outs), (DATA.sum(), DATA.max(), (DATA * 2).min(), np.sqrt(DATA).mean())
    ):
        np.testing.assert_allclose(got, want)


def test_dependent_or_differently_gridded_stages_are_not_siblings():
    x = lazy()
    s = x.sum()
    p = plan_of(s, (x - s).sum())  # the second reads the first
    assert p.siblings == ()
    q = plan_of(x.sum(axis=0), x.sum(axis=1))  # different reduced axes
    assert q.siblings == ()
    other = la.asarray(DATA, chunks=(2, 5), copy=True)
    r = plan_of(x.sum(), other.max())  # nothing shared
    assert r.siblings == ()


def test_elementwise_outputs_over_one_grid_are_siblings():
    a, b = lazy(), lazy() + 1
    p = plan_of(a * b, a - b, a.T)
    groups = [ops(p, g) for g in p.siblings]
    assert groups == [{"multiply", "subtract"}] or groups == [{"add+multiply", "add+subtract"}]


def test_sibling_groups_are_recomputed_from_any_plan():
    x = lazy()
    p = plan_of(x.sum(), x.max(), passes=("cse", "simplify"))
    assert len(sibling_groups(p)) == 1
    assert "siblings" not in p.notes  # only the fuse pass records them
