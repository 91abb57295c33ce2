"""Why a step cannot run: a code a program can branch on, and a sentence for people."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum


class Code(str, Enum):
    UNKNOWN_ITEM = "unknown_item"
    NOT_OBTAINABLE = "not_obtainable"  # the step's action cannot make that item
    MISSING_INGREDIENT = "missing_ingredient"
    MISSING_TOOL = "missing_tool"
    TOOL_TIER_TOO_LOW = "tool_tier_too_low"
    MISSING_STATION = "missing_station"
    WRONG_LAYER = "wrong_layer"
    INSUFFICIENT_FUEL = "insufficient_fuel"
    GOAL_NOT_REACHED = "goal_not_reached"
    NOT_ALLOWED = "not_allowed"  # the rule profile forbids the action (mining under the crafting rules)


@dataclass(frozen=True)
class Failure:
    code: Code
    message: str
    item: str | None = None
    needed: float | int | None = None
    had: float | int | None = None
    suggestions: tuple[str, ...] = field(default=())
    accepts: tuple[str, ...] = field(default=(), compare=False)  # items that would fill a missing slot

    def to_dict(self) -> dict:
        out = asdict(self)
        out["code"] = self.code.value
        out["suggestions"] = list(self.suggestions)
        out.pop("accepts", None)
        return {k: v for k, v in out.items() if v not in (None, [])}


class StepFailed(Exception):
    """Raised by ``apply`` when the step is not applicable in the given state."""

    def __init__(self, failure: Failure):
        super().__init__(failure.message)
        self.failure = failure
