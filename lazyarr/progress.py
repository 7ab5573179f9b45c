"""The progress bar executors report to (``tqdm.auto``: terminals and notebooks).

Config ``progress``: ``auto`` shows a bar only for computes that last over
about a second; ``true`` always; ``false`` never.
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["TqdmProgress", "make_progress"]

AUTO_DELAY_SECONDS = 1.0


class TqdmProgress:
    """Counts computed blocks on a ``tqdm.auto`` bar.

    The bar is only created once ``delay`` seconds have passed, so short
    computes pay for a clock read per block and nothing else.
    """

    def __init__(self, delay: float, description: str) -> None:
        self.delay = delay
        self.description = description
        self.bar: Any = None
        self.total = 0
        self.done = 0
        self.t0 = 0.0

    def start(self, total_blocks: int) -> None:
        self.total = total_blocks
        self.done = 0
        self.t0 = time.perf_counter()
        if self.delay <= 0:
            self._open()

    def _open(self) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=self.total, initial=self.done, desc=self.description, unit="block", leave=False
        )

    def advance(self, blocks: int = 1) -> None:
        self.done += blocks
        if self.bar is not None:
            self.bar.update(blocks)
        elif time.perf_counter() - self.t0 >= self.delay:
            self._open()

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def make_progress(setting: Any, description: str) -> TqdmProgress | None:
    """A progress reporter for the config value ``setting`` (None = no bar)."""
    if setting in (False, "false", None):
        return None
    delay = 0.0 if setting in (True, "true") else AUTO_DELAY_SECONDS
    return TqdmProgress(delay, description)
