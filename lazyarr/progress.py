"""The progress bar executors report to (``tqdm.auto``: terminals and notebooks).

Config ``progress``: ``auto`` shows a bar only for computes that last over
about a second; ``true`` always; ``false`` never.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TqdmProgress", "make_progress"]

AUTO_DELAY_SECONDS = 1.0


class TqdmProgress:
    """Counts computed blocks on a ``tqdm.auto`` bar, created on start."""

    def __init__(self, delay: float, description: str) -> None:
        self.delay = delay
        self.description = description
        self.bar: Any = None

    def start(self, total_blocks: int) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(
            total=total_blocks, delay=self.delay, desc=self.description, unit="block", leave=False
        )

    def advance(self, blocks: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(blocks)

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
