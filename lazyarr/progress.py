"""The progress bar executors report to: tqdm's text bar, or its widget in a notebook.

In a notebook the bar is tqdm's ipywidgets bar when ipywidgets is installed
and tqdm's plain-text bar otherwise (``tqdm.auto`` would fall back to text
too, but with a ``TqdmWarning`` telling the user to install ipywidgets).

Config ``progress``: ``auto`` shows a bar only in a notebook or when both
stdout and stderr are terminals (so ``make demo > log`` and CI logs get no
carriage-return redraws), and then only for computes that last over about
a second; ``true`` always; ``false`` never.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from typing import Any

__all__ = ["TqdmProgress", "bar_class", "interactive", "make_progress"]

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
        tqdm = bar_class()
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


def bar_class() -> type:
    """tqdm's widget bar in a notebook that has ipywidgets, else its text bar (no warning)."""
    if _in_notebook() and importlib.util.find_spec("ipywidgets") is not None:
        from tqdm.notebook import tqdm as notebook_tqdm

        return notebook_tqdm
    from tqdm.std import tqdm as text_tqdm

    return text_tqdm


def _is_terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython already imported and running on a kernel)."""
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython else None
    return getattr(shell, "kernel", None) is not None


def interactive() -> bool:
    """Whether someone watches the output live: a notebook, or stdout and stderr on a terminal.

    tqdm redraws on stderr; once stdout or stderr goes to a file or a pipe
    (``make demo > log``, ``2>&1``, CI) nobody watches the bar live and a log
    would only collect its carriage-return redraws.
    """
    return _in_notebook() or (_is_terminal(sys.stdout) and _is_terminal(sys.stderr))


def make_progress(setting: Any, description: str) -> TqdmProgress | None:
    """A progress reporter for the config value ``setting`` (None = no bar).

    ``"auto"`` gives a delayed bar only when :func:`interactive`; ``True`` always a bar.
    """
    if setting in (False, "false", None):
        return None
    if setting in (True, "true"):
        return TqdmProgress(0.0, description)
    if not interactive():
        return None
    return TqdmProgress(AUTO_DELAY_SECONDS, description)
