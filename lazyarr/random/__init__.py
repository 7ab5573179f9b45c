"""Random arrays whose values depend on the seed and each element's position only.

The element at flat (C-order) index ``i`` is computed from the 64-bit words
at its own position of a counter-based Philox stream keyed by the seed
(one word for uniform, integer and exponential values, two for the normal
ones, six for the samplers that reject and retry on the element's own
sub-stream): any block jumps straight to its own elements and draws only
those, so a block costs its own size, and every executor and every
chunking gives the same numbers for the same seed. That is what lets the
``reblock`` pass give auto-chunked random arrays blocks chosen for the
cluster without changing a single value. The algorithms:

* closed forms (``random``, ``uniform``, ``integers``, ``standard_normal``,
  ``normal``, ``lognormal``, ``exponential``, ``standard_exponential``):
  ``lazyarr/kernels/reference/distributions.py``;
* ``gamma``, ``standard_gamma`` (Marsaglia-Tsang) and ``beta`` (two gammas):
  ``lazyarr/kernels/reference/gamma.py``;
* ``poisson`` (inversion below mean 10, Hörmann's PTRS above) and
  ``binomial`` (inversion, or Hörmann's BTRS):
  ``lazyarr/kernels/reference/discrete.py``; the per-element retry
  sub-streams: ``lazyarr/kernels/reference/substream.py``;
* ``choice``, ``permutation``, ``shuffle``, ``permuted`` (the argsort of
  per-element random keys, a whole-array sort for now) and
  ``multivariate_normal``: ``lazyarr/random/_sampling.py``.

Parameters of the element-wise distributions may be arrays (NumPy or lazy),
broadcast against ``size`` as NumPy does. The values are not those of
``numpy.random`` for the same seed (the laws are). A ``seed`` of None draws
a fresh seed when the expression is written; ``default_rng(seed)`` gives a
:class:`Generator` with NumPy's methods.
"""

from __future__ import annotations

from lazyarr.random._elementwise import (
    beta,
    binomial,
    exponential,
    gamma,
    integers,
    lognormal,
    normal,
    poisson,
    random,
    standard_exponential,
    standard_gamma,
    standard_normal,
    uniform,
)
from lazyarr.random._generator import Generator, default_rng
from lazyarr.random._sampling import (
    choice,
    multivariate_normal,
    permutation,
    permuted,
    shuffle,
)

__all__ = [
    "Generator",
    "beta",
    "binomial",
    "choice",
    "default_rng",
    "exponential",
    "gamma",
    "integers",
    "lognormal",
    "multivariate_normal",
    "normal",
    "permutation",
    "permuted",
    "poisson",
    "random",
    "shuffle",
    "standard_exponential",
    "standard_gamma",
    "standard_normal",
    "uniform",
]


def __dir__() -> list[str]:
    """The public names only: ``dir()`` and tab completion show no helpers."""
    return sorted(__all__)
