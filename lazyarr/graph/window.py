"""Windows: a basic index applied to a source, kept as index arithmetic.

Slice pushdown hands a source the index of the result that reads it, so a
source makes only the elements a result needs (``la.random.random(shape)[5]``
draws one row, a reader reads one row). A :class:`Window` says, per axis of
the source's *base* array, which positions the source's elements are: an
``int`` (the axis is dropped) or ``(start, step, count)``, the positions
``start + step * i`` for ``i < count``. Windows compose exactly (a window of
a window is a window), so any chain of basic indices collapses into one.
"""

from __future__ import annotations

import dataclasses

from lazyarr.graph.expr import Region

__all__ = ["AxisRun", "BasicIndex", "Window", "as_slices", "forward"]

AxisRun = tuple[int, int, int]
"""``(start, step, count)``: the base positions ``start + step * i``, ``i < count``."""

BasicIndex = tuple[int | range, ...]
"""One entry per axis: an ``int`` (drops the axis) or the ``range`` of positions kept."""


@dataclasses.dataclass(frozen=True)
class Window:
    """Which elements of a ``base``-shaped array a windowed source holds, per base axis."""

    base: tuple[int, ...]
    axes: tuple[int | AxisRun, ...]

    @classmethod
    def whole(cls, shape: tuple[int, ...]) -> Window:
        """The window of every element."""
        return cls(tuple(shape), tuple((0, 1, n) for n in shape))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the windowed array (dropped axes left out)."""
        return tuple(a[2] for a in self.axes if not isinstance(a, int))

    def then(self, index: BasicIndex) -> Window:
        """This window indexed by ``index`` (one entry per axis of :attr:`shape`)."""
        kept = [i for i, a in enumerate(self.axes) if not isinstance(a, int)]
        if len(index) != len(kept):
            raise ValueError(f"index of {len(index)} entries for a window of {len(kept)} axes")
        axes = list(self.axes)
        for i, entry in zip(kept, index):
            start, step, _ = axes[i]
            if isinstance(entry, range):
                axes[i] = (start + step * entry.start, step * entry.step, len(entry))
            else:
                axes[i] = start + step * entry
        return Window(self.base, tuple(axes))

    def base_runs(self, out: Region) -> tuple[AxisRun, ...]:
        """Per base axis, the positions of the region ``out`` of the windowed array
        (a dropped axis gives a run of one)."""
        it = iter(out)
        runs = []
        for a in self.axes:
            if isinstance(a, int):
                runs.append((a, 1, 1))
            else:
                sl = next(it)
                start, step, _ = a
                runs.append((start + step * sl.start, step, sl.stop - sl.start))
        return tuple(runs)


def as_slices(index: BasicIndex) -> tuple[int | slice, ...]:
    """``index`` as a NumPy index (a range going down to 0 ends at ``None``)."""
    out: list[int | slice] = []
    for e in index:
        if isinstance(e, range):
            stop = e.stop if e.stop >= 0 else None
            out.append(slice(e.start, stop, e.step))
        else:
            out.append(e)
    return tuple(out)


def forward(runs: tuple[AxisRun, ...]) -> tuple[tuple[AxisRun, ...], tuple[int, ...]]:
    """``runs`` with every negative step made positive, and the axes to flip after."""
    fwd, flip = [], []
    for ax, (start, step, count) in enumerate(runs):
        if step < 0 and count > 0:
            fwd.append((start + step * (count - 1), -step, count))
            flip.append(ax)
        else:
            fwd.append((start, abs(step) or 1, count))
    return tuple(fwd), tuple(flip)
