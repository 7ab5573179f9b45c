"""Namespace functions: linalg (being written)."""

__all__: list[str] = []
