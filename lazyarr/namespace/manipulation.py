"""Namespace functions: manipulation (being written)."""

__all__: list[str] = []
