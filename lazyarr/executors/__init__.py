"""Executors run a Plan: ``numpy`` (reference), later ``numba`` and ``dask``."""
