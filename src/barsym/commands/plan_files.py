"""The plan files every plan-reading command takes: ``FILE...`` and ``--goal ITEM [--goal-count N]``.

``validate``, ``score`` and ``repair`` read the same arguments the same way
(``execute`` the files alone), so a plan file, standard input and the goal
mean one thing everywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator

from ..bar_io import PlanFormatError, decode_text, parse_plan, read_plan, read_stream
from ..kb import KnowledgeBase, UnknownItemError
from ..model import MAX_COUNT, Goal, Plan
from .common import UsageError, number_option


def add_plan_file_arguments(p, goal: bool = True) -> None:
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="plan files in BAR JSON Lines or barsym's notation (`mine 4 logs` lines, "
        "or what `barsym plan` prints); '-' reads stdin",
    )
    if goal:
        p.add_argument("--goal", metavar="ITEM", help="item the plan must end with (default: the last step's item)")
        p.add_argument("--goal-count", metavar="N", help="how many of the --goal item (default 1)")


def goal_from_args(kb: KnowledgeBase, args) -> Goal | None:
    """The --goal option as a Goal; None lets each plan default to its last step's item (one of it).

    --goal-count alone is refused rather than applied to those defaults: with
    several files it would quietly mean a different item for each.
    """
    count = number_option(args.goal_count, "--goal-count", int, 1, MAX_COUNT) or 1
    if args.goal is None:
        if args.goal_count is not None:
            raise UsageError(
                f"--goal-count {count} needs --goal ITEM too, e.g. --goal diamond --goal-count {count} "
                "(without --goal each plan must end with 1 of its last step's item)"
            )
        return None
    try:
        kb.resolve(args.goal)
    except UnknownItemError as exc:
        raise UsageError(f"--goal: {exc}") from None
    return Goal(item=args.goal, count=count)


def load_plan_file(path: str) -> Plan:
    """A plan file named on the command line; '-' is standard input."""
    if path == "-":
        try:
            data = read_stream(sys.stdin.buffer, "<stdin>")
        except OSError as exc:
            raise PlanFormatError("<stdin>", exc.strerror) from None
        return parse_plan(decode_text(data, "<stdin>"), "<stdin>")
    return read_plan(path)


def each_plan(
    paths: Iterable[str], unusable: Callable[[str, str], None] | None = None, show_errors: bool = True
) -> Iterator[tuple[str, Plan]]:
    """``(name, plan)`` for every file that reads as a plan, in order (``-`` is ``<stdin>``).

    A file that does not is reported as one ``barsym: error:`` line (unless
    ``show_errors`` is off, for JSON output) and handed to ``unusable(name,
    message)``, so the command can count it and keep its place in the output.
    """
    for path in paths:
        name = "<stdin>" if path == "-" else path
        try:
            plan = load_plan_file(path)
        except PlanFormatError as exc:
            if show_errors:
                print(f"barsym: error: {exc}", file=sys.stderr)
            if unusable is not None:
                unusable(name, str(exc))
            continue
        yield name, plan
