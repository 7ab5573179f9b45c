"""Namespace functions: sorting (being written)."""

__all__: list[str] = []
