"""``barsym plan ITEM [--count N] [--planner NAME] [--format text|json|bar]``.

Every plan printed here has just been played forward by barsym's own
validator; if a checked planner's plan did not pass, that is a bug in barsym,
reported as an internal error (exit 1) rather than printed. The ``llm-only``
baseline is unchecked by design: its plan is printed with the validator's
verdict and the first error, and exits 1 when it cannot run. Exit status: 0 an
executable plan was printed, 1 no plan exists (the item is unreachable), the
plan cannot run, or an internal error, 2 unusable input (including a model file
or server URL that cannot be used).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..bar_io import format_plan, step_to_record
from ..memory import MemoryFileError, record, with_memory
from ..memory.options import MemoryOptions
from ..model import MAX_COUNT, Goal
from ..planner import DEFAULT_PLANNER, PlanningError, PlanResult, PlanStats, planner_names
from ..validation import Validator
from .common import (
    UsageError,
    add_format,
    add_output,
    check_writable,
    fail,
    kb_from_args,
    number_option,
    outcome,
    write_output,
)
from .llm_options import TerminalProgress, add_llm_arguments, build_planner
from .options import add_model, read_model
from .state_options import add_state_arguments, rules_from_args, start_from_args


def add_parser(sub) -> None:
    p = sub.add_parser(
        "plan",
        help="plan how to obtain an item, BAR-style (backward from the goal)",
        description="Decompose the goal backwards, fuse and order the steps, and check the plan "
        "with the validator before printing it.",
    )
    p.add_argument("item", help="item to obtain, e.g. diamond_pickaxe (aliases such as 'boat' work)")
    p.add_argument("--count", default="1", metavar="N", help=f"how many (1 to {MAX_COUNT}, default 1)")
    p.add_argument(
        "--planner",
        default=DEFAULT_PLANNER,
        metavar="NAME",
        help=f"which planner decomposes goals: {', '.join(planner_names())} (default {DEFAULT_PLANNER})",
    )
    p.add_argument("--dialect", metavar="NAME", help="read ITEM in a task set's old names, e.g. deps")
    add_format(
        p, "text|json|bar", "text: numbered steps with provenance; json: plan + decomposition tree; bar: BAR JSON Lines"
    )
    add_output(p)
    add_state_arguments(p)
    add_llm_arguments(p)
    add_model(p, MemoryOptions, "stage memory (BAR module c)")
    p.set_defaults(run=run)


def check_planner(name: str) -> str:
    if name not in planner_names():
        raise UsageError(f"unknown planner {name!r}; choose one of: {', '.join(planner_names())}")
    return name


def check_dialect(kb, dialect: str | None) -> str | None:
    if dialect is not None and dialect not in kb.dialects:
        raise UsageError(f"unknown dialect {dialect!r}; known: {', '.join(sorted(kb.dialects)) or 'none'}")
    return dialect


def render_text(result: PlanResult) -> str:
    goal = result.goal
    lines = [
        f"Plan for {goal.count} {goal.item}: {len(result.plan)} steps, planner {result.planner}, "
        f"validator: {result.validation.verdict.value}"
    ]
    start = result.validation.trace[0] if result.validation.trace else None
    if start is not None and (start.inventory or start.layer):
        lines.append(f"  from the start state: {start.describe()}")
    if not result.plan.steps:
        lines.append(
            "  nothing to do: the start inventory already holds the goal"
            if result.validation.valid
            else "  no steps: the planner wrote no usable plan"
        )
    width = max((len(str(s)) for s in result.plan.steps), default=0)
    for i, step in enumerate(result.plan.steps):
        serves = ", ".join(result.serves(i))
        purpose = f" for {serves}" if serves else ""  # forward planners (deps, cot) know only the last step's
        lines.append(f"{i + 1:>3}. {str(step):<{width}}  [{', '.join(result.provenance(i))}]{purpose}")
    if not result.validation.valid:
        error = result.validation.errors[0]
        where = f"step {error.step}" if error.step else "the end"
        lines.append(f"  cannot run: fails at {where}: {error.message}")
    unanswered = [n for n in result.nodes if n.unanswered]
    for node in unanswered[:5]:
        lines.append(f"  no step for {node.goal}: {node.unanswered}")
    if len(unanswered) > 5:
        lines.append(f"  ... and {len(unanswered) - 5} more goals without a step")
    trace = getattr(result, "trace", None)  # deps' rounds, cot's inventories
    if trace is not None:
        lines += trace.lines()
    lines += render_llm_stats(result.stats)
    lines += render_memory_stats(result.stats)
    lines += render_consistency_stats(result.stats)
    return "\n".join(lines) + "\n"


PRIMED = {"disk": "loaded from the cache", "evaluated": "evaluated", "memory": "already in memory"}


def render_memory_stats(stats: PlanStats) -> list[str]:
    """One line on the stage memory, if the plan had one."""
    m = stats.memory
    if m is None:
        return []
    shots = f", {m.examples} goal(s) given remembered examples of close goals" if m.examples else ""
    return [
        f"memory: {m.hits} goal(s) answered from memory, {m.misses} passed on "
        f"({100 * m.share:.0f} % from memory), {m.stale} refused as stale{shots}"
    ]


def render_consistency_stats(stats: PlanStats) -> list[str]:
    """One line on what state consistency (bar-sc, --consistency) did, if it ran."""
    c = stats.consistency
    if c is None:
        return []
    verdict = lambda valid: "valid" if valid else "invalid"  # noqa: E731
    if c.valid_before:
        return ["state consistency: the plan was valid; nothing to repair"]
    return [
        f"state consistency: {verdict(c.valid_before)} -> {verdict(c.valid_after)} in {c.rounds} round(s), "
        f"{c.windows} window(s), {c.repaired_steps} step(s) repaired, {c.kept_steps} kept; "
        f"LLM calls: {c.scoring_llm_calls or 0} scoring, {c.repair_llm_calls or 0} repair "
        f"({c.repair_forced or 0} steps with a single option, no call), "
        f"{c.symbolic_fallbacks} symbolic fallback(s); {c.seconds:.1f} s"
    ]


def render_llm_stats(stats: PlanStats) -> list[str]:
    """The LLM counters of one plan, in two lines (nothing for planners without a model)."""
    s = stats.llm
    if s is None:
        return []
    # fallbacks (or llm-only's unanswered goals) beyond the goals put to the model were given up without a call
    left = max(0, s.llm_goals - s.accepted_first_try - s.accepted_after_feedback)
    not_asked = max(0, s.fallbacks + s.unanswered - left)
    without = f" ({not_asked} without a call)" if not_asked else ""
    if stats.llm_verified is not False:
        decided = (
            f"accepted first try {s.accepted_first_try}, after feedback {s.accepted_after_feedback}, "
            f"symbolic fallback {s.fallbacks}{without}"
        )
    else:
        decided = (
            f"used unchecked {s.accepted_first_try + s.accepted_after_feedback}, "
            f"no usable answer {s.unanswered}{without}, loops cut {s.loops_cut}"
        )
    lines = [
        f"LLM ({stats.llm_mode or '?'} mode): {s.llm_calls} calls for {s.llm_goals} goals"
        f" ({s.retries} retries, {s.reused_replies} replies reused); {decided}; "
        f"answered without a call: {s.context_answers} from context, {s.graph_forced} forced by the graph",
        f"tokens: prompt {s.prompt_tokens} (evaluated {s.evaluated_prompt_tokens}, cached "
        f"{s.cached_prompt_tokens}), completion {s.completion_tokens} in {s.evaluations} model "
        f"evaluations; LLM time {round(s.llm_seconds, 3):.1f} s of {stats.seconds or 0:.1f} s"
        + (
            f" (few-shot prefix {PRIMED.get(s.prefix, s.prefix)} in {round(s.prefix_seconds, 3):.2f} s)"
            if s.prefix
            else ""
        ),
    ]
    if stats.plan_fallback:
        lines.append(f"plan-level fallback to the symbolic planner: {stats.plan_fallback}")
    return lines


def render_json(result: PlanResult, code: int = 0) -> str:
    steps = []
    for i, step in enumerate(result.plan.steps):
        steps.append(
            {
                "n": i + 1,
                **step_to_record(step),
                "text": str(step),
                "provenance": result.provenance(i),
                "for": result.serves(i),
            }
        )
    reason = None
    if not result.validation.valid:
        error = result.validation.errors[0]
        reason = f"fails at {f'step {error.step}' if error.step else 'the end'}: {error.message}"
    data = {
        **outcome("planned" if result.validation.valid else "invalid", reason, code),
        "goal": {"item": result.goal.item, "count": result.goal.count},
        "planner": result.planner,
        "decomposer": result.decomposer,
        "verdict": result.validation.verdict.value,
        "errors": [e.to_dict() for e in result.validation.errors],
        "warnings": [w.to_dict() for w in result.validation.warnings],
        "steps": steps,
        "tree": result.tree(),
        "stats": result.stats.to_dict(),
    }
    trace = getattr(result, "trace", None)
    if trace is not None:
        data["trace"] = trace.to_dict()
    return json.dumps(data, indent=2) + "\n"


def run(args: argparse.Namespace) -> int:
    check_writable(args.output, "-o")
    count = number_option(args.count, "--count", int, 1, MAX_COUNT)
    name = check_planner(args.planner)
    kb = kb_from_args(args)
    goal = Goal(item=kb.resolve(args.item, dialect=check_dialect(kb, args.dialect)), count=count)
    rules = rules_from_args(kb, args)
    start = start_from_args(kb, args)
    store = read_model(args, MemoryOptions).open()  # before the model loads: a bad memory file is found at once
    progress = TerminalProgress()
    try:
        planner = build_planner(name, kb, args, progress, rules=rules)
        if store is not None:
            planner = with_memory(planner, kb, store)
    except ValueError as exc:  # a planner without a decomposer
        raise UsageError(f"--memory: {exc}") from None
    render = {"text": render_text, "json": render_json, "bar": lambda r, code=0: format_plan(r.plan)}[args.format]
    try:
        result = planner.plan(goal, start)
    except PlanningError as exc:
        progress.clear()
        if exc.kind == "too_large":
            raise UsageError(exc.message) from None
        unchecked = getattr(planner, "plan_fallback", True) is False
        internal = exc.kind in ("invalid", "decomposition", "no_order") and not unchecked
        if args.format == "json":  # no plan is a result too: on stdout, with why and the exit status
            write_output(
                args.output,
                json.dumps(
                    outcome(
                        "internal_error" if internal else "no_plan",
                        exc.message,
                        1,
                        kind=exc.kind,
                        goal={"item": goal.item, "count": goal.count},
                        planner=name,
                    ),
                    indent=2,
                )
                + "\n",
            )
        print(f"barsym: {'internal error: ' if internal else ''}{exc.message}", file=sys.stderr)
        return 1
    progress.clear()
    if result.stats.backend_down:
        print(
            f"barsym: warning: the LLM backend failed ({result.stats.backend_down}); "
            f"the symbolic decomposer answered in its place",
            file=sys.stderr,
        )
    check = Validator(kb, rules).validate(result.plan, goal=goal, start=start)
    if not check.valid and not result.validation.valid:  # an unchecked planner's plan: shown, and exit 1
        write_output(args.output, render(result, 1) if args.format == "json" else render(result))
        return 1
    if not check.valid:
        error = check.errors[0]
        message = (
            f"the {name} planner produced a plan its validator rejects "
            f"(step {error.step}: {error.message}); please report this"
        )
        if args.format == "json":
            write_output(args.output, json.dumps(outcome("internal_error", message, 1, planner=name), indent=2) + "\n")
        print(f"barsym: internal error: {message}", file=sys.stderr)
        return 1
    unrecorded = None
    if store is not None and args.record:
        try:
            record(store, f"plan/{goal.item}", result, planner.memory)  # no executions: `memory build` adds those
        except MemoryFileError as exc:  # locked past the busy timeout, a full disk: the plan is still shown
            unrecorded = str(exc)
    write_output(args.output, render(result))
    return fail(f"{unrecorded}; the plan was not recorded") if unrecorded else 0
