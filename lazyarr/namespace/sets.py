"""Namespace functions: sets (being written)."""

__all__: list[str] = []
