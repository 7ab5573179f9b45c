"""The progress bar executors report to: tqdm's, through ``tqdm.auto``.

``tqdm.auto`` picks the bar: its widget in a notebook with ipywidgets, else
its text bar (its warning that a notebook lacks ipywidgets is silenced: the
text bar works there too). tqdm's ``delay=`` keeps a bar hidden until the
compute has run that long; executors call ``advance(0)`` while they wait, so
the bar appears on time even while one long task runs.

Config ``progress``: ``auto`` shows a bar only in a notebook or when both
stdout and stderr are terminals (so ``make demo > log`` and CI logs get no
carriage-return redraws; tqdm's own ``disable=None`` looks at stderr only),
and then only for computes that last over about a second; ``true`` always;
``false`` never. The bar counts blocks (:meth:`TaskGraph.progress_blocks`).
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

from tqdm import TqdmWarning

with warnings.catch_warnings():  # in a notebook without ipywidgets: the text bar, no hint
    warnings.simplefilter("ignore", TqdmWarning)
    from tqdm.auto import tqdm as auto_tqdm

__all__ = ["TqdmProgress", "bar_class", "interactive", "make_progress"]

AUTO_DELAY_SECONDS = 1.0


class TqdmProgress:
    """Counts computed blocks on a ``tqdm.auto`` bar, drawn once ``delay`` seconds passed."""

    def __init__(self, delay: float, description: str) -> None:
        self.delay = delay
        self.description = description
        self.bar: Any = None

    def start(self, total_blocks: int) -> None:
        self.finish()
        self.bar = bar_class()(
            total=total_blocks, desc=self.description, unit="block", delay=self.delay
        )

    def advance(self, blocks: int = 1) -> None:
        if self.bar is not None:
            self.bar.update(blocks)  # update(0) draws a bar whose delay has passed

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def bar_class() -> type:
    """``tqdm.auto``'s bar: the widget in a notebook with ipywidgets, else the text bar."""
    return auto_tqdm


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
