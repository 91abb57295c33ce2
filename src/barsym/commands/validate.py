"""``barsym validate FILE... [--goal ITEM] [--format text|json]``: check hand-written plans.

Exit status: 0 every plan valid (waste allowed), 1 some plan invalid, 2 some
input unusable (unreadable, not JSON Lines, bad field values, bad options).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..validation import Validator, Verdict, summary_line, unusable_record
from .common import UsageError, add_format
from .plan_files import PlanFiles, add_plan_file_arguments, plan_inputs
from .planner_arguments import add_model_arguments
from .state_options import add_state_arguments

HELP = "check plans (BAR JSON Lines or `mine 4 logs` lines) step by step"
DESCRIPTION = "Play each plan forward and report valid / valid with waste / invalid."


def add_arguments(p, models: bool = True) -> None:
    """The arguments; without ``models`` not the model options of ``--text`` (:func:`barsym.cli.plain_args`)."""
    add_plan_file_arguments(p, files="*")  # --text FILE stands in for the plan files
    add_format(
        p,
        "text|json",
        "text: a verdict per plan and its errors (default); json: one array with a record per plan",
        json_alias=True,
    )
    p.add_argument("--quiet", action="store_true", help="text output: only plans that are not plainly valid")
    add_state_arguments(p)
    p.add_argument(
        "--text",
        metavar="FILE",
        help="a plan written in prose: parse it into steps first (barsym parse); validated after any plan files",
    )
    if models:
        add_model_arguments(p)  # for --text: the model options of barsym parse


def plain_enough(args: argparse.Namespace) -> bool:
    """Plan files alone read no model option (``--text``, a plan in prose, does)."""
    return args.text is None


def run(args: argparse.Namespace) -> int:
    if args.text is None and not args.files:
        raise UsageError("give the plan files to validate (or --text FILE for a plan in prose)")
    if args.text is not None and not args.files:  # barsym validate --text FILE: barsym parse FILE
        from .parse import parse_and_validate

        return parse_and_validate(args, args.text)
    inputs = plan_inputs(args)
    kb, goal, start, rules = inputs
    prose, unusable = _prose(args, inputs) if args.text is not None else (None, None)  # the model first: fails fast
    validator = Validator(kb, rules)
    records: list[dict] = []
    verdicts: list[Verdict] = []
    files = PlanFiles(args.files, lambda name, why: records.append(unusable_record(name, why)), args.format != "json")
    for _, plan in files:
        result = validator.validate(plan, goal=goal(plan), start=start)
        verdicts.append(result.verdict)
        records.append(result.to_dict())
        if args.format != "json":
            sys.stdout.write(result.to_text(plan, kb.layers, args.quiet))
    if prose is not None:  # the prose plan after the files, as on the command line's --text
        verdicts.append(prose.result.verdict)
        parse = {k: v for k, v in prose.record().items() if k != "validation"}
        records.append({**prose.result.to_dict(), **parse})  # a plan file's fields, and the parse's
        if args.format != "json":
            sys.stdout.write(prose.text(tuple(kb.layers)))
    elif unusable is not None:
        records.append(unusable)
    bad = len(files.unusable) + (unusable is not None)
    print(json.dumps(records, indent=2) if args.format == "json" else summary_line(verdicts, bad))
    if bad:
        return 2
    return 1 if Verdict.INVALID in verdicts else 0


def _prose(args: argparse.Namespace, inputs):
    """``--text FILE`` beside plan files: (the parsed plan, None), or (None, its unusable record) for a file that is
    not prose -- named in one line, as an unusable plan file is, while the plan files are still validated."""
    from ..bar_io import PlanFormatError
    from .parse import parse_file

    try:
        return parse_file(args, args.text, inputs), None
    except PlanFormatError as exc:
        message = " ".join(str(exc).split())
        if args.format != "json":
            print(f"barsym: error: {message}", file=sys.stderr)
        return None, unusable_record("<stdin>" if args.text == "-" else args.text, message)
