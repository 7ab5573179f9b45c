"""Byte sizes and durations as settings write them: ``"64MiB"``, ``"500ms"``.

Part of the config leaf: imports nothing of lazyarr (nor Dask, whose parser it mirrors).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping

__all__ = ["parse_bytes", "parse_duration"]

_NUMBER_UNIT = re.compile(r"\s*((?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*")
_BYTE_UNITS = {"": 1, "b": 1} | {
    prefix + suffix: base**power  # k kb ki kib, m mb mi mib, ...
    for power, prefix in enumerate("kmgtp", start=1)
    for suffix, base in (("", 1000), ("b", 1000), ("i", 1024), ("ib", 1024))
}
_SECOND_UNITS = {"": 1.0, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def _number_and_unit(value: object, units: Mapping[str, float], what: str) -> tuple[float, float]:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"expected {what}, got {value!r}")
    if isinstance(value, str):
        match = _NUMBER_UNIT.fullmatch(value)
        if match is None or match.group(2).lower() not in units:
            raise ValueError(f"expected {what}, got {value!r}")
        number, scale = float(match.group(1)), units[match.group(2).lower()]
    else:
        number, scale = value, 1
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"expected {what}, got {value!r}")
    return number, scale


def parse_bytes(value: str | int | float) -> int:
    """Return a byte count: ``"64MiB"`` -> 67108864, ``"4GB"`` -> 4000000000, ``1000`` -> 1000.

    Parsed values are remembered (computes read the same settings every time).
    """
    if isinstance(value, (str, int, float)):
        return _parse_bytes_cached(value)
    return _parse_bytes(value)


@functools.lru_cache(maxsize=256)
def _parse_bytes_cached(value: str | int | float) -> int:
    return _parse_bytes(value)


def _parse_bytes(value: str | int | float) -> int:
    """Parse without the cache (and raise for values of the wrong type).

    Units as in ``dask.utils.parse_bytes`` (B, kB/KiB ... PB/PiB, case-insensitive),
    written here so that reading the config never imports Dask.
    """
    number, scale = _number_and_unit(value, _BYTE_UNITS, "a byte size such as '64MiB'")
    if isinstance(number, int):
        return number * int(scale)
    return int(number * scale)


def parse_duration(value: str | int | float) -> float:
    """Return seconds: ``"10s"`` -> 10.0, ``"500ms"`` -> 0.5, ``"2m"`` -> 120.0, ``3`` -> 3.0."""
    number, scale = _number_and_unit(value, _SECOND_UNITS, "a duration such as '10s'")
    return float(number * scale)
