"""Tool wear over a whole plan: which tool wears out before the plan ends.

The deterministic world ignores durability on purpose: BAR's expert plans dig
to the iron layer and mine with one wooden pickaxe, and a checker that refused
them would refuse BAR's own answers. The stochastic world counts every use, so
such a plan fails there (``tool_broke``) in every run. This module bridges the
two: it plays the expected wear of each step (the deterministic world's
nominal costs: the blocks a dig down breaks, the blocks mining ``count`` units
takes on average, 1 use per block, 2 for a sword, 0 for a block broken at
once) against the tools at hand, each copy lasting its ``maxDurability``.

The validator reports a :class:`WearOut` as a warning, or, under a rule profile
with ``durability`` (``--rules durable``), as an error; the repairer then tops
up the tool before the step where it wears out (:mod:`barsym.consistency.durability`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..kb import Rules
from ..model import StepType
from .costs import StepCosts
from .rollout import Rollout

CODE = "tool_wears_out"


@dataclass(frozen=True)
class WearOut:
    """At plan step ``step`` (1-based) the copies of ``tool`` held are used up: ``uses`` needed so far, ``life``."""

    step: int
    tool: str
    uses: int
    life: int
    per_copy: int

    @property
    def copies_short(self) -> int:
        """How many more copies of ``tool`` the plan needs by this step."""
        return math.ceil((self.uses - self.life) / self.per_copy)

    def message(self) -> str:
        return (
            f"{self.tool} wears out here: the plan uses it about {self.uses} times by this step, the "
            f"{'copy' if self.life == self.per_copy else 'copies'} at hand last {self.life} "
            f"({self.per_copy} each); make {self.copies_short} more before this step, or the stochastic "
            f"world ends the run with tool_broke"
        )


def step_uses(
    rules: Rules, costs: StepCosts, kind: StepType, item: str | None, count: int, layer: int, tool: str
) -> int:
    """The expected uses one step costs ``tool`` (the deterministic world's nominal wear)."""
    if kind is StepType.DIG_DOWN:
        return sum(n * costs.block(block, tool)[1] for block, n in costs.dig_runs(layer))
    if kind is StepType.MINE and item is not None:
        found = costs.model.resource(item, layer)
        blocks = math.ceil(count / found.mean_yield)
        return blocks * costs.gather_unit(rules.action("mine", item, count), tool)[1]
    return 0


def _wear(rules: Rules, played: Rollout):
    """(outcome, tool, uses so far, one copy's life) for every step of ``played`` that wears a tool."""
    model = rules.kb.world
    if model is None:
        return
    costs = StepCosts(rules, model)
    uses: dict[str, int] = {}
    for outcome in played.outcomes:
        move = outcome.transition
        if move is None:
            continue
        tool = rules.worn_tool(move.used)
        life = rules.durability(tool) if tool else None
        if tool is None or not life:
            continue
        kind = outcome.step.type
        if kind is StepType.DIG_DOWN and move.state.layer == outcome.before.layer:
            continue  # already on the deepest layer: nothing is dug
        spent = step_uses(rules, costs, kind, move.item, outcome.step.count or 1, outcome.before.layer, tool)
        uses[tool] = uses.get(tool, 0) + spent
        yield outcome, tool, uses[tool], life


def wear_outs(rules: Rules, played: Rollout) -> list[WearOut]:
    """Every step where a tool is used beyond what the copies held last (the first per tool and copy count)."""
    found: list[WearOut] = []
    for outcome, tool, used, life in _wear(rules, played):
        held = outcome.before.count(tool)
        if used > held * life and not any(w.tool == tool and w.life == held * life for w in found):
            found.append(WearOut(outcome.index, tool, used, held * life, life))
    return found


def copies_worn(rules: Rules, played: Rollout) -> dict[str, int]:
    """How many copies of each tool the plan's expected wear uses up (at least 1 for a tool it uses at all).

    The validator's waste check counts these as used: a spare pickaxe the plan needs because the first one
    wears out is not waste (before, the same plan drew "2 wooden_pickaxe requested, only 1 used" from one
    check and "make 1 more" from the other when it had only one)."""
    worn: dict[str, int] = {}
    for _, tool, used, life in _wear(rules, played):
        worn[tool] = max(worn.get(tool, 1), math.ceil(used / life))
    return worn
