"""The seam between BAR's planning loop and whoever splits a goal.

BAR's loop only ever asks one question: "to obtain this goal, which single step
do I take, and what must I obtain first?". Everything the planner knows about a
decomposer is the :class:`Decomposer` protocol below, so the symbolic
decomposer (the crafting graph), the LLM decomposer and a memory lookup are
interchangeable and the planner cannot tell them apart.

Depth is a goal like any item: ``layer:2`` reads "be on layer 2", and a
decomposer answers it with a ``dig down`` step. Using the same goal type keeps
the tree uniform (every node is goal -> step + subgoals) and lets the planner
treat "already dug to that layer" like "already have a crafting table".

:class:`PlanContext` is what a decomposer may read about the plan so far: how
many units earlier steps make versus request (a craft runs whole batches, so
``craft stick 2`` leaves two spare sticks for the next goal that needs sticks),
how much fuel is budgeted for each smelted item, which tools and stations are
planned (they are used, not consumed), and which layers are reached, and the
path of goals above the current one (an answer that needs one of them again
would loop: the LLM decomposer refuses such answers).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol, runtime_checkable

from ..kb import KnowledgeBase
from ..model import Goal, Step, StepType
from ..sim import State

LAYER_PREFIX = "layer:"


def layer_goal(layer: int) -> Goal:
    """The goal "be on ``layer``" (answered by a dig down)."""
    return Goal(item=f"{LAYER_PREFIX}{layer}", count=1)


def goal_layer(goal: Goal) -> int | None:
    """The layer a ``layer:N`` goal asks for, or None for an item goal."""
    if not goal.item.startswith(LAYER_PREFIX):
        return None
    try:
        return int(goal.item[len(LAYER_PREFIX) :])
    except ValueError:
        return None


class ErrorKind(str, Enum):
    """Why no plan was made. The first four are answers about the goal, the rest are failures."""

    UNREACHABLE = "unreachable"  # nothing in the overworld makes it
    NO_RETURN = "no_return"  # it needs climbing back up, which BAR's agent never does
    IMPOSSIBLE = "impossible"  # the start inventory cannot make it under rules without gathering
    TOO_LARGE = "too_large"  # a count beyond the inventory bound
    DECOMPOSITION = "decomposition"  # a decomposer gave an unusable answer or did not terminate
    NO_ORDER = "no_order"  # the answers' needs form a cycle
    INVALID = "invalid"  # the finished plan fails the validator: a bug in barsym or in a decomposer

    @property
    def about_goal(self) -> bool:
        """True when the error is an honest answer ("this cannot be had"), not a planner failure."""
        return self in (ErrorKind.UNREACHABLE, ErrorKind.NO_RETURN, ErrorKind.IMPOSSIBLE, ErrorKind.TOO_LARGE)


class PlanningError(Exception):
    """No plan could be made. ``kind`` (an :class:`ErrorKind`, equal to its string) says why."""

    def __init__(self, kind: ErrorKind | str, message: str):
        super().__init__(message)
        self.kind = ErrorKind(kind)
        self.message = message


class Unanswered(Exception):
    """A decomposer has no usable step for a goal and no way to get one.

    Only planners that keep invalid plans (``llm-only``) accept this: the
    branch stays open, the plan misses those steps, and the validator says
    where it breaks. Every other planner turns it into a PlanningError.
    """


@dataclass(frozen=True)
class Decomposition:
    """One goal split into the step that makes it and the goals that step needs.

    ``yields`` is how many units the step really makes for this goal when it
    differs from ``step.count``: crafting runs whole batches, and ``0`` means
    an earlier batch's spare units cover the goal (no subgoals needed).
    ``fuel_credit`` is burn time (in items) already budgeted for the same
    smelted item by earlier goals, which this step may use up. Both exist so the
    verifier can check a decomposition that relied on the plan so far.
    """

    step: Step
    subgoals: tuple[Goal, ...] = ()
    provenance: str = "unknown"
    yields: int | None = None
    fuel_credit: float = 0.0
    note: str = ""
    #: the verifier passed exactly this decomposition where it was made (an LLM decomposer checks each answer
    #: to give the model feedback), so the loop does not check it again: each answer is verified once
    verified: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.subgoals, tuple):
            object.__setattr__(self, "subgoals", tuple(self.subgoals))

    @property
    def made(self) -> int:
        """Units the step makes for this goal (``yields`` or the step's count)."""
        if self.yields is not None:
            return self.yields
        return self.step.count or 0


@runtime_checkable
class Decomposer(Protocol):
    """Anything that can split a goal. ``name`` appears in provenance and reports."""

    name: str

    def decompose(self, goal: Goal, context: "PlanContext") -> Decomposition: ...


@dataclass
class PlanContext:
    """What is already planned, as the planner records it after each decomposition.

    Counts are keyed by canonical item name. The planner owns the updates
    (:meth:`record`); decomposers only read.
    """

    kb: KnowledgeBase
    root: Goal
    produced: Counter = field(default_factory=Counter)  # units made by planned steps
    requested: Counter = field(default_factory=Counter)  # units planned steps were asked for
    kept: Counter = field(default_factory=Counter)  # units planned as tools/stations (not consumed)
    smelted: Counter = field(default_factory=Counter)  # smelted item -> units smelted
    burn: dict[str, float] = field(default_factory=lambda: defaultdict(float))  # smelted item -> burn budgeted
    layers: set[int] = field(default_factory=set)  # layers reached by planned dig downs
    pending: Counter = field(default_factory=Counter)  # goals waiting in the queue, by item
    path: tuple[Goal, ...] = ()  # goals above the one being decomposed, root first (set by the planner)
    start: State = field(default_factory=State)  # what the agent holds, and where it is, before the plan
    from_start: Counter = field(default_factory=Counter)  # start units already given to goals
    use_held: bool = True  # held materials cover goals (held tools and stations always do)

    def held_tool(self, rules, kind: str, min_tier: int) -> str | None:
        """A tool in the start inventory that can serve (the lowest tier that can), or None."""
        return rules.best_held_tool(kind, min_tier, self.start.count) if self.start.inventory else None

    def held_counts(self) -> Callable[[str], int] | None:
        """How many of an item the start holds, or None for an empty start: what a held tool is chosen by."""
        return self.start.count if self.start.inventory else None

    def surplus(self, item: str) -> int:
        """Spare units of ``item`` that planned batches make beyond what was asked."""
        return max(0, self.produced[item] - self.requested[item])

    def fuel_left(self, item: str) -> float:
        """Burn time budgeted for smelting ``item`` that planned smelts do not use yet."""
        return max(0.0, self.burn[item] - self.smelted[item])

    def is_planned(self, item: str) -> bool:
        return self.produced[item] > 0

    def reached(self, layer: int) -> bool:
        return layer <= self.start.layer or layer in self.layers

    def record(
        self,
        item: str | None,
        decomposition: Decomposition,
        roles: Sequence[str],
        kept_role: bool = False,
        layer: int | None = None,
    ) -> None:
        """Account for one accepted decomposition (called by the planner only).

        ``item`` is the canonical item the step makes (None for a dig down, which
        makes ``layer`` reachable instead); ``roles`` are the subgoals' roles as
        :func:`barsym.planner.verify.subgoal_roles` reports them; ``kept_role``
        says the goal asked for a tool or station, which is used, not consumed.
        """
        step = decomposition.step
        if item is None:
            if layer is not None:
                self.layers.add(layer)
            return
        self.requested[item] += step.count or 0
        self.produced[item] += decomposition.made
        if kept_role:
            self.kept[item] += decomposition.made
        if step.type is StepType.SMELT:
            self.smelted[item] += step.count or 0
            for goal, role in zip(decomposition.subgoals, roles):
                if role == "fuel":
                    self.burn[item] += goal.count * self.kb.fuel_value(goal.item)
