"""What the forward walk (:mod:`.forward`) works with: windows, candidate steps, the walk's state, its result.

Kept apart from the walk itself so that a chooser (the symbolic one in
:mod:`.forward`, the model's in :mod:`barsym.reasoning.scoring.forward_repairer`)
reads only these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from ..model import Goal, Step
from ..sim import State
from .anchors import AnchorPair

KEPT = "kept"


class Origin(str, Enum):
    SKIP = "leave-out"
    WIDEN = "widen"
    KEEP = "keep"
    RETRO = "widen-earlier"
    MOVE = "move"
    PLAN = "plan"


@dataclass(frozen=True)
class Window:
    """One window to regenerate, in the current plan's numbering."""

    pair: AnchorPair
    before: State  # the simulated state before the start anchor
    original: tuple[Step, ...]  # steps start .. end-1
    target: tuple[Step, ...]  # kept steps from the end anchor up to the next window
    goal: Goal | None  # the goal, when the window's target reaches the end of the plan
    task: Goal  # the plan's goal
    plan: tuple[Step, ...] = ()  # the whole current plan, for prompts
    after: tuple[Step, ...] = ()  # the plan's steps after the target (later windows and their kept runs)


@dataclass(frozen=True)
class Candidate:
    step: Step
    origin: Origin
    index: int | None = None  # position in the remaining original steps (keep, move)
    why: str = ""
    cost: float = 0.0  # steps still needed for the blocked step's need after taking this one (plan: its plan's length)
    redo: tuple[Step, ...] = ()  # widen-earlier: the window's steps so far, with the widened ones
    need: str | None = None  # plan: the item the step is for

    @property
    def text(self) -> str:
        """How the option is written for the model (unique per option)."""
        if self.origin is Origin.RETRO:
            return f"make more earlier: {self.step}"
        return f"leave out: {self.step}" if self.origin is Origin.SKIP else str(self.step)


@dataclass(frozen=True)
class Taken:
    """A step the walk took: its provenance label and, for a kept step, the original index it keeps."""

    step: Step
    label: str
    kept_from: int | None = None


@dataclass
class WalkState:
    """Where the walk stands: what the chooser may read.

    ``left`` are the original indices of the window's steps not used yet, in
    order (``remaining`` is those steps); ``done`` the steps taken, each with
    where it came from (``taken`` is the steps). One record per step, so the
    step, its label and its origin cannot drift apart.
    """

    state: State
    original: tuple[Step, ...] = ()
    left: list[int] = field(default_factory=list)
    done: list[Taken] = field(default_factory=list)
    pending: list[Step] = field(default_factory=list)  # the rest of the plan being followed for a need
    pending_for: str | None = None  # ... and the need's item

    @property
    def remaining(self) -> list[Step]:
        return [self.original[i] for i in self.left]

    @property
    def taken(self) -> list[Step]:
        return [t.step for t in self.done]

    def use(self, position: int) -> tuple[Step, int]:
        """Take the remaining step at ``position`` out of the plan: (the step, its original index)."""
        index = self.left.pop(position)
        return self.original[index], index


class Chooser(Protocol):
    label: str  # provenance of the steps it adds: repaired-symbolic, repaired-llm

    def choose(self, window: Window, walk: WalkState, candidates: Sequence[Candidate]) -> int | None:
        """Index of the candidate to take; None gives up on the window."""
        ...


@dataclass
class WindowRepair:
    window: Window
    steps: tuple[Step, ...]
    provenance: tuple[str, ...]
    kept_from: tuple[int | None, ...]  # per new step, the index of the original step it keeps (None: new)
    done: bool  # the target runs from the end of the new steps
    repairer: str
    dropped: tuple[Step, ...] = ()
    note: str = ""
    climbed_for: tuple[str, ...] = ()  # items the walk climbed back up for (BAR's agent never does)
