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
import io
import json
import sys
from pathlib import Path

from ..memory import MemoryStore, with_memory
from ..memory.maintenance import build, decomposition_line, decompositions, export_jsonl, import_file, open_memory
from ..memory.memory_file import default_path
from ..memory.row_checks import Vocabulary
from ..memory.run_options import BuildOptions, PruneOptions
from ..memory.store import COUNTS
from ..planner import PlanningError
from ..sim.options import ExecutionOptions
from .common import UsageError, add_format, add_output, check_writable, kb_from_args, write_output
from .options import add_model, read_model

#: the actions that change the memory (the others open it read-only)
WRITES = ("build", "import", "prune", "clear")


HELP = "build, inspect and maintain the stage memory of goal decompositions"
DESCRIPTION = (
    "BAR's stage memory: goal decompositions with the success rates of the plans "
    "that used them. 'barsym memory ACTION --help' describes each action."
)


def add_arguments(p) -> None:
    _memory_option(p)  # --memory before the action or after it
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, (text, arguments, _) in ACTIONS.items():
        action = actions.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")
        _memory_option(action)
        arguments(action)


def _memory_option(parser) -> None:
    parser.add_argument(
        "--memory",
        type=Path,
        metavar="PATH",
        default=argparse.SUPPRESS,  # SUPPRESS: a value given before the action is kept after it
        help="memory file (default $BARSYM_MEMORY or the user data directory)",
    )


def _add_build(a) -> None:
    add_model(a, BuildOptions, skip=("limit",))
    add_model(
        a,
        ExecutionOptions,
        skip=("budget",),
        defaults={"runs": 20},
        helps={"runs": "executions per plan"},
        deprecated={"--seed": "world_seed"},
    )
    add_model(a, BuildOptions, skip=("dataset", "planner"))


def _add_export(a) -> None:
    add_output(a)
    a.add_argument("file", nargs="?", help=argparse.SUPPRESS)  # the old spelling of -o FILE


def run(args: argparse.Namespace) -> int:
    if args.action == "export":
        if args.file is not None:  # the positional FILE of before -o: still read
            args.output = args.output or Path(args.file)
        check_writable(args.output, "memory export")
    if args.action == "clear" and not args.yes and not sys.stdin.isatty():
        raise UsageError("memory clear deletes every remembered plan; add --yes to confirm (no terminal to ask on)")
    options = {"build": BuildOptions, "prune": PruneOptions}.get(args.action)
    args.options = options and read_model(args, options)
    if args.action == "build":
        args.execution = read_model(args, ExecutionOptions, runs=20)
    given = getattr(args, "memory", None)  # a --memory FILE that is not there stays an error: likely a typo
    if given is None and args.action in EMPTY_READS and not default_path().exists():
        return EMPTY_READS[args.action](default_path(), args)
    # a damaged or locked file, or a data folder that cannot be made: one line (barsym.cli)
    with open_memory(getattr(args, "memory", None), write=args.action in WRITES) as store:
        if args.action in ("show", "export"):  # every row shown is checked against the knowledge base's names
            store.vocabulary = Vocabulary.of(kb_from_args(args))
        return ACTIONS[args.action][2](store, args)


def _build(store: MemoryStore, args) -> int:
    from ..eval import DatasetError, load_dataset
    from ..kb import rules_for
    from ..planner.registry import make_planner

    kb, options = kb_from_args(args), args.options
    try:
        tasks = load_dataset(options.dataset, kb)[: options.limit]
    except DatasetError as exc:
        raise UsageError(f"--dataset: {exc}") from None
    try:
        planner = with_memory(make_planner(options.planner, kb), kb, None)
    except (KeyError, ValueError) as exc:
        raise UsageError(f"--planner: {exc.args[0]}") from None
    world = args.execution.make_world(kb, rules_for(kb, None))
    from .progress_line import task_bar

    bar = task_bar(len(tasks), "memory build")  # a bar on a terminal; one line per task when stderr is piped
    done = runs = successes = 0
    starting = (lambda number, task: bar.set_postfix(task.key)) if bar else None
    try:
        for number, (task, ran) in enumerate(build(store, planner, tasks, world, args.execution, starting), start=1):
            if isinstance(ran, PlanningError):
                if bar:
                    bar.clear()
                print(f"{task.key}: no plan ({ran.message})", file=sys.stderr)
            else:
                done, runs, successes = done + 1, runs + ran.runs, successes + ran.successes
            if bar:
                bar.update(1, force=True)
            elif not isinstance(ran, PlanningError):
                print(f"[{number}/{len(tasks)}] {task.key}: {ran.successes}/{ran.runs} runs succeeded", file=sys.stderr)
    finally:
        if bar:
            bar.close()
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
    plans = io.StringIO()  # all read before the file is written: a failed export writes nothing
    export_jsonl(store, plans)
    write_output(args.output, plans.getvalue())
    return 0


def _import(store: MemoryStore, args) -> int:
    try:
        # all or none, checked against the knowledge base: a bad record leaves the memory as it was
        added, read = import_file(store, args.file, Vocabulary.of(kb_from_args(args)))
    except ValueError as exc:
        raise UsageError(f"memory import {exc}") from None
    kept = f" ({read - added} already there, not added again)" if added < read else ""
    print(f"imported {added} plan(s) into {store.path}{kept}")
    return 0


def _prune(store: MemoryStore, args) -> int:
    print(f"pruned {store.prune(args.options.min_rate, args.options.min_runs)} plan(s)")
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


def _nothing_yet(path: Path) -> str:
    return (
        f"no memory yet at {path}: nothing is remembered "
        "(barsym memory build, or plan and eval with --record, record plans into it)"
    )


def _show_empty(path: Path, args) -> int:
    print("[]" if args.format == "json" else _nothing_yet(path))
    return 0


def _stats_empty(path: Path, args) -> int:
    print(json.dumps(dict.fromkeys(COUNTS, 0), indent=2))
    return 0


def _export_empty(path: Path, args) -> int:
    print(_nothing_yet(path), file=sys.stderr)
    write_output(args.output, "")
    return 0


#: reading the default memory before anything was written to it is reading an empty one (the first write makes it)
EMPTY_READS = {"show": _show_empty, "stats": _stats_empty, "export": _export_empty}

#: each action: what it does (its --help), its own arguments, and what it runs
ACTIONS = {
    "build": ("plan every task of a dataset, execute each plan and record both", _add_build, _build),
    "show": (
        "list the remembered decompositions with their success counts",
        lambda a: add_format(a, "text|json", "text (one line per decomposition, default) or json (a list of objects)"),
        _show,
    ),
    "stats": ("print the table counts as JSON", lambda a: None, _stats),
    "export": ("write every remembered plan as JSON Lines (a file, or stdout)", _add_export, _export),
    "import": (
        "add the plans of an export (all or none; plans already there are not added again)",
        lambda a: a.add_argument("file", help="JSON Lines written by 'barsym memory export'"),
        _import,
    ),
    "prune": (
        "delete plans whose success rate is below --min-rate over at least --min-runs runs",
        lambda a: add_model(a, PruneOptions),
        _prune,
    ),
    "clear": (
        "delete everything in the memory (asks first on a terminal; --yes to skip the question)",
        lambda a: a.add_argument("--yes", action="store_true", help="clear without asking"),
        _clear,
    ),
}
