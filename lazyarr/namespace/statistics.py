"""Namespace functions: statistics (being written)."""

__all__: list[str] = []
