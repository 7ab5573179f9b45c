"""Byte sizes and durations as settings write them: ``"64MiB"``, ``"500ms"``.

Dask's parsers (``dask.utils.parse_bytes``, ``parse_timedelta``) read the units;
this module only holds settings to stricter terms: a number must be written
(Dask reads ``"MiB"`` as one MiB), and it must be finite and not negative.
Every refusal is a ``ValueError`` naming what was expected.
"""

from __future__ import annotations

import functools
import math

from dask.utils import parse_bytes as dask_parse_bytes
from dask.utils import parse_timedelta as dask_parse_timedelta

__all__ = ["parse_bytes", "parse_duration"]

_BYTES = "a byte size such as '64MiB'"
_DURATION = "a duration such as '10s'"


def parse_bytes(value: str | int | float) -> int:
    """Return a byte count: ``"64MiB"`` -> 67108864, ``"4GB"`` -> 4000000000, ``1000`` -> 1000.

    Parsed values are remembered (computes read the same settings every time).
    """
    _check_type(value, _BYTES)
    return _parse_bytes_cached(value)


@functools.lru_cache(maxsize=256)
def _parse_bytes_cached(value: str | int | float) -> int:
    _check_number(value, _BYTES)
    try:
        parsed = dask_parse_bytes(value)
    except (ValueError, OverflowError) as e:
        raise ValueError(f"expected {_BYTES}, got {value!r}") from e
    return int(parsed)


def parse_duration(value: str | int | float) -> float:
    """Return seconds: ``"10s"`` -> 10.0, ``"500ms"`` -> 0.5, ``"2m"`` -> 120.0, ``3`` -> 3.0."""
    _check_type(value, _DURATION)
    _check_number(value, _DURATION)
    try:
        seconds = dask_parse_timedelta(value)
    except (ValueError, KeyError, IndexError, OverflowError) as e:  # KeyError: unknown unit
        raise ValueError(f"expected {_DURATION}, got {value!r}") from e
    return float(seconds)


def _check_type(value: object, what: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"expected {what}, got {value!r}")


def _check_number(value: str | int | float, what: str) -> None:
    """Refuse a value without a leading number, a negative one, NaN and infinity."""
    if isinstance(value, str):
        text = value.strip()
        if not text[:1].isdigit() and not (text[:1] == "." and text[1:2].isdigit()):
            raise ValueError(f"expected {what}, got {value!r}")
    elif not math.isfinite(value) or value < 0:
        raise ValueError(f"expected {what}, got {value!r}")
