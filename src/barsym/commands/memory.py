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

from ..memory import MemoryFileError, MemoryStore, default_path, record, with_memory
from ..private_files import private_dir
from .common import UsageError, fail, kb_from_args
from .llm_options import TerminalProgress


def add_parser(sub) -> None:
    p = sub.add_parser("memory", help="build, inspect and maintain the stage memory of goal decompositions",
                       description="BAR's stage memory: goal decompositions with the success rates of the plans "
                                   "that used them.")
    p.add_argument("action", choices=["build", "show", "stats", "export", "import", "prune", "clear"])
    p.add_argument("--memory", type=Path, metavar="PATH", help="memory file (default $BARSYM_MEMORY or the user "
                                                               "data directory)")
    p.add_argument("--dataset", type=Path, metavar="PATH", help="build: the tasks to plan")
    p.add_argument("--planner", default="symbolic", help="build: planner (default symbolic)")
    p.add_argument("--world", default="stochastic", choices=["deterministic", "stochastic"], help="build: world")
    p.add_argument("--runs", type=int, default=20, metavar="N", help="build: executions per plan (default 20)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="build: the world's seed (default 0)")
    p.add_argument("--limit", type=int, metavar="N", help="build: only the first N tasks")
    p.add_argument("--min-rate", type=float, default=0.5, help="prune: delete plans below this success rate")
    p.add_argument("--min-runs", type=int, default=5, help="prune: ... over at least this many runs")
    p.add_argument("file", nargs="?", help="export: output file ('-' or none: stdout); import: JSON Lines input")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    path = args.memory or default_path()
    writes = args.action in ("build", "import", "prune", "clear")
    try:
        if args.action == "build" and args.dataset is None:
            raise UsageError("memory build needs --dataset PATH")
        if args.runs < 1:
            raise UsageError(f"--runs must be at least 1, got {args.runs}")
        if writes and not path.parent.exists():
            private_dir(path.parent) if args.memory is None else None  # barsym's own data folder: 0700
        store = MemoryStore(path, readonly=not writes)
    except (UsageError, MemoryFileError) as exc:
        return fail(str(exc))
    except OSError as exc:  # the default folder cannot be made (a read-only home)
        return fail(f"memory {path}: cannot create the folder {path.parent} ({exc.strerror or exc})")
    with store:
        try:
            return ACTIONS[args.action](store, args)
        except (UsageError, MemoryFileError) as exc:
            return fail(str(exc))


def _build(store: MemoryStore, args) -> int:
    from ..eval import DatasetError, load_dataset
    from ..kb import rules_for
    from ..planner.decomposer import PlanningError
    from ..planner.registry import make_planner
    from ..sim.execution import run as run_plan
    from .world_options import WORLDS
    kb = kb_from_args(args)
    try:
        tasks = load_dataset(args.dataset, kb)
    except DatasetError as exc:
        raise UsageError(f"--dataset: {exc}") from None
    tasks = tasks[:args.limit] if args.limit else tasks
    try:
        planner = with_memory(make_planner(args.planner, kb), kb, None)
    except (KeyError, ValueError) as exc:
        raise UsageError(f"--planner: {exc.args[0]}") from None
    world = WORLDS[args.world](kb, rules_for(kb, None))
    bar = TerminalProgress()  # a bar on a terminal; one line per task when stderr is piped
    done = runs = successes = 0
    for number, task in enumerate(tasks, start=1):
        bar.bar(number - 1, len(tasks), task.key)
        try:
            result = planner.plan(task.goal, task.start)
        except PlanningError as exc:
            bar.clear()
            print(f"{task.key}: no plan ({exc.message})", file=sys.stderr)
            continue
        execution = run_plan(result.plan, world, args.runs, args.seed, start=task.start)
        record(store, task.key, result, planner.memory, [(args.world, args.seed, execution.runs, execution.successes)])
        done, runs, successes = done + 1, runs + execution.runs, successes + execution.successes
        if not bar.enabled:
            print(f"[{number}/{len(tasks)}] {task.key}: {execution.successes}/{execution.runs} runs succeeded",
                  file=sys.stderr)
    bar.clear()
    print(f"recorded {done} of {len(tasks)} plan(s) into {store.path} ({successes}/{runs} runs succeeded)")
    return 0


def _stats(store: MemoryStore, args) -> int:
    print(json.dumps(store.counts(), indent=2))
    return 0


def _show(store: MemoryStore, args) -> int:
    for item, count in store.goals():
        for c in store.candidates(item, count):
            r = c.record
            subgoals = ", ".join(f"{g['count']} {g['item']}" for g in r.subgoals) or "nothing"
            print(f"{count} {item}: {r.step.get('type')} -> needs {subgoals}; {c.successes}/{c.runs} runs "
                  f"over {c.plans} plan(s) [{r.provenance}]")
    return 0


def _export(store: MemoryStore, args) -> int:
    out = sys.stdout if args.file in (None, "-") else open(args.file, "w", encoding="utf-8")
    try:
        for plan in store.export_plans():
            out.write(json.dumps(plan) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _import(store: MemoryStore, args) -> int:
    if not args.file:
        raise UsageError("memory import needs a JSON Lines file")
    try:
        lines = Path(args.file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{args.file}: cannot read ({exc})") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UsageError(f"{args.file}:{number}: not JSON ({exc.msg})") from None
    try:
        store.import_plans(records)  # all or none: a bad record leaves the memory as it was
    except ValueError as exc:
        raise UsageError(f"{args.file}: {exc}; nothing imported") from None
    print(f"imported {len(records)} plan(s) into {store.path}")
    return 0


def _prune(store: MemoryStore, args) -> int:
    print(f"pruned {store.prune(args.min_rate, args.min_runs)} plan(s)")
    return 0


def _clear(store: MemoryStore, args) -> int:
    store.clear()
    print(f"cleared {store.path}")
    return 0


ACTIONS = {"build": _build, "show": _show, "stats": _stats, "export": _export, "import": _import,
           "prune": _prune, "clear": _clear}
