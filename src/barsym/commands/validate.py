"""``barsym validate FILE... [--goal ITEM] [--format text|json]``: check hand-written plans.

Exit status: 0 every plan valid (waste allowed), 1 some plan invalid, 2 some
input unusable (unreadable, not JSON Lines, bad field values, bad options).
"""

from __future__ import annotations

import argparse
import json

from ..model import Plan
from ..validation import ValidationResult, Validator, Verdict
from .common import add_format, fail, kb_from_args
from .plan_files import add_plan_file_arguments, each_plan, goal_from_args
from .state_options import add_state_arguments, rules_from_args, start_from_args


def add_parser(sub) -> None:
    p = sub.add_parser(
        "validate",
        help="check plans (BAR JSON Lines or `mine 4 logs` lines) step by step",
        description="Play each plan forward and report valid / valid with waste / invalid.",
    )
    add_plan_file_arguments(p)
    add_format(
        p,
        "text|json",
        "text: a verdict per plan and its errors (default); json: one array with a record per plan",
        json_alias=True,
    )
    p.add_argument("--quiet", action="store_true", help="text output: only plans that are not plainly valid")
    add_state_arguments(p)
    from .llm_options import add_model_arguments  # only for --text: the model options of barsym parse

    p.add_argument("--text", metavar="FILE", help="a plan written in prose: parse it into steps first (barsym parse)")
    add_model_arguments(p)
    next(a for a in p._actions if a.dest == "files").nargs = "*"  # --text FILE stands in for the plan files
    p.set_defaults(run=run)


def _print_text(result: ValidationResult, plan: Plan, quiet: bool, layers: tuple[str, ...]) -> None:
    goal = f"goal {result.goal.count} {result.goal.item}" if result.goal else "no goal"
    if result.verdict is Verdict.VALID:
        if not quiet:
            print(f"{result.source}: valid ({len(plan)} steps, {goal})")
        return
    if result.verdict is Verdict.WASTEFUL:
        print(f"{result.source}: valid with waste ({len(plan)} steps, {goal})")
    else:
        where = f"step {result.failed_step}" if result.failed_step else "the end"
        print(f"{result.source}: INVALID at {where} ({len(plan)} steps, {goal})")
    knock_on = [e for e in result.errors if e.caused_by is not None]
    for error in result.errors:
        if error.caused_by is not None:
            continue
        if error.step:
            print(f"  step {error.step}: {plan.steps[error.step - 1]}")
        print(f"    error [{error.code}] {error.message}")
        before = result.state_before(error.step) if error.step else result.final_state
        label = "state before" if error.step else "final state"
        print(f"    {label}: {before.describe(layers)}")
    if knock_on:
        steps = ", ".join(str(e.step) for e in knock_on[:8]) + (", ..." if len(knock_on) > 8 else "")
        cause_of = {e.step: e.caused_by for e in result.errors}
        roots = set()
        for e in knock_on:
            root = e.caused_by
            while cause_of.get(root) is not None:
                root = cause_of[root]
            roots.add(root)
        causes = ", ".join(str(c) for c in sorted(roots))
        print(
            f"  {len(knock_on)} later step(s) also fail (steps {steps}): knock-on failures of step(s) {causes}, "
            f"which made nothing"
        )
    for warning in result.warnings:
        step = f"step {warning.step}" if warning.step else "plan"
        print(f"  {step}: warning [{warning.code}] {warning.message}")


def run(args: argparse.Namespace) -> int:
    if args.text is not None or not args.files:  # barsym validate --text FILE: barsym parse FILE
        if args.text is None or args.files:
            return fail(
                "give plan files, or --text FILE for a plan in prose, not both"
                if args.files
                else "give the plan files to validate (or --text FILE for a plan in prose)"
            )
        from .parse import parse_and_validate

        return parse_and_validate(args, args.text)
    kb = kb_from_args(args)
    goal = goal_from_args(kb, args)
    start = start_from_args(kb, args)
    rules = rules_from_args(kb, args)
    validator = Validator(kb, rules)
    records: list[dict] = []
    counts = {Verdict.VALID: 0, Verdict.WASTEFUL: 0, Verdict.INVALID: 0}
    unusable: list[str] = []

    def unusable_file(name: str, message: str) -> None:
        unusable.append(name)
        records.append(
            {
                "file": name,
                "valid": False,
                "verdict": "unusable input",
                "errors": [{"step": None, "code": "bad_input", "message": message}],
                "warnings": [],
            }
        )

    for _, plan in each_plan(args.files, unusable_file, show_errors=args.format != "json"):
        result = validator.validate(plan, goal=goal, start=start)
        counts[result.verdict] += 1
        records.append(result.to_dict())
        if args.format != "json":
            _print_text(result, plan, args.quiet, kb.layers)
    if args.format == "json":
        print(json.dumps(records, indent=2))
    else:
        total = len(args.files)
        extra = f", {len(unusable)} unusable" if unusable else ""
        print(
            f"summary: {total} plan(s): {counts[Verdict.VALID]} valid, {counts[Verdict.WASTEFUL]} valid with waste, "
            f"{counts[Verdict.INVALID]} invalid{extra}"
        )
    if unusable:
        return 2
    return 1 if counts[Verdict.INVALID] else 0
