"""The one plan model every part of barsym speaks: Step, Plan, Goal (and the goal a plan file is checked against).

Names are kept as written (``logs``, ``wooden_slab``); the knowledge base
resolves them when a plan is simulated, so a plan read from a file writes back
unchanged. BAR's JSON Lines layout is one reader/writer of this model
(:mod:`barsym.bar_io`), not the internal form.

The types are :class:`~barsym.plain_models.PlainModel` records, not pydantic models (until issue 54 they
were): the same fields, checks, messages and JSON, without loading pydantic, which alone took about a third
of a symbolic ``barsym plan``'s start.
"""

from __future__ import annotations

from enum import Enum

from . import steps as notation
from .plain_models import Field, PlainModel
from .steps import MAX_COUNT  # the step notation's bound (barsym.steps)

__all__ = ["MAX_COUNT", "Goal", "GoalOptions", "Plan", "Step", "StepType"]


class StepType(str, Enum):
    MINE = "mine"
    CRAFT = "craft"
    SMELT = "smelt"
    KILL = "kill"
    DIG_DOWN = "dig_down"
    CLIMB_UP = "climb_up"  # barsym's: back up one layer (BAR's agent never does; a player does)

    @property
    def moves(self) -> bool:
        """A step that changes the layer and names no item."""
        return self in (StepType.DIG_DOWN, StepType.CLIMB_UP)


class Step(PlainModel):
    """One executable action.

    ``count`` is the number of items the plan needs from this step (BAR's
    ``obj_num``), not the number of crafting operations: ``craft stick 7``
    crafts twice and yields 8. ``tool`` is the tool used to mine or dig.
    ``recipe`` pins which of the item's recipes a craft or smelt uses (its
    0-based index in the knowledge base, :meth:`barsym.kb.Rules.recipe_id`);
    None leaves the choice to the rule book (:meth:`barsym.kb.Rules.fitting_recipe`),
    as every BAR plan does. A pinned recipe matters where the first that the
    inventory pays for would use up what a later step needs (an iron block
    broken into ingots that an anvil needs whole).
    """

    __slots__ = ("type", "item", "count", "tool", "recipe")
    model_fields = {
        "type": Field(StepType),
        "item": Field(str | None, None),
        "count": Field(int | None, None, ge=1, le=MAX_COUNT),
        "tool": Field(str | None, None),
        "recipe": Field(int | None, None, ge=0),
    }
    type: StepType
    item: str | None
    count: int | None
    tool: str | None
    recipe: int | None

    def _check(self) -> None:
        if self.type.moves:
            if self.item is not None:
                raise ValueError(f"a {self.type.value} step names no item")
            if self.count not in (None, 1):
                raise ValueError(f"a {self.type.value} step has no count (null)")
        else:
            if not self.item or not self.item.strip():
                raise ValueError(f"a {self.type.value} step needs an item name")
            if self.count is None:
                raise ValueError(f"a {self.type.value} step needs a count from 1 to {MAX_COUNT}")
        if self.recipe is not None and self.type not in (StepType.CRAFT, StepType.SMELT):
            raise ValueError(f"a {self.type.value} step has no recipe (only craft and smelt steps name one)")

    def _dumped(self, data: dict) -> dict:
        """A step that pins no recipe is written as before the field existed (no ``"recipe": null``)."""
        if data.get("recipe") is None:
            data.pop("recipe", None)
        return data

    def __str__(self) -> str:
        """BAR's step notation (:func:`barsym.steps.render`)."""
        return notation.render(self.type.value, self.item, self.count, self.tool)

    def same_action(self, other: "Step") -> bool:
        """Same kind of step on the same item with the same tool and recipe (count aside)."""
        return (self.type, self.item, self.tool, self.recipe) == (other.type, other.item, other.tool, other.recipe)


class Goal(PlainModel):
    __slots__ = ("item", "count")
    model_fields = {
        "item": Field(str),
        "count": Field(int, 1, ge=1, le=MAX_COUNT, description="how many", json_schema_extra={"metavar": "N"}),
    }
    item: str
    count: int

    def __str__(self) -> str:
        return f"obtain {self.count} {notation.clip(self.item)}"


class GoalOptions(PlainModel):
    """``--goal ITEM [--goal-count N]``: the goal a plan read from a file must reach.

    Without ``goal`` each plan's goal is what its last step asks for (:meth:`Plan.default_goal`);
    ``goal_count`` alone keeps that item and sets how many (``--goal-count 2`` on a plan ending
    ``craft 1 bucket``: 2 buckets). With several files that is each plan's own last item, and the
    verdict line of each names the goal it was held to.
    """

    __slots__ = ("goal", "goal_count")
    frozen = False
    model_fields = {
        "goal": Field(
            str | None,
            None,
            description="item the plan must end with (default: the last step's item)",
            json_schema_extra={"metavar": "ITEM"},
        ),
        "goal_count": Field(
            int | None,
            None,
            ge=1,
            le=MAX_COUNT,
            description="how many of the goal item (default: 1 of --goal, else the last step's count); "
            "without --goal, of the last step's item",
            json_schema_extra={"metavar": "N"},
        ),
    }
    goal: str | None
    goal_count: int | None

    def for_plan(self, plan: Plan) -> Goal | None:
        """The goal ``plan`` is held to; None: no goal at all (a plan that makes nothing)."""
        if self.goal is not None:
            return Goal(item=self.goal, count=self.goal_count or 1)
        default = plan.default_goal()
        if default is None or self.goal_count is None:
            return default
        return Goal(item=default.item, count=self.goal_count)


class Plan(PlainModel):
    __slots__ = ("steps", "source")
    model_fields = {"steps": Field(tuple[Step, ...]), "source": Field(str | None, None)}
    steps: tuple[Step, ...]
    source: str | None

    def __len__(self) -> int:
        return len(self.steps)

    def __iter__(self):
        return iter(self.steps)

    def default_goal(self) -> Goal | None:
        """What the last step that makes something asks for, as BAR's tasks do: the plan ends by making the goal.

        The whole count, not one of it: a plan that ends ``mine 70 cobblestone`` is after 70, and
        taking it for 1 called 69 of them waste (every BAR expert plan ends with a count of 1 anyway)."""
        for step in reversed(self.steps):
            if step.item is not None:
                return Goal(item=step.item, count=step.count or 1)
        return None
