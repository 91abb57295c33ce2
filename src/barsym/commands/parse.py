"""``barsym parse FILE [--format text|json|bar] [--goal ITEM]``: a plan in prose -> BAR steps -> the validator's verdict.

DEPS' goal parser for people who write plans in words ("chop four logs, make
planks, then a crafting table"): the model turns each clause into one step
under the step grammar (:mod:`barsym.reasoning.prose.parser` says how a 135M model is
given a chance), then barsym's validator plays the steps. ``--llm-stand-in``
runs a chooser instead of the model (the baselines of ``bench/bench_parse.py``).
``barsym validate --text FILE`` is the same command (with plan files beside it,
too). ``--format bar`` writes the steps as BAR JSON Lines, as ``barsym plan
--format bar`` does: the records an annotator corrects and ``barsym validate``
reads (the verdict, when the plan cannot run, is one line on stderr).

The text ends with what ran (the model by its files' SHA-256, the time the
parse took, the rules and the start state), the JSON has the same fields; on
stderr, a status line on a terminal or a line per phase elsewhere (``--quiet``:
none).

Exit status: 0 the steps are a valid plan (waste allowed), 1 they are not,
2 unusable input (no such file, empty, binary, not UTF-8, no step found) or options.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass

from ..bar_io import PlanFormatError, format_plan
from ..model import GoalOptions, Plan
from ..reasoning.prose.prose_io import parse_prose, parsed_record, parsed_text, read_text
from ..validation import ValidationResult, Validator, Verdict
from .common import UsageError, add_format, ran_lines, ran_record
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
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    add_model_arguments(p)


def run(args: argparse.Namespace) -> int:
    return parse_and_validate(args, args.file)


@dataclass
class Parsed:
    """A prose file parsed and validated, and what ran to do it."""

    where: str
    parsed: object  # barsym.reasoning.prose.parser.ParsedPlan
    plan: Plan
    result: ValidationResult
    made_by: str
    seconds: float
    ran: dict  # .common.ran_record, with the seconds

    def record(self) -> dict:
        ran = {k: v for k, v in self.ran.items() if k != "planner"}  # "parsed_by" says it
        return {**parsed_record(self.parsed, self.where, self.made_by, self.result), **ran}

    def text(self, layers: tuple[str, ...]) -> str:
        footer = ran_lines(self.ran, layers, what=f"parse ({self.seconds:.1f} s)")
        return parsed_text(self.parsed, self.where, self.made_by, self.result) + "\n".join(footer) + "\n"


def parse_file(args: argparse.Namespace, path: str, inputs) -> Parsed:
    """Read, parse and validate one prose file; a file or model that cannot be used is a PlanFormatError/UsageError."""
    from ..llm import LLMError  # the model failing mid-parse: one line, like any setting that cannot be used
    from ..llm.provenance import backend_record
    from .progress_line import TerminalProgress

    kb, goal, start, rules = inputs
    where = "<stdin>" if path == "-" else path
    options = model_settings(args)
    progress = TerminalProgress(quiet=getattr(args, "quiet", False) or bool(options.llm_stand_in))  # no model: fast
    try:
        text = read_text(path)  # before the model loads: a file that is not prose is found at once
        backend = backend_from(options, kb, progress, args)
        progress.say(f"parsing {where}: {len(text.split())} words")
        started = time.perf_counter()
        parsed, plan = parse_prose(kb, text, where, backend, seed=options.seed)
        seconds = time.perf_counter() - started
    except LLMError as exc:  # one line, exit 2 (barsym.cli); a file that is not prose is the caller's PlanFormatError
        raise UsageError(" ".join(str(exc).split())) from None
    finally:
        progress.clear()
    result = Validator(kb, rules).validate(plan, goal=goal(plan), start=start)
    made_by = f"stand-in {options.llm_stand_in}" if options.llm_stand_in else "model"
    ran = {**ran_record("parse", backend_record(backend), rules.name, start), "seconds": round(seconds, 3)}
    return Parsed(where, parsed, plan, result, made_by, seconds, ran)


def parse_and_validate(args: argparse.Namespace, path: str) -> int:
    inputs = plan_inputs(args)  # validate --text: its --start/--inventory/--layer/--rules apply
    try:
        done = parse_file(args, path, inputs)
    except PlanFormatError as exc:
        raise UsageError(" ".join(str(exc).split())) from None
    if args.format == "json":
        print(json.dumps(done.record(), indent=2))
    elif args.format == "bar":  # stdout is the records alone; why they cannot run goes to stderr
        sys.stdout.write(format_plan(done.plan))
        if done.result.verdict is Verdict.INVALID:
            print(f"barsym: the parsed plan cannot run: {done.result.failure()}", file=sys.stderr)
    else:
        sys.stdout.write(done.text(tuple(inputs[0].layers)))
    return 1 if done.result.verdict is Verdict.INVALID else 0
