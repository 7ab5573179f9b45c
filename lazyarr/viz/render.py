"""DOT text -> SVG or PNG bytes through the Graphviz ``dot`` program, when installed.

Graphviz is optional: without it, :func:`render_dot` raises
:class:`GraphvizMissing` with an install hint, and the HTML report and
notebook pictures use lazyarr's own SVG drawing (``viz.svg``) instead.
"""

from __future__ import annotations

import shutil
import subprocess

__all__ = ["FORMATS", "GraphvizMissing", "have_graphviz", "render_dot"]

FORMATS = ("svg", "png")
INSTALL_HINT = (
    "the Graphviz 'dot' program is not installed; install it with "
    "'apt-get install graphviz' (Debian/Ubuntu), 'brew install graphviz' (macOS) or "
    "'conda install graphviz', or write .dot, .html or .json (which need no Graphviz)"
)


class GraphvizMissing(RuntimeError):
    """Graphviz's ``dot`` program is needed and not on PATH."""


def have_graphviz() -> bool:
    """True when the ``dot`` program is on PATH."""
    return shutil.which("dot") is not None


def render_dot(dot_text: str, format: str = "svg", timeout: float = 60.0) -> bytes:
    """Run ``dot -T<format>`` on ``dot_text``; return the picture's bytes."""
    if format not in FORMATS:
        raise ValueError(f"Graphviz output format must be one of {FORMATS}, not {format!r}")
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizMissing(INSTALL_HINT)
    run = subprocess.run(
        [exe, f"-T{format}"],
        input=dot_text.encode(),
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    if run.returncode != 0:
        raise RuntimeError(
            f"Graphviz 'dot -T{format}' failed ({run.returncode}): "
            f"{run.stderr.decode(errors='replace')[-2000:]}"
        )
    return run.stdout
