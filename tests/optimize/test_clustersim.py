"""ClusterSim: copy costs, replicas, the objective, same-host discount, determinism."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lazyarr.optimize.placement.clustersim import (
    MEMORY,
    NET_IN,
    NET_OUT,
    ClusterSim,
    SimOp,
    host_ids,
)


def test_copy_cost_and_loads_in_bytes():
    sim = ClusterSim(3)
    sim.place("a", 1000, 0)
    moved = sim.commit(SimOp(("a",), "b", 10), 1)
    assert moved == 1000
    assert sim.load[MEMORY].tolist() == [1000.0, 1010.0, 0.0]
    assert sim.load[NET_IN].tolist() == [0.0, 1000.0, 0.0]
    assert sim.load[NET_OUT].tolist() == [1000.0, 0.0, 0.0]
    assert sim.bytes_in.tolist() == [0, 1000, 0]
    assert sim.moves == 1
    assert sim.holders("a") == [0, 1]
    assert sim.holders("b") == [1]
    # objective = max memory + max in + max out
    assert sim.objective() == 1010.0 + 1000.0 + 1000.0


def test_local_inputs_move_nothing():
    sim = ClusterSim(2)
    sim.place("a", 64, 1)
    assert sim.commit(SimOp(("a", "a"), "b", 64), 1) == 0
    assert sim.moves == 0
    assert sim.load[NET_IN].sum() == 0 and sim.load[NET_OUT].sum() == 0


def test_replicas_stop_later_traffic():
    sim = ClusterSim(2)
    sim.place("a", 500, 0)
    assert sim.commit(SimOp(("a",), "b", 1), 1) == 500
    before = sim.load.copy()
    # a second reader on worker 1 finds the replica: no copy, only its output
    assert sim.commit(SimOp(("a",), "c", 1), 1) == 0
    assert sim.moves == 1
    assert (sim.load[NET_IN] == before[NET_IN]).all()
    assert sim.load[MEMORY, 1] == before[MEMORY, 1] + 1
    assert sim.move("a", 1) == 0  # already held


def test_simulate_leaves_state_alone_and_predicts_commit():
    sim = ClusterSim(4)
    for i in range(4):
        sim.place(("x", i), 100 * (i + 1), i)
    op = SimOp((("x", 0), ("x", 3)), "y", 50)
    snapshot = (sim.load.copy(), {k: list(v) for k, v in sim.loc.items()}, sim.objective())
    predicted = sim.simulate(op, 2)
    assert (sim.load == snapshot[0]).all()
    assert sim.loc == snapshot[1] and sim.objective() == snapshot[2]
    sim.commit(op, 2)
    assert sim.objective() == predicted


def test_lookahead_adds_the_move_to_the_owner():
    sim = ClusterSim(2)
    sim.place("a", 1000, 0)
    op = SimOp(("a",), "b", 300)
    plain = sim.simulate(op, 0)
    ahead = sim.simulate(op, 0, lookahead=1)
    # memory max 1300 either way; the look-ahead adds 300 in and 300 out
    assert plain == 1300.0
    assert ahead == 1300.0 + 300.0 + 300.0
    assert sim.simulate(op, 0, lookahead=0) == plain  # look-ahead to itself is free


def test_weights_scale_each_row():
    sim = ClusterSim(2, weights=(0.0, 2.0, 1.0))
    sim.place("a", 100, 0)
    sim.commit(SimOp(("a",), "b", 7), 1)
    assert sim.objective() == 2.0 * 100 + 1.0 * 100


def test_same_host_transfers_are_cheaper():
    sim = ClusterSim(4, hosts=("h0", "h0", "h1", "h1"), local_coeff=0.1)
    sim.place("a", 1000, 0)
    sim.move("a", 1)  # same host
    assert sim.load[NET_IN, 1] == pytest.approx(100.0)
    assert sim.load[NET_OUT, 0] == pytest.approx(100.0)
    assert sim.load[MEMORY, 1] == 1000.0  # memory is the full size
    assert sim.bytes_in[1] == 1000  # raw bytes are not discounted
    sim.move("a", 3)  # other host: full cost, from the first holder
    assert sim.load[NET_IN, 3] == 1000.0
    assert sim.load[NET_OUT, 0] == pytest.approx(1100.0)
    # a copy to worker 2 comes from its same-host holder (3), at the local rate
    assert sim.source_for("a", 2) == 3
    sim.move("a", 2)
    assert sim.load[NET_OUT, 3] == pytest.approx(100.0)
    assert sim.load[NET_IN, 2] == pytest.approx(100.0)


def test_host_ids_number_hosts_by_first_appearance():
    assert host_ids(("b", "a", "b", "c")) == (0, 1, 0, 2)
    assert host_ids((), 3) == (0, 1, 2)
    assert ClusterSim(4, hosts=("b", "a", "b", "c")).host_of == (0, 1, 0, 2)


def test_no_hosts_means_every_worker_is_its_own_host():
    sim = ClusterSim(2)
    sim.place("a", 10, 0)
    sim.move("a", 1)
    assert sim.load[NET_IN, 1] == 10.0


def test_copy_is_independent():
    sim = ClusterSim(2)
    sim.place("a", 10, 0)
    other = sim.copy()
    other.move("a", 1)
    assert sim.holders("a") == [0] and other.holders("a") == [0, 1]
    assert sim.load[NET_IN].sum() == 0 and other.load[NET_IN].sum() == 10
    assert sim.objective() == 10.0 and other.objective() == 30.0


def test_alias_shares_size_and_holders():
    sim = ClusterSim(2)
    sim.place("a", 10, 1)
    sim.alias("a", "b")
    assert sim.holders("b") == [1] and sim.size["b"] == 10
    with pytest.raises(KeyError):
        sim.alias("a", "b")


def test_bad_arguments():
    with pytest.raises(ValueError, match="at least one worker"):
        ClusterSim(0)
    with pytest.raises(ValueError, match="hosts"):
        ClusterSim(2, hosts=("h0",))
    with pytest.raises(ValueError, match="weights"):
        ClusterSim(2, weights=(1.0,))
    sim = ClusterSim(2)
    sim.place("a", 1, 0)
    with pytest.raises(KeyError):
        sim.place("a", 1, 1)
    with pytest.raises(IndexError):
        sim.simulate(SimOp(("a",), "b", 1), 2)
    with pytest.raises(IndexError):
        sim.place("z", 1, -1)


ops_strategy = st.lists(
    st.tuples(
        st.lists(st.integers(0, 7), min_size=0, max_size=3),  # inputs among earlier blocks
        st.integers(0, 3),  # worker
        st.integers(0, 5000),  # output size
    ),
    min_size=1,
    max_size=25,
)


def _run(ops, hosts):
    sim = ClusterSim(4, hosts=hosts)
    for i in range(4):
        sim.place(("s", i), 1000 + i, i)
    names = [("s", i) for i in range(4)]
    predictions = []
    for j, (ins, w, size) in enumerate(ops):
        op = SimOp(tuple(names[i % len(names)] for i in ins), ("o", j), size)
        predictions.append(sim.simulate(op, w))
        sim.commit(op, w)
        # equal up to rounding: a commit adds the copies and the output one at a time
        assert sim.objective() == pytest.approx(predictions[-1], rel=1e-12)
        names.append(("o", j))
    return sim


@given(ops_strategy, st.sampled_from([(), ("a", "a", "b", "b")]))
def test_commits_match_predictions_and_are_deterministic(ops, hosts):
    one, two = _run(ops, hosts), _run(ops, hosts)
    assert np.array_equal(one.load, two.load)
    assert one.loc == two.loc and one.moves == two.moves
    # the running row maxima agree with the array
    assert one.objective() == pytest.approx(float(one.load.max(axis=1).sum()))
    # every copied byte shows up once in net-in and once in net-out
    assert one.load[NET_IN].sum() == pytest.approx(one.load[NET_OUT].sum())
    if not hosts:
        assert one.bytes_in.sum() == pytest.approx(one.load[NET_IN].sum())
