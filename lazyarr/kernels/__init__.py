"""Turning stages into code: NumPy reference kernels and block helpers."""
