"""The ``lazyarr`` namespace: Array API standard functions plus common NumPy names.

Each module owns one family and lists its public names in ``__all__``;
``lazyarr/__init__.py`` re-exports them all.
"""
