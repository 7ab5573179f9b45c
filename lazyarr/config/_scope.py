"""Scoped settings: the values of ``with config.set(...)`` blocks, per thread and asyncio task.

Part of the config leaf: imports nothing of lazyarr.
"""

from __future__ import annotations

import dis
import functools
import sys
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from types import CodeType, FrameType
from typing import Any

__all__ = ["SCOPED", "Setting", "called_as_with"]

# A ``with`` block's values live in an overlay held by a ContextVar, so they are seen
# by the code of that block (and by lazyarr's worker threads, which run in a copy of
# the caller's context) and by nobody else: two threads, or two asyncio tasks, that
# overlap their blocks never see each other's values, and each block's exit puts back
# exactly the overlay that was there before it.
#
# ``set`` cannot know from its arguments whether a ``with`` follows; it asks
# ``called_as_with``, which reads the caller's next bytecode instruction. Where that
# cannot tell (``ExitStack.enter_context(config.set(...))``), ``set`` applies the
# values process-wide and ``Setting.__enter__`` takes them back (unless something
# else replaced them meanwhile) before scoping them.

SCOPED: ContextVar[Mapping[str, Any] | None] = ContextVar("lazyarr_config_scoped", default=None)
"""The scoped values of this context: every spelling of a leaf key -> value; None if none."""

_WITH_OPS = frozenset({"BEFORE_WITH", "SETUP_WITH"})  # 3.11-3.13, 3.10


@functools.lru_cache(maxsize=1024)
def _with_follows(code: CodeType, offset: int) -> bool:
    after = [i.opname for i in dis.get_instructions(code) if i.offset > offset][:2]
    if after[:1] and after[0] in _WITH_OPS:
        return True
    return after == ["COPY", "LOAD_SPECIAL"]  # 3.14: with looks __exit__ up first


def called_as_with(frame: FrameType | None) -> bool:
    """Whether the call that ``frame`` is making is the head of a ``with`` statement.

    False where it cannot tell (another interpreter, a call made from C).
    """
    if frame is None or sys.implementation.name != "cpython" or frame.f_lasti < 0:
        return False
    return _with_follows(frame.f_code, frame.f_lasti)


class Setting:
    """What ``config.set`` returns: values already process-wide, or (``with``) scoped.

    ``values``: every spelling of each key set -> its checked value; ``canonical``:
    the same for the canonical spelling only. ``undo``: takes back a process-wide
    application (None when the values were never applied process-wide).
    """

    def __init__(
        self,
        values: Mapping[str, Any],
        canonical: Mapping[str, Any],
        undo: Callable[[], None] | None,
    ) -> None:
        self._values = dict(values)
        self.values = dict(canonical)
        self._undo = undo
        self._previous: list[Mapping[str, Any] | None] = []

    def __enter__(self) -> Setting:
        if self._undo is not None:  # set() could not tell that a with would follow
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
