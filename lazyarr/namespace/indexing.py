"""Namespace functions: indexing (being written)."""

__all__: list[str] = []
