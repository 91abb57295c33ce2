"""The plan files every plan-reading command takes: ``FILE...`` and ``--goal ITEM [--goal-count N]``.

``validate``, ``score`` and ``repair`` read the same arguments the same way
(``execute`` the files alone), so a plan file, standard input and the goal
mean one thing everywhere.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator

from ..bar_io import PlanFormatError, read_plan_or_stdin
from ..kb import KnowledgeBase, Rules, UnknownItemError
from ..model import Goal, GoalOptions, Plan
from ..sim import State
from .common import UsageError, kb_from_args
from .options import add_model, read_model
from .state_options import rules_from_args, start_from_args


def add_plan_file_arguments(p, goal: bool = True, files: str = "+") -> None:
    p.add_argument(
        "files",
        nargs=files,
        metavar="FILE",
        help="plan files in BAR JSON Lines or barsym's notation (`mine 4 logs` lines, "
        "or what `barsym plan` prints); '-' reads stdin",
    )
    if goal:
        add_model(p, GoalOptions)


def goal_from_args(kb: KnowledgeBase, args) -> Callable[[Plan], Goal | None]:
    """The goal each plan is held to, from ``--goal`` and ``--goal-count`` (:meth:`~barsym.model.GoalOptions.for_plan`:
    without ``--goal``, the plan's last step's item); an unknown ``--goal`` item is refused here, before any plan."""
    chosen = read_model(args, GoalOptions)
    if chosen.goal is not None:
        try:
            kb.resolve(chosen.goal)
        except UnknownItemError as exc:
            raise UsageError(f"--goal: {exc}") from None
    return chosen.for_plan


def plan_inputs(args) -> tuple[KnowledgeBase, Callable[[Plan], Goal | None], State, Rules]:
    """What every plan-reading command starts from: the knowledge base, the goal of a plan (``--goal``,
    ``--goal-count``), the start state, the rules."""
    kb = kb_from_args(args)
    return kb, goal_from_args(kb, args), start_from_args(kb, args), rules_from_args(kb, args)


class PlanFiles:
    """``(name, plan)`` for every file that reads as a plan, in order (``-`` is ``<stdin>``).

    A file that does not is reported as one ``barsym: error:`` line (unless
    ``show_errors`` is off, for JSON output), named in :attr:`unusable` (the
    command exits 2) and handed to ``on_unusable(name, message)``, so that the
    command can keep its place in the output.
    """

    def __init__(
        self, paths: Iterable[str], on_unusable: Callable[[str, str], object] | None = None, show_errors: bool = True
    ):
        self.paths, self.on_unusable, self.show_errors = list(paths), on_unusable, show_errors
        self.unusable: list[str] = []

    def __iter__(self) -> Iterator[tuple[str, Plan]]:
        for path in self.paths:
            name = "<stdin>" if path == "-" else path
            try:
                plan = read_plan_or_stdin(path)
            except PlanFormatError as exc:
                if self.show_errors:
                    print(f"barsym: error: {exc}", file=sys.stderr)
                self.unusable.append(name)
                if self.on_unusable is not None:
                    self.on_unusable(name, str(exc))
                continue
            yield name, plan
