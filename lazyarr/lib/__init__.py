"""NumPy's ``numpy.lib`` names that array code reaches through a namespace (``xp.lib``)."""

from lazyarr.lib import stride_tricks as stride_tricks

__all__ = ["stride_tricks"]
