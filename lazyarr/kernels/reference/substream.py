"""Rejection sampling that stays chunk-independent: each element retries on its own sub-stream.

Samplers without a closed-form inverse (gamma, and poisson and binomial
for large means) propose a value and accept or reject it, so an element
may need any number of words. To keep every element a function of
``(seed, flat index)`` alone, an element owns :data:`PER` words of the
array's stream (``philox.py``):

* words ``0..3`` are its first proposal, so most elements (over 90% for
  every sampler here) cost nothing beyond their own six words;
* words ``4, 5`` are the Philox key of the element's own sub-stream: its
  ``j``-th retry uses the four words of counter ``j`` under that key
  (``philox.counter_words`` with one key per element).

Retries run as rounds over the elements still pending, so the values do
not depend on which other elements share a block. The loop stops after
:data:`MAX_ROUNDS` rounds (it never gets there: every sampler accepts with
probability above 1/2 per round).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from lazyarr.kernels.reference.philox import counter_words

__all__ = ["ATTEMPT", "MAX_ROUNDS", "PER", "Propose", "flat_param", "rejection"]

ATTEMPT = 4
"""Words of one proposal (one Philox counter value)."""
PER = 6
"""Words an element owns: its first proposal, then its sub-stream's key."""
MAX_ROUNDS = 1 << 12

Propose = Callable[[np.ndarray, tuple], tuple[np.ndarray, np.ndarray]]
"""``propose(words (m, 4), params) -> (accepted (m,) bool, values (m,) float64)``;
``params`` are scalars or arrays of ``m`` values (one per proposal)."""


def flat_param(p: object, lead: tuple[int, ...]) -> object:
    """A parameter as a scalar, or flattened to one value per element of ``lead``."""
    if np.ndim(p) == 0:
        return p
    return np.broadcast_to(np.asarray(p), lead).reshape(-1)


def _take(params: tuple, idx: np.ndarray) -> tuple:
    return tuple(p if np.ndim(p) == 0 else p[idx] for p in params)


def rejection(words: np.ndarray, params: tuple, propose: Propose) -> np.ndarray:
    """Accepted values (float64) of the elements whose :data:`PER` words are ``words``.

    ``words`` has shape ``(..., PER)``; ``params`` are scalars or arrays that
    broadcast to ``words.shape[:-1]``. The result has that shape.
    """
    lead = words.shape[:-1]
    flat = words.reshape(-1, PER)
    ps = tuple(flat_param(p, lead) for p in params)
    with np.errstate(all="ignore"):
        ok, values = propose(flat[:, :ATTEMPT], ps)
        out = np.array(values, dtype=np.float64)
        pending = np.flatnonzero(~ok)
        j = 0
        while pending.size:
            if j == MAX_ROUNDS:  # pragma: no cover  (each round accepts more than half)
                raise RuntimeError("rejection sampling did not converge")
            keys = flat[pending, ATTEMPT:].T
            w = counter_words(keys, np.full(pending.size, j, dtype=np.uint64))
            ok, values = propose(w, _take(ps, pending))
            out[pending[ok]] = values[ok]
            pending = pending[~ok]
            j += 1
    return out.reshape(lead)
