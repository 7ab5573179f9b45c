"""The ``lazyarr`` command (also ``python -m lazyarr``).

``config show|get|set`` reads and writes settings, ``executors`` lists the
registered executors, ``demo`` runs a normalize-and-reduce example against
NumPy. The array core is imported inside the commands that need it, so
``--help`` and ``config`` stay fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from lazyarr import config

DEMO_COLUMNS = 500


def _text(value: Any) -> str:
    """A config value as the YAML a user would write in the file."""
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return yaml.safe_dump(value, sort_keys=False, default_flow_style=False).rstrip()
    return yaml.safe_dump(value, default_flow_style=True).removesuffix("\n...\n").strip()


def _config_errors(command: Callable[[argparse.Namespace], int]) -> Callable:
    """Turn config's KeyError/ValueError into one readable line and exit status 1."""

    def run(args: argparse.Namespace) -> int:
        try:
            return command(args)
        except (KeyError, ValueError) as exc:
            print(f"lazyarr: error: {exc}", file=sys.stderr)
            return 1

    return run


@_config_errors
def _config_show(args: argparse.Namespace) -> int:
    path = config.user_path()
    state = "" if path.is_file() else " (not present)"
    print(f"# effective lazyarr settings; user file: {path}{state}")
    print(config.show(), end="")
    return 0


@_config_errors
def _config_get(args: argparse.Namespace) -> int:
    print(_text(config.get(args.key)))
    return 0


@_config_errors
def _config_set(args: argparse.Namespace) -> int:
    try:
        value = yaml.safe_load(args.value)  # "4" -> 4, "null" -> None, "[cse]" -> list
    except yaml.YAMLError:
        value = args.value
    path = config.write_user(args.key, value)
    print(f"wrote {args.key}: {args.value} to {path}")
    return 0


def _executors(args: argparse.Namespace) -> int:
    from lazyarr.executors import registry

    default = config.get("executor")
    rows = [("name", "usable", "detail")]
    for name, (usable, detail) in registry.available().items():
        label = f"{name} (default)" if name == default else name
        rows.append((label, "yes" if usable else "no", detail))
    width = [max(len(row[i]) for row in rows) for i in range(2)]
    for name, usable, detail in rows:
        print(f"{name:<{width[0]}}  {usable:<{width[1]}}  {detail}")
    return 0


def _demo(args: argparse.Namespace) -> int:
    import time

    import numpy as np

    import lazyarr as la

    executor = config.resolve("executor", args.executor)
    rows = args.size
    block_rows = max(rows // 4, 1)
    x = la.random.random((rows, DEMO_COLUMNS), chunks=(block_rows, DEMO_COLUMNS), seed=0)
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    z = la.sqrt((y**2).sum(axis=1))
    print(f"x: {rows} x {DEMO_COLUMNS} random float64 in blocks of {block_rows} rows")
    print("y = (x - x.mean(axis=0)) / x.std(axis=0)")
    print("z = sqrt((y ** 2).sum(axis=1))")
    print(f"z (nothing computed yet): {z!r}\n")

    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        z_lazy, total_lazy = la.compute(z, y.sum(), executor=executor)
        seconds.append(time.perf_counter() - start)
    z_lazy, total_lazy = np.asarray(z_lazy), np.asarray(total_lazy)

    xn = np.asarray(x.compute(executor="numpy"))  # the same numbers, not timed
    start = time.perf_counter()
    yn = (xn - xn.mean(axis=0)) / xn.std(axis=0)
    zn = np.sqrt((yn**2).sum(axis=1))
    total_n = yn.sum()
    numpy_seconds = time.perf_counter() - start

    same_shape = z_lazy.shape == zn.shape and total_lazy.shape == np.shape(total_n)
    z_error = float(np.max(np.abs(z_lazy - zn))) if same_shape else float("inf")
    total_error = float(np.abs(total_lazy - total_n)) if same_shape else float("inf")
    # sum(y) adds ~10^8 terms that cancel to ~0; rounding (another order of
    # summation, another way to get mean and std) scales with sum(|y|), not with the result.
    total_tolerance = 1e-12 * float(np.abs(yn).sum())
    same = (
        same_shape
        and np.allclose(z_lazy, zn, rtol=1e-9, atol=1e-12)
        and total_error <= total_tolerance
    )

    table = [
        (
            f"lazyarr [{executor}], 1st run",
            f"{seconds[0]:.3f} s",
            "generates x; plans, compiles if needed",
        ),
        (f"lazyarr [{executor}], 2nd run", f"{seconds[1]:.3f} s", "generates x"),
        ("numpy", f"{numpy_seconds:.3f} s", "x already in memory"),
        ("max |z - z_numpy|", f"{z_error:.2e}", "rtol 1e-9"),
        (
            "|sum(y) - sum_numpy|",
            f"{total_error:.2e}",
            f"tolerance 1e-12 * sum|y| = {total_tolerance:.1e}",
        ),
    ]
    width = max(len(row[0]) for row in table)
    for label, value, note in table:
        print(f"{label:<{width}}  {value:>10}  ({note})")
    if not same:
        print("\nlazyarr's results differ from NumPy's", file=sys.stderr)
        return 1
    print("\nsame results as NumPy")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one function per command in ``args.run``."""
    parser = argparse.ArgumentParser(
        prog="lazyarr",
        description="Lazy NumPy-style arrays: settings, executors and a demo.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    cfg = commands.add_parser(
        "config",
        help="show, get or set settings",
        description="Settings come from defaults < user file < LAZYARR_* env vars "
        f"< lazyarr.config.set() < keywords. User file: {config.user_path()}",
    )
    actions = cfg.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help="print the effective settings as YAML")
    show.set_defaults(run=_config_show)
    get = actions.add_parser("get", help="print one setting")
    get.add_argument("key", metavar="KEY", help="dotted key, e.g. array.chunk-size")
    get.set_defaults(run=_config_get)
    put = actions.add_parser("set", help="store a setting in the user file")
    put.add_argument("key", metavar="KEY", help="dotted key, e.g. array.chunk-size")
    put.add_argument("value", metavar="VALUE", help="YAML value, e.g. 128MiB, 4, true, null")
    put.set_defaults(run=_config_set)

    exe = commands.add_parser("executors", help="list the registered executors")
    exe.set_defaults(run=_executors)

    demo = commands.add_parser(
        "demo",
        help="normalize a random matrix and reduce it; compare time and values with NumPy",
    )
    demo.add_argument("--executor", metavar="NAME", help="executor to use (default: config)")
    demo.add_argument(
        "--size", metavar="ROWS", type=_positive_int, default=200_000, help="rows (default 200000)"
    )
    demo.set_defaults(run=_demo)
    return parser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    args = build_parser().parse_args(argv)
    return args.run(args)
