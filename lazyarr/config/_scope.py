"""Scoped settings: the values of ``with config.set(...)`` blocks, per thread and asyncio task.

Part of the config leaf: imports nothing of lazyarr.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

__all__ = ["SCOPED", "Setting", "apply_pending"]

# A ``with`` block's values live in an overlay held by a ContextVar, so they are seen
# by the code of that block (and by lazyarr's worker threads, which run in a copy of
# the caller's context) and by nobody else: two threads, or two asyncio tasks, that
# overlap their blocks never see each other's values, and each block's exit puts back
# exactly the overlay that was there before it.
#
# ``set`` cannot know from its arguments whether a ``with`` follows, so it applies
# nothing yet: the Setting it returns is pending. Entering it (the with statement's
# ``__enter__``, or ``ExitStack.enter_context``) scopes it; otherwise it is applied
# process-wide as soon as it is dropped (``__del__``: at once for a plain statement
# ``config.set(...)`` in CPython) or this thread next reads or sets a value
# (:func:`apply_pending`), whichever comes first. No other thread ever sees a
# ``with`` block's values, and this thread sees a plain call's values at once.

SCOPED: ContextVar[Mapping[str, Any] | None] = ContextVar("lazyarr_config_scoped", default=None)
"""The scoped values of this context: every spelling of a leaf key -> value; None if none."""

_THREAD = threading.local()
"""``pending``: weak references to this thread's Settings not yet applied nor entered."""


def apply_pending() -> None:
    """Apply process-wide, in call order, this thread's plain ``set`` calls still pending."""
    pending = getattr(_THREAD, "pending", None)
    if pending:
        _THREAD.pending = []
        for ref in pending:
            setting = ref()
            if setting is not None:
                setting.apply()


class Setting:
    """What ``config.set`` returns: pending, then scoped (``with``) or process-wide.

    ``values``: every spelling of each key set -> its checked value; ``canonical``:
    the same for the canonical spelling only. ``apply_globally``: sets the values
    for the process and returns a function that takes them back.
    """

    def __init__(
        self,
        values: Mapping[str, Any],
        canonical: Mapping[str, Any],
        apply_globally: Callable[[], Callable[[], None]],
    ) -> None:
        self._values = dict(values)
        self.values = dict(canonical)
        self._apply: Callable[[], Callable[[], None]] | None = apply_globally
        self._undo: Callable[[], None] | None = None
        self._previous: list[Mapping[str, Any] | None] = []
        pending = getattr(_THREAD, "pending", None)
        if pending is None:
            pending = _THREAD.pending = []
        pending.append(weakref.ref(self))

    def apply(self) -> None:
        """Apply the values process-wide, once, unless a ``with`` entered them first."""
        apply, self._apply = self._apply, None
        if apply is not None:
            self._undo = apply()

    def __del__(self) -> None:
        self.apply()

    def __enter__(self) -> Setting:
        self._apply = None  # a with block: never process-wide
        if self._undo is not None:  # applied before it was entered (a read came between)
            self._undo()
            self._undo = None
        previous = SCOPED.get()
        self._previous.append(previous)
        SCOPED.set({**previous, **self._values} if previous else self._values)
        return self

    def __exit__(self, *exc: object) -> None:
        SCOPED.set(self._previous.pop())

    def __repr__(self) -> str:
        return f"<lazyarr config setting {self.values!r}>"
