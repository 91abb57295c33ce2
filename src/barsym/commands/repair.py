"""``barsym repair FILE... [--goal ITEM] [START] [--anchors ...] [--scores ...] [--repairer ...]``.

What a person annotating plans wants after ``validate`` said what is wrong: a
proposed fix, shown as a diff against their plan. Each plan is repaired by
BAR's state consistency (module b): steps scored below ``--t`` start anchor
pairs, the windows between anchors are regenerated forward from the state
before them, and the result is played again, for up to ``--repair-rounds`` rounds.
Steps outside the windows are the user's, unchanged. Defaults need no model:
simulator scores and the symbolic repairer.

Exit status: 0 every repaired plan is valid (or was already), 1 some plan
cannot be repaired (its goal cannot be had at all, or the rounds ran out),
2 unusable input (an unreadable or empty file, a bad option, a model that
cannot be used).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..bar_io import format_plan
from ..consistency import CannotRepair, ConsistencyConfig, StateConsistency
from ..consistency.report import cannot_repair_record, repair_record, repair_status, repair_text
from ..model import Plan
from .common import UsageError, add_format, outcome
from .llm_options import add_consistency_arguments, add_model_arguments, backend_from, model_settings
from .options import read_model
from .plan_files import PlanFiles, add_plan_file_arguments, plan_inputs
from .state_options import add_state_arguments

HELP = "repair plans forward between anchors (BAR's state consistency)"
DESCRIPTION = (
    "Score every step, pick anchor pairs, regenerate the windows between them "
    "forward from the simulated state, and show the fix as a diff."
)


def add_arguments(p) -> None:
    add_plan_file_arguments(p)
    add_format(
        p,
        "text|json|bar",
        "text: a diff against the plan; json: one array, a record per file; bar: the "
        "repaired plan as BAR JSON Lines (one file)",
    )
    add_state_arguments(p)
    add_consistency_arguments(p)
    add_model_arguments(p, "LLM (for --scores llm|both and --repairer llm)")


def build(kb, args, rules) -> StateConsistency:
    """The module as the options configure it (a model is loaded only if they need one)."""
    llm = model_settings(args)
    config = read_model(args, ConsistencyConfig, skip=("seed",), seed=llm.seed)
    backend = backend_from(llm, kb, args=args) if config.uses_llm else None
    from ..reasoning import model_consistency

    return model_consistency(kb, config, rules=rules, backend=backend, temperature=llm.temperature)


def run(args: argparse.Namespace) -> int:
    if args.format == "bar" and len(args.files) > 1:
        raise UsageError("--format bar prints one plan; give one file, or use --format json")
    kb, goal, start, rules = plan_inputs(args)
    engine = build(kb, args, rules)
    records: list[dict] = []  # printed under --format json
    unrepaired = 0
    files = PlanFiles(args.files, lambda name, why: records.append({**outcome("unusable", why, 2), "file": name}))
    for shown_path, plan in files:
        try:
            result = engine.repair(plan, goal=goal(plan), start=start)
        except CannotRepair as exc:
            unrepaired += 1
            if args.format == "json":
                records.append({**outcome("cannot_repair", str(exc), 1), **cannot_repair_record(shown_path, exc)})
            print(f"barsym: cannot repair {shown_path}: {exc}", file=sys.stderr)
            continue
        unrepaired += not result.valid_after
        if args.format == "json":
            status, reason = repair_status(result)
            records.append(
                {**outcome(status, reason, int(status == "unrepaired")), **repair_record(shown_path, result)}
            )
        elif args.format == "bar":
            sys.stdout.write(format_plan(Plan(steps=result.plan.steps)))
        else:
            sys.stdout.write(repair_text(shown_path, result))
    if args.format == "json":
        print(json.dumps(records, indent=2))
    if files.unusable:
        return 2
    return 1 if unrepaired else 0
