"""``barsym memory build|show|stats|export|import|prune|clear``: BAR's stage memory from the command line.

``build`` plans every task of a dataset with the memory decomposer in front
(only noting contexts, not answering: a build records what the planner itself
decides), executes each plan in the chosen world and records the tree with its
success count. The memory file is ``--memory PATH``, else ``$BARSYM_MEMORY``,
else the user data directory. A file that is not a barsym memory, is corrupt or
comes from a newer barsym is one line and exit status 2, and is left as it was.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..bar_io import read_input
from ..eval.progress_line import TerminalProgress
from ..memory import MemoryStore, default_path, with_memory
from ..memory.maintenance import build, decomposition_line, decompositions, export_jsonl, import_jsonl
from ..planner import PlanningError
from ..private_files import private_dir
from ..sim.options import ExecutionOptions
from .common import UsageError, add_format, add_output, check_writable, fail, kb_from_args, number_option, to_stdout
from .options import add_model, read_model

#: what each action does, for its own ``--help``
HELP = {
    "build": "plan every task of a dataset, execute each plan and record both",
    "show": "list the remembered decompositions with their success counts",
    "stats": "print the table counts as JSON",
    "export": "write every remembered plan as JSON Lines (a file, or stdout)",
    "import": "add the plans of an export (all or none; plans already there are not added again)",
    "prune": "delete plans whose success rate is below --min-rate over at least --min-runs runs",
    "clear": "delete everything in the memory (asks first on a terminal; --yes to skip the question)",
}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "memory",
        help="build, inspect and maintain the stage memory of goal decompositions",
        description="BAR's stage memory: goal decompositions with the success rates of the plans "
        "that used them. 'barsym memory ACTION --help' describes each action.",
    )
    _memory_option(p, argparse.SUPPRESS)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, text in HELP.items():
        a = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        _memory_option(a, argparse.SUPPRESS)  # after the action too; SUPPRESS keeps a value given before it
        ADD[name](a)
    p.set_defaults(run=run)


def _memory_option(parser, default) -> None:
    parser.add_argument(
        "--memory",
        type=Path,
        metavar="PATH",
        default=default,
        help="memory file (default $BARSYM_MEMORY or the user data directory)",
    )


def _add_build(a) -> None:
    a.add_argument("--dataset", type=Path, metavar="PATH", required=True, help="the tasks to plan")
    a.add_argument("--planner", default="symbolic", help="planner (default symbolic)")
    add_model(
        a,
        ExecutionOptions,
        skip=("budget",),
        defaults={"runs": 20},
        helps={"runs": "executions per plan"},
        deprecated={"--seed": "world_seed"},
    )
    a.add_argument("--limit", metavar="N", help="only the first N tasks (N at least 1)")


def _add_show(a) -> None:
    add_format(a, "text|json", "text (one line per decomposition, default) or json (a list of objects)")


def _add_export(a) -> None:
    add_output(a)
    a.add_argument("file", nargs="?", help=argparse.SUPPRESS)  # the old spelling of -o FILE


def _add_import(a) -> None:
    a.add_argument("file", help="JSON Lines written by 'barsym memory export'")


def _add_prune(a) -> None:
    a.add_argument(
        "--min-rate", default="0.5", metavar="R", help="delete plans below this success rate, from 0 to 1 (default 0.5)"
    )
    a.add_argument(
        "--min-runs", default="5", metavar="N", help="... over at least this many runs, 0 or more (default 5)"
    )


def _add_clear(a) -> None:
    a.add_argument("--yes", action="store_true", help="clear without asking")


ADD = {
    "build": _add_build,
    "show": _add_show,
    "stats": lambda a: None,
    "export": _add_export,
    "import": _add_import,
    "prune": _add_prune,
    "clear": _add_clear,
}


def run(args: argparse.Namespace) -> int:
    path = getattr(args, "memory", None) or default_path()
    writes = args.action in ("build", "import", "prune", "clear")
    if args.action == "build":
        args.execution = read_model(args, ExecutionOptions, runs=20)
        args.limit = number_option(args.limit, "--limit", int, 1, None)
    if args.action == "prune":
        args.min_rate = number_option(args.min_rate, "--min-rate", float, 0.0, 1.0)
        args.min_runs = number_option(args.min_runs, "--min-runs", int, 0, None)
    if args.action == "export":
        if args.file is not None:  # the positional FILE of before -o: still read
            args.output = args.output or Path(args.file)
        check_writable(args.output, "memory export")
    if args.action == "clear" and not args.yes and not sys.stdin.isatty():
        raise UsageError("memory clear deletes every remembered plan; add --yes to confirm (no terminal to ask on)")
    try:
        if writes and not path.parent.exists() and getattr(args, "memory", None) is None:
            private_dir(path.parent)  # barsym's own data folder: 0700
        store = MemoryStore(path, readonly=not writes)  # a damaged or locked file: one line (barsym.cli)
    except OSError as exc:  # the default folder cannot be made (a read-only home)
        return fail(f"memory {path}: cannot create the folder {path.parent} ({exc.strerror or exc})")
    with store:
        return ACTIONS[args.action](store, args)


def _build(store: MemoryStore, args) -> int:
    from ..eval import DatasetError, load_dataset
    from ..kb import rules_for
    from ..planner.registry import make_planner

    kb = kb_from_args(args)
    try:
        tasks = load_dataset(args.dataset, kb)
    except DatasetError as exc:
        raise UsageError(f"--dataset: {exc}") from None
    tasks = tasks[: args.limit] if args.limit is not None else tasks
    try:
        planner = with_memory(make_planner(args.planner, kb), kb, None)
    except (KeyError, ValueError) as exc:
        raise UsageError(f"--planner: {exc.args[0]}") from None
    world = args.execution.make_world(kb, rules_for(kb, None))
    bar = TerminalProgress()  # a bar on a terminal; one line per task when stderr is piped
    done = runs = successes = 0
    starting = lambda number, task: bar.bar(number - 1, len(tasks), task.key)  # noqa: E731
    for number, (task, ran) in enumerate(build(store, planner, tasks, world, args.execution, starting), start=1):
        if isinstance(ran, PlanningError):
            bar.clear()
            print(f"{task.key}: no plan ({ran.message})", file=sys.stderr)
            continue
        done, runs, successes = done + 1, runs + ran.runs, successes + ran.successes
        if not bar.enabled:
            print(f"[{number}/{len(tasks)}] {task.key}: {ran.successes}/{ran.runs} runs succeeded", file=sys.stderr)
    bar.clear()
    print(f"recorded {done} of {len(tasks)} plan(s) into {store.path} ({successes}/{runs} runs succeeded)")
    return 0


def _stats(store: MemoryStore, args) -> int:
    print(json.dumps(store.counts(), indent=2))
    return 0


def _show(store: MemoryStore, args) -> int:
    rows = decompositions(store)
    if args.format == "json":
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(decomposition_line(row))
    return 0


def _export(store: MemoryStore, args) -> int:
    if to_stdout(args.output):
        export_jsonl(store, sys.stdout)
        return 0
    try:
        with open(args.output, "w", encoding="utf-8") as out:
            export_jsonl(store, out)
    except OSError as exc:
        raise UsageError(f"memory export {args.output}: cannot write ({exc.strerror})") from None
    return 0


def _import(store: MemoryStore, args) -> int:
    try:
        text = read_input(args.file).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else f"not UTF-8 text: bad byte at offset {exc.start}"
        raise UsageError(f"memory import {args.file}: cannot read ({why})") from None
    try:
        added, read = import_jsonl(store, text, args.file)  # all or none: a bad record leaves the memory as it was
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    kept = f" ({read - added} already there, not added again)" if added < read else ""
    print(f"imported {added} plan(s) into {store.path}{kept}")
    return 0


def _prune(store: MemoryStore, args) -> int:
    print(f"pruned {store.prune(args.min_rate, args.min_runs)} plan(s)")
    return 0


def _clear(store: MemoryStore, args) -> int:
    if not args.yes:
        plans = store.counts()["plans"]
        answer = input(f"delete all {plans} plan(s) in {store.path}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("nothing cleared")
            return 1
    store.clear()
    print(f"cleared {store.path}")
    return 0


ACTIONS = {
    "build": _build,
    "show": _show,
    "stats": _stats,
    "export": _export,
    "import": _import,
    "prune": _prune,
    "clear": _clear,
}
