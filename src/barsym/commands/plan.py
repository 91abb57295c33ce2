"""``barsym plan ITEM [--count N] [--planner NAME] [--format text|json|bar|actions]``.

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

from ..bar_io import format_plan
from ..memory.options import MemoryOptions
from ..model import Goal
from ..planner import PlanningError, PlanResult
from ..planner.registry import Unsupported, check, planner_names, supports
from ..sim import State
from .common import (
    UsageError,
    add_format,
    add_output,
    check_writable,
    fail,
    kb_from_args,
    outcome,
    planner_model,
    ran_lines,
    ran_record,
    remembering,
    said_as,
    warn,
    write_output,
)
from .options import add_model, read_model
from .planner_arguments import (
    add_llm_arguments,
    add_planner_arguments,
    build_planner,
    check_dialect,
    check_planner,
    plain_planner,
    planner_spec,
)
from .state_options import add_state_arguments, rules_from_args, start_from_args

HELP = "plan how to obtain an item, BAR-style (backward from the goal)"
DESCRIPTION = (
    "Decompose the goal backwards, fuse and order the steps, and check the plan with the validator before printing it."
)


def add_arguments(p, models: bool = True) -> None:
    """The arguments; without ``models`` not the planner and model options' (:func:`barsym.cli.plain_args`)."""
    p.add_argument("item", help="item to obtain, e.g. diamond_pickaxe (aliases such as 'boat' work)")
    add_model(p, Goal, skip=("item",))
    add_planner_arguments(p, "which planner decomposes goals: ", "read ITEM in a task set's old names, e.g. deps")
    add_format(
        p,
        "text|json|bar|actions",
        "text: numbered steps with provenance; json: plan + decomposition tree; bar: BAR JSON Lines; "
        "actions: each step in the --mc-version's item and block ids, for a bot (docs/action_schema.md)",
    )
    add_output(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    add_state_arguments(p)
    if models:
        add_llm_arguments(p)
    add_model(p, MemoryOptions, "stage memory (BAR module c)")


def plain_enough(args: argparse.Namespace) -> bool:
    """A line that sets no planner or model option needs their models only for a planner that asks a model."""
    return args.planner in planner_names() and not supports(args.planner).model


def render_json(result: PlanResult, code: int = 0, ran: dict | None = None, layers: tuple[str, ...] = ()) -> str:
    """The plan as JSON; ``ran`` (:func:`.common.ran_record`): its ``model``, ``rules`` and ``start`` beside it (and
    ``repair``, how state consistency ran, for bar-sc and ``--consistency``)."""
    status = "planned" if result.validation.valid else "invalid"
    data = {**outcome(status, result.validation.failure(), code), **result.to_dict()}
    if ran is not None:
        data = {**data, "model": ran["model"], "rules": ran["rules"], "start": ran["start"]}
        if ran.get("repair"):
            data["repair"] = ran["repair"]
    return json.dumps(data, indent=2) + "\n"


def render_text(result: PlanResult, code: int = 0, ran: dict | None = None, layers: tuple[str, ...] = ()) -> str:
    """The plan as text, with what ran as its footer (piped or not: :func:`.common.ran_lines`)."""
    text = result.to_text()
    if ran is None:
        return text
    return text + ("" if text.endswith("\n") else "\n") + "\n".join(ran_lines(ran, layers)) + "\n"


def render_actions(kb, rules, start):
    """``--format actions``: the plan as a bot runs it (:mod:`barsym.sim.bot_actions`), loaded only when asked for."""

    def render(result: PlanResult, code: int = 0) -> str:
        from ..sim.bot_actions import bot_actions

        played = bot_actions(kb, result.plan.steps, start, rules)
        return json.dumps({**played, "goal": {"item": result.goal.item, "count": result.goal.count}}, indent=1) + "\n"

    return render


#: what each --format prints a plan as (``code``: the exit status a JSON result names)
RENDER = {"text": render_text, "json": render_json, "bar": lambda r, code=0, ran=None, layers=(): format_plan(r.plan)}


def run(args: argparse.Namespace) -> int:
    check_writable(args.output, "-o")
    goal = read_model(args, Goal, skip=("item",), item=args.item)  # the count checked before the model loads
    name = check_planner(args.planner)
    kb = kb_from_args(args)
    goal = goal.model_copy(update={"item": kb.resolve(args.item, dialect=check_dialect(kb, args.dialect))})
    said_as(args.item, goal.item)
    rules = rules_from_args(kb, args)
    start = start_from_args(kb, args)
    try:  # a start the planner declares it cannot plan from: one line before the model loads
        check(name, start=start is not None and start != State())
    except Unsupported as exc:
        raise UsageError(str(exc)) from None
    store, unrecorded = _open_memory(args)  # before the model loads: a bad memory file is found at once
    planner, progress, model = plain_planner(name, kb, args, rules), None, None  # no option given: no spec needed
    if planner is None:
        spec = planner_spec(name, kb, args, rules)  # the flags as one typed value, all the way to the planner
        progress = _progress(spec, args)
        try:
            planner = build_planner(spec, kb, args, progress)
        except BaseException:  # a model or server that cannot be used: the line goes before the error's
            _clear(progress)
            raise
        model = planner_model(spec)
    consistency = getattr(getattr(planner, "consistency", None), "config", None)  # bar-sc, --consistency
    planner = remembering(planner, kb, store)
    ran = ran_record(name, model, rules.name, start)
    if consistency is not None:  # how module (b) ran: who scored, who repaired, who planned the needs
        ran["repair"] = consistency.describe()
    layers = tuple(kb.layers)
    actions = render_actions(kb, rules, start) if args.format == "actions" else None

    def render(result: PlanResult, code: int = 0) -> str:
        if actions is not None:
            return actions(result, code)
        return RENDER[args.format](result, code, ran=ran, layers=layers)

    try:
        result = planner.plan(goal, start)
    except PlanningError as exc:
        if exc.kind == "too_large":
            raise UsageError(exc.message) from None
        # a planner that checks its plans failing for any reason but the goal's is a bug in barsym
        internal = not exc.kind.about_goal and getattr(planner, "plan_fallback", True) is not False
        where = {"kind": exc.kind.value, "goal": {"item": goal.item, "count": goal.count}, "planner": name}
        return _failed(args, "internal_error" if internal else "no_plan", exc.message, **where)
    finally:  # whatever ends the plan (an error, Ctrl-C), the live line is wiped and its thread stopped
        _clear(progress)
    if result.stats.backend_down:
        warn(f"the LLM backend failed ({result.stats.backend_down}); the symbolic decomposer answered in its place")
    # the planner validated its plan against the same rules, goal and start (every result carries it): read
    # once, not validated again here -- an unchecked planner's invalid plan is shown, with exit 1
    if not result.validation.valid:
        write_output(args.output, render(result, 1))
        return 1
    write_output(args.output, render(result))  # printed first: a memory that cannot take it costs nothing
    if store is not None and args.record:
        from ..memory.recorder import record
        from ..memory.store import MemoryFileError

        try:
            record(store, f"plan/{goal.item}", result, planner.memory)  # no executions: `memory build` adds those
        except MemoryFileError as exc:  # locked past the busy timeout, a full disk: the plan is shown above
            unrecorded = str(exc)
    return fail(f"{unrecorded}; the plan was not recorded") if unrecorded else 0


def _open_memory(args: argparse.Namespace):
    """(the ``--memory`` store or None, why the plan will not be recorded or None).

    A memory another process holds locked does not cost the plan: it is made
    without the memory and printed; with ``--record`` the one line after it says
    it was not recorded (exit 2), without it a warning says the memory was not
    used. Any other unusable memory file is refused (exit 2) before planning.
    """
    options = read_model(args, MemoryOptions)
    if options.path is None:
        return None, None  # no memory: its modules stay unloaded
    from ..memory import MemoryLockedError

    try:
        return options.open(), None
    except MemoryLockedError as exc:
        if args.record:  # the one line comes after the plan
            return None, f"{exc}; the plan was made without the memory"
        warn(f"{exc}; planning without the memory")
        return None, None


def _progress(spec, args: argparse.Namespace):
    """The live line a model planner's calls draw (None for a planner that asks no model: ``plan --planner
    symbolic`` loads no progress line)."""
    if not spec.asks_model:
        return None
    from .progress_line import TerminalProgress

    return TerminalProgress(quiet=args.quiet or bool(spec.llm.llm_stand_in))  # a stand-in's plan is too quick


def _clear(progress) -> None:
    if progress is not None:
        progress.clear()


def _failed(args: argparse.Namespace, status: str, message: str, **fields) -> int:
    """No plan: one line on stderr and exit 1; under ``--format json`` a result too (why, and the exit status)."""
    if args.format in ("json", "actions"):
        write_output(args.output, json.dumps(outcome(status, message, 1, **fields), indent=2) + "\n")
    print(f"barsym: {'internal error: ' if status == 'internal_error' else ''}{message}", file=sys.stderr)
    return 1
