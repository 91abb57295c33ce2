"""``barsym eval --dataset PATH [--planner NAME] [--json FILE]``: BAR's table.

Plans every task of a dataset the user names (BAR's tech-tree folder, or a task
list such as DEPS's), prints Acc / F1 / ED per group and overall as in the
paper, then what the run cost: executable-plan rate, LLM calls, tokens,
first-try acceptance and fallback rates, wall time per task; then every task
whose plan differs from the expert plan with the validator's view of both.
Exit status: 0 every task got an executable plan (or has a clear unreachable
reason), 1 some task could not be planned or its plan cannot run (``llm-only``),
2 unusable input (including a model or server that cannot be used).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..eval import DatasetError, evaluate, format_details, format_table, load_dataset
from ..eval import plancraft
from ..eval.execution_report import execute_evaluation, format_execution, group_executions
from ..eval.llm_report import format_summary, summarize
from ..memory import TaskRecorder, with_memory
from ..planner import DEFAULT_PLANNER, planner_names
from .common import UsageError, check_writable, fail, kb_from_args
from .consistency_options import add_consistency_arguments
from .llm_options import TerminalProgress, add_llm_arguments, build_planner
from .memory_options import add_memory_arguments, open_memory
from .plan import check_planner
from .state_options import rules_from_args
from .world_options import add_world_arguments, world_from_args


def add_parser(sub) -> None:
    p = sub.add_parser("eval", help="score a planner on a task set with BAR's metrics",
                       description="Plan every task of a dataset and compare with the expert plans "
                                   "(AccuracyHard, F1ScoreHard, EditDistanceHard per group).")
    p.add_argument("--dataset", required=True, type=Path, metavar="PATH",
                   help="BAR tech-tree folder (tasks.json + GROUP/TASK.jsonl) or a task-list JSON file")
    p.add_argument("--planner", default=DEFAULT_PLANNER, metavar="NAME",
                   help=f"{', '.join(planner_names())} (default {DEFAULT_PLANNER})")
    p.add_argument("--dialect", metavar="NAME", help="name dialect of the task set, e.g. deps for DEPS's old names")
    p.add_argument("--json", type=Path, metavar="FILE", help="also write groups, overall and per-task results as JSON")
    p.add_argument("--quiet", action="store_true", help="print the tables only, not the per-task differences")
    p.add_argument("--rules", metavar="NAME",
                   help="rule profile: survival (default) or crafting (implied by Plancraft's task file)")
    add_llm_arguments(p)
    add_world_arguments(p, "--world-seed", default_world=None)
    add_consistency_arguments(p, flag=True)
    add_memory_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    progress = None
    try:
        check_writable(args.json, "--json")
        name = check_planner(args.planner)
        kb = kb_from_args(args)
        if args.dialect is not None and args.dialect not in kb.dialects:
            raise UsageError(f"unknown dialect {args.dialect!r}; known: {', '.join(sorted(kb.dialects)) or 'none'}")
        tasks = load_dataset(args.dataset, kb, dialect=args.dialect)
        implied = next((t.rules for t in tasks if t.rules), None)  # Plancraft's tasks imply the crafting rules
        rules = rules_from_args(kb, args, default=implied)
        execution = world_from_args(kb, rules, args)
        plancraft_tasks = any(t.label_possible is not None for t in tasks)
        store = open_memory(args)  # before the model loads: a bad memory file is found at once
        if store is not None and plancraft_tasks:
            raise UsageError("--memory works with tech-tree task sets (BAR's, DEPS's), not Plancraft's")
        progress = TerminalProgress()
        planner = build_planner(name, kb, args, progress, rules=rules)
        if store is not None:
            try:
                planner = with_memory(planner, kb, store)
            except ValueError as exc:
                raise UsageError(f"--memory: {exc}") from None
    except (UsageError, DatasetError) as exc:
        if progress is not None:
            progress.clear()
        return fail(str(exc))
    if plancraft_tasks:
        return _run_plancraft(args, tasks, planner, kb, name, rules, progress, execution)
    recorder = TaskRecorder(store, planner.memory) if store is not None and args.record else None

    def next_task(done: int, total: int, outcome=None) -> None:
        if recorder is not None and outcome is not None and outcome.result is not None:
            recorder.planned(outcome.task.key, outcome.result)  # now: the next plan resets the noted contexts
        if done < total:
            progress.task(f"task {done + 1}/{total} {tasks[done].key}")

    next_task(0, len(tasks))
    evaluation = evaluate(tasks, planner, kb, name=name, progress=next_task, rules=rules)
    progress.clear()
    summary = summarize(evaluation)
    mode = f" ({args.llm_mode} mode)" if "llm_mode" in _first_stats(evaluation) else ""
    print(f"planner {name}{mode} on {args.dataset} ({len(tasks)} tasks)")
    print(format_table(evaluation))
    print()
    print(format_summary(summary))
    if store is not None:
        print(_memory_line(evaluation))
    executed = _print_execution(evaluation, execution)
    if recorder is not None:
        _record_executions(recorder, executed)
        runs = f" with {execution.runs} {execution.world.name} run(s) each" if executed else ""
        print(f"\nrecorded {len(recorder.plan_ids)} plan(s){runs} into {store.path}")
    details = format_details(evaluation)
    if details and not args.quiet:
        print()
        print(details)
    if args.json:
        try:
            args.json.write_text(json.dumps(_with_execution({**evaluation.to_dict(), "summary": summary}, executed),
                                            indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            return fail(f"cannot write {args.json}: {exc.strerror}")
    failed = evaluation.counts()["failed"]
    broken = sum(o.result is not None and not o.result.validation.valid for o in evaluation.outcomes)
    if failed:
        print(f"barsym: {failed} task(s) could not be planned", file=sys.stderr)
    if broken:
        print(f"barsym: {broken} plan(s) cannot be executed (validator)", file=sys.stderr)
    down = next((o.result.stats["backend_down"] for o in evaluation.outcomes
                 if o.result is not None and o.result.stats.get("backend_down")), None)
    if down:
        print(f"barsym: warning: the LLM backend failed ({down}); the symbolic decomposer answered in its place",
              file=sys.stderr)
    return 1 if failed or broken else 0


def _print_execution(evaluation, execution) -> dict | None:
    """With ``--world``: every plan (and expert plan) executed, and a table of success rates per group."""
    if execution is None:
        return None
    tasks = execute_evaluation(evaluation, execution.world, execution.runs, execution.seed, execution.budget)
    rows = group_executions(evaluation, tasks, execution.runs)
    print()
    print(format_execution(rows, execution.world.name, execution.runs, execution.seed))
    return {"world": execution.world.name, "runs": execution.runs, "seed": execution.seed,
            "groups": {row.name: row.to_dict() for row in rows},
            "tasks": {key: {"planner": t.planner.to_dict() if t.planner else None,
                            "expert": t.expert.to_dict() if t.expert else None} for key, t in tasks.items()}}


def _memory_line(evaluation) -> str:
    stats = [o.result.stats for o in evaluation.outcomes if o.result is not None]
    hits, misses = sum(s.get("memory_hits", 0) for s in stats), sum(s.get("memory_misses", 0) for s in stats)
    stale, few = sum(s.get("memory_stale", 0) for s in stats), sum(s.get("memory_examples", 0) for s in stats)
    share = f" ({100 * hits / (hits + misses):.1f} %)" if hits + misses else ""
    return (f"memory: {hits} of {hits + misses} goal(s) answered from memory{share}, {stale} entries refused as "
            f"stale, {few} goal(s) given remembered examples of close goals")


def _record_executions(recorder: TaskRecorder, executed: dict | None) -> None:
    """Credit each recorded plan with its runs (with the seed the execution report gave that task)."""
    if executed is None:
        return
    for key, task in executed["tasks"].items():
        ran = task["planner"]
        if ran is not None:
            recorder.executed(key, executed["world"], ran["seed"], ran["runs"], ran["successes"])


def _with_execution(report: dict, executed: dict | None) -> dict:
    if executed is not None:
        report["execution"] = executed
    return report


def _run_plancraft(args, tasks, planner, kb, name, rules, progress, execution) -> int:
    """Plancraft's tasks: verdicts against the labels, plans replayed from each inventory, lengths."""
    def next_task(done: int, total: int, outcome=None) -> None:
        if done < total:
            progress.task(f"task {done + 1}/{total} {tasks[done].name}")

    evaluation = evaluate(tasks, planner, kb, name=name, progress=next_task, rules=rules)
    progress.clear()
    table = plancraft.rows(evaluation, rules)
    print(f"planner {name} on {args.dataset} ({len(tasks)} Plancraft tasks, {rules.name} rules)")
    print(plancraft.format_report(table))
    executed = _print_execution(evaluation, execution)
    if args.json:
        try:
            args.json.write_text(json.dumps(_with_execution(plancraft.to_dict(table, name), executed), indent=2)
                                 + "\n", encoding="utf-8")
        except OSError as exc:
            return fail(f"cannot write {args.json}: {exc.strerror}")
    broken = [r for r in table if r.possible and not r.executes]
    failed = [r for r in table if r.outcome.error is not None and not r.outcome.error.kind.about_goal]
    if broken:
        print(f"barsym: {len(broken)} plan(s) cannot be executed from their inventory (validator)", file=sys.stderr)
    if failed:
        print(f"barsym: {len(failed)} task(s) could not be planned", file=sys.stderr)
    return 1 if broken or failed else 0


def _first_stats(evaluation) -> dict:
    return next((o.result.stats for o in evaluation.outcomes if o.result is not None), {})
