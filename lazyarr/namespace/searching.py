"""Namespace functions: searching (being written)."""

__all__: list[str] = []
