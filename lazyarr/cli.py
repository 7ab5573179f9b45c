"""The ``lazyarr`` command (also ``python -m lazyarr``).

``config show|get|set`` reads and writes settings, ``executors`` lists the
registered executors, ``demo`` runs a normalize-and-reduce example against
NumPy and draws its plan, ``plan``/``explain`` run a user's script without
computing anything and draw or explain the plan of one of its lazy arrays,
``viz`` draws a plan saved as JSON. The array core is imported inside the
commands that need it, so ``--help`` and ``config`` stay fast.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from lazyarr import config
from lazyarr._version import __version__

DEMO_COLUMNS = 500
PICTURE_FORMATS = ("html", "svg", "png", "dot", "json")


class CommandError(Exception):
    """A user error a command reports as one line (exit status 1)."""


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
    x = la.random.random((rows, DEMO_COLUMNS), chunks=(block_rows, DEMO_COLUMNS), seed=0, name="x")
    y = ((x - x.mean(axis=0)) / x.std(axis=0)).rename("y")
    z = la.sqrt((y**2).sum(axis=1)).rename("z")
    print(f"x: {rows} x {DEMO_COLUMNS} random float64 in blocks of {block_rows} rows")
    print("y = (x - x.mean(axis=0)) / x.std(axis=0)")
    print("z = sqrt((y ** 2).sum(axis=1))")
    print(f"z (nothing computed yet): {z!r}\n")

    from lazyarr.planview import explain, visualize

    total = y.sum().rename("total")
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        z_lazy, total_lazy = la.compute(z, total, executor=executor)
        seconds.append(time.perf_counter() - start)
    z_lazy, total_lazy = np.asarray(z_lazy), np.asarray(total_lazy)
    print(explain(z, total, measured=True))
    picture = visualize(z, total, measured=True, filename=args.plan_out)
    print(f"plan picture: {picture.path}\n")

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


def _command_errors(command: Callable[[argparse.Namespace], int]) -> Callable:
    """Report user errors (bad script, variable, file, format) as one line, exit status 1."""

    def run(args: argparse.Namespace) -> int:
        from lazyarr.viz import GraphvizMissing

        try:
            return command(args)
        except (CommandError, GraphvizMissing, OSError, KeyError, ValueError) as exc:
            print(f"lazyarr {args.command}: error: {exc}", file=sys.stderr)
            return 1

    return run


def _script_array(script: str, var: str | None) -> tuple[Any, dict[str, Any]]:
    """Run ``script`` with the 'raise' executor (nothing computes).

    Returns its lazy array ``var`` and every lazy array it defines by
    variable name (pictures label the stages computing them with the name).

    The script runs as module ``__lazyarr_plan__``, so code under
    ``if __name__ == "__main__":`` (computing, printing results) is skipped.
    """
    import runpy

    from lazyarr._array import LazyArray
    from lazyarr.executors.testing import ComputeRefused

    path = Path(script)
    if not path.is_file():
        raise CommandError(f"no such script: {script}")
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    sys.argv = [str(path)]
    sys.path.insert(0, str(path.resolve().parent))
    try:
        with config.set(executor="raise"):
            names = runpy.run_path(str(path), run_name="__lazyarr_plan__")
    except ComputeRefused as exc:
        raise CommandError(
            f"{script} computed something while it was being planned ({exc}); lazyarr runs "
            'the script without computing: put computes under `if __name__ == "__main__":`'
        ) from None
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
    lazies = sorted(k for k, v in names.items() if isinstance(v, LazyArray) and k[:1] != "_")
    found = f"lazy arrays it defines: {', '.join(lazies)}" if lazies else "it defines none"
    arrays = {k: names[k] for k in lazies}
    if var is None:
        if len(lazies) == 1:
            return names[lazies[0]], arrays
        raise CommandError(f"say which lazy array to draw with --var NAME; {found}")
    if var not in names:
        raise CommandError(f"{script} defines no variable {var!r}; {found}")
    value = names[var]
    if not isinstance(value, LazyArray):
        raise CommandError(f"{var!r} in {script} is a {type(value).__name__}, not a lazy array")
    return value, arrays


def _check_output(path: str) -> None:
    suffix = Path(path).suffix.lstrip(".").lower()
    if suffix not in PICTURE_FORMATS:
        raise CommandError(
            f"cannot tell the format of {path!r}: use a suffix among "
            + ", ".join("." + f for f in PICTURE_FORMATS)
        )


@_command_errors
def _plan(args: argparse.Namespace) -> int:
    from lazyarr.planview import visualize

    _check_output(args.output)
    arr, names = _script_array(args.script, args.var)
    picture = visualize(
        arr, filename=args.output, stage=args.stage, executor=args.executor, names=names
    )
    print(f"wrote {picture.path} ({len(picture.plan.stages)} stages)")
    return 0


@_command_errors
def _explain(args: argparse.Namespace) -> int:
    from lazyarr.planview import explain

    arr, names = _script_array(args.script, args.var)
    print(explain(arr, stage=args.stage, executor=args.executor, names=names), end="")
    return 0


@_command_errors
def _viz(args: argparse.Namespace) -> int:
    from lazyarr.optimize.plan import Plan
    from lazyarr.planview import PlanPicture, configured_memory_limit

    _check_output(args.output)
    plan = Plan.from_json(Path(args.plan).read_text())
    picture = PlanPicture(
        plan, memory_limit=configured_memory_limit(), title=f"lazyarr plan {args.plan}"
    )
    picture.save(args.output)
    print(f"wrote {picture.path} ({len(plan.stages)} stages)")
    return 0


def _script_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("script", metavar="SCRIPT.py", help="a Python script that builds lazy arrays")
    p.add_argument(
        "--var",
        metavar="NAME",
        help="the script's variable holding the lazy array (default: the only one)",
    )
    p.add_argument("--executor", metavar="NAME", help="plan for this executor (default: config)")
    p.add_argument(
        "--stage", metavar="PASS", help="the plan after this pass, or 'raw' (default: optimized)"
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with one function per command in ``args.run``."""
    parser = argparse.ArgumentParser(
        prog="lazyarr",
        description="Lazy NumPy-style arrays: settings, executors, plan pictures and a demo.",
    )
    parser.add_argument("--version", action="version", version=f"lazyarr {__version__}")
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
    demo.add_argument(
        "--plan-out",
        metavar="PATH",
        default="plan.html",
        help="where to write the plan picture (.html, .svg, .png, .dot, .json; default plan.html)",
    )
    demo.set_defaults(run=_demo)

    plan = commands.add_parser(
        "plan",
        help="draw the plan of a lazy array built by a script (nothing is computed)",
        description="Runs SCRIPT.py with the 'raise' executor (code under "
        "`if __name__ == '__main__':` is skipped), takes the lazy array --var NAME and "
        "writes its plan: .html (report), .svg, .png (Graphviz), .dot or .json.",
    )
    _script_arguments(plan)
    plan.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="plan.html",
        help="output file (default plan.html)",
    )
    plan.set_defaults(run=_plan)

    viz = commands.add_parser("viz", help="draw a plan saved as JSON (lazyarr plan -o plan.json)")
    viz.add_argument("plan", metavar="PLAN.json", help="a plan written by `lazyarr plan -o x.json`")
    viz.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        default="plan.html",
        help="output file (default plan.html)",
    )
    viz.set_defaults(run=_viz)

    exp = commands.add_parser(
        "explain",
        help="explain the plan of a lazy array built by a script (nothing is computed)",
        description="Like `lazyarr plan`, but prints the EXPLAIN text: stages, bytes, memory, "
        "and why each op was or was not fused.",
    )
    _script_arguments(exp)
    exp.set_defaults(run=_explain)
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
