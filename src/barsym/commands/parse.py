"""``barsym parse FILE [--format text|json|bar] [--goal ITEM]``: a plan in prose -> BAR steps -> the validator's verdict.

DEPS' goal parser for people who write plans in words ("chop four logs, make
planks, then a crafting table"): the model turns each clause into one step
under the step grammar (:mod:`barsym.reasoning.prose` says how a 135M model is
given a chance), then barsym's validator plays the steps. ``--llm-stand-in``
runs a chooser instead of the model (the baselines of ``bench/bench_parse.py``).
``barsym validate --text FILE`` is the same command. ``--format bar`` writes
the steps as BAR JSON Lines, as ``barsym plan --format bar`` does: the records an
annotator corrects and ``barsym validate`` reads (the verdict, when the plan
cannot run, is one line on stderr).

Exit status: 0 the steps are a valid plan (waste allowed), 1 they are not,
2 unusable input (no such file, empty, binary, not UTF-8, no step found) or options.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..bar_io import PlanFormatError, format_plan
from ..model import GoalOptions
from ..reasoning.prose_io import parse_prose, parsed_record, parsed_text, read_text
from ..validation import Validator, Verdict
from .common import UsageError, add_format
from .llm_options import add_model_arguments, backend_from, model_settings
from .options import add_model
from .plan_files import plan_inputs

HELP = "turn a plan written in prose into BAR steps (with the model) and validate it"
DESCRIPTION = (
    "Each clause of the text becomes one step, written by the model under barsym's "
    "step grammar; the steps are then validated."
)


def add_arguments(p) -> None:
    p.add_argument("file", metavar="FILE", help="a text file with the plan in words; '-' reads stdin")
    add_format(
        p,
        "text|json|bar",
        "text: the steps and the verdict (default); json: one object; bar: the steps as BAR JSON Lines",
    )
    add_model(p, GoalOptions)
    add_model_arguments(p)


def run(args: argparse.Namespace) -> int:
    return parse_and_validate(args, args.file)


def parse_and_validate(args: argparse.Namespace, path: str) -> int:
    from ..llm import LLMError  # the model failing mid-parse: one line, like any setting that cannot be used

    where = "<stdin>" if path == "-" else path
    kb, goal, start, rules = plan_inputs(args)  # validate --text: its --start/--inventory/--layer/--rules apply
    options = model_settings(args)
    try:
        text = read_text(path)  # before the model loads: a file that is not prose is found at once
        parsed, plan = parse_prose(kb, text, where, backend_from(options), seed=options.seed)
    except (PlanFormatError, LLMError) as exc:  # one line, exit 2 (barsym.cli)
        raise UsageError(" ".join(str(exc).split())) from None
    result = Validator(kb, rules).validate(plan, goal=goal(plan), start=start)
    made_by = f"stand-in {options.llm_stand_in}" if options.llm_stand_in else "model"
    if args.format == "json":
        print(json.dumps(parsed_record(parsed, where, made_by, result), indent=2))
    elif args.format == "bar":  # stdout is the records alone; why they cannot run goes to stderr
        sys.stdout.write(format_plan(plan))
        if result.verdict is Verdict.INVALID:
            print(f"barsym: the parsed plan cannot run: {result.failure()}", file=sys.stderr)
    else:
        sys.stdout.write(parsed_text(parsed, where, made_by, result))
    return 1 if result.verdict is Verdict.INVALID else 0
