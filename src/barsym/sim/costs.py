"""What steps cost in ticks: the pieces both worlds share, and the deterministic world's nominal costs.

Game facts come from the rule book (break ticks from hardness, dig speed and
harvestability; cooking times; wear); the model's parameters come from
``world.json`` (:class:`~barsym.kb.world_params.WorldModel`). The stochastic
world samples the same quantities whose expectations are the nominal costs
here, so a deterministic run's ticks are what a stochastic run takes on
average when nothing goes wrong.
"""

from __future__ import annotations

import math

from ..kb import Action, Rules
from ..kb.world_params import ResourceModel, WorldModel
from ..model import Step, StepType
from .simulator import Transition
from .state import State


class StepCosts:
    def __init__(self, rules: Rules, model: WorldModel):
        if model is None:
            raise ValueError("the knowledge base has no world model (data/recipes/world.json)")
        self.rules = rules
        self.kb = rules.kb
        self.model = model
        self._block: dict[tuple[str, str | None], tuple[int, int]] = {}
        self._dig: dict[int, tuple[tuple[str, int], ...]] = {}
        self._craft: dict[tuple[str, int, State], int] = {}

    # ---- blocks ------------------------------------------------------------------------
    def block(self, block: str, tool: str | None) -> tuple[int, int]:
        """(ticks, uses) of one block: its break time with ``tool`` plus the game's delay, and the wear on ``tool``."""
        key = (block, tool)
        cost = self._block.get(key)
        if cost is None:
            ticks = self.rules.break_ticks(block, tool)
            cost = self._block[key] = (ticks + self.model.break_delay if ticks else 0, self.rules.wear(tool, block))
        return cost

    def per_block(self, block: str, tool: str | None) -> int:
        return self.block(block, tool)[0]

    def gather_unit(self, gather: Action, tool: str | None) -> tuple[int, int]:
        """(ticks, uses) of one unit of a mine or kill action: a block broken, or one use on a block or mob."""
        if self.rules.breaks_block(gather):
            return self.block(gather.origin or "", tool)
        return self.model.use_ticks, self.rules.wear(tool, None)

    def dig_runs(self, layer: int) -> tuple[tuple[str, int], ...]:
        """The blocks a dig down from ``layer`` breaks, as runs in order: soil under the surface, then rock."""
        runs = self._dig.get(layer)
        if runs is None:
            layers, m = self.model.layers, self.model
            top = layers[0].y
            out: list[list] = []
            for y in range(layers[layer].y - 1, layers[layer + 1].y - 1, -1):
                block = m.soil_block if top - y <= m.soil_levels else m.rock_block
                if out and out[-1][0] == block:
                    out[-1][1] += m.dig_blocks_per_level
                else:
                    out.append([block, m.dig_blocks_per_level])
            runs = self._dig[layer] = tuple((block, n) for block, n in out)
        return runs

    def dig_levels(self, layer: int) -> int:
        """Levels of the staircase between ``layer`` and the one below it."""
        return self.model.layers[layer].y - self.model.layers[layer + 1].y

    def climb_ticks(self, layer: int) -> int:
        """Walking the staircase from ``layer`` back up to the one above (nothing to break)."""
        return self.dig_levels(layer - 1) * self.model.dig_ticks_per_level if layer > 0 else 0

    def resource(self, item: str, layer: int) -> tuple[ResourceModel, float]:
        """The resource's search model and its mean search time (ticks per cluster) on ``layer``."""
        found = self.model.resource(item, layer)
        return found, found.mean_search(self.model.layers[layer].scan_rate)

    # ---- steps without chance -------------------------------------------------------------
    def craft_ticks(self, item: str, count: int, before: State) -> int:
        """Opening the grid, then a click per batch of the recipe the rule book picks (remembered per state)."""
        key = (item, count, before)
        ticks = self._craft.get(key)
        if ticks is None:
            fit = self.rules.fitting_recipe(item, count, before.counts)
            batches = fit.batches if fit is not None else 1
            ticks = self.model.craft_step_ticks + self.model.craft_batch_ticks * batches
            if len(self._craft) >= 50_000:
                self._craft.clear()
            self._craft[key] = ticks
        return ticks

    def smelt_ticks(self, item: str, count: int, before: State) -> int:
        return self.model.smelt_step_ticks + self.rules.smelt_ticks(item, count, before.counts)

    # ---- nominal (expected) costs -----------------------------------------------------------
    def nominal(self, step: Step, before: State, move: Transition) -> int:
        """Expected ticks of ``step``, which the simulator has found applicable (``move``)."""
        kind = step.type
        if kind is StepType.CRAFT:
            return self.craft_ticks(move.item, step.count, before)
        if kind is StepType.SMELT:
            return self.smelt_ticks(move.item, step.count, before)
        if kind is StepType.CLIMB_UP:
            return self.climb_ticks(before.layer) if move.state.layer != before.layer else 0
        tool = self.rules.worn_tool(move.used)
        if kind is StepType.DIG_DOWN:
            if move.state.layer == before.layer:
                return 0
            return (
                sum(self.per_block(b, tool) * n for b, n in self.dig_runs(before.layer))
                + self.dig_levels(before.layer) * self.model.dig_ticks_per_level
            )
        gather = self.rules.action(kind.value, move.item, step.count)
        if kind is StepType.KILL:
            mob = self.model.mobs[gather.origin or ""]
            low, high = mob.drops.get(move.item, (1, 1))
            kills = math.ceil(step.count / ((low + high) / 2))
            hunts = kills / (1 - mob.escape)
            return round(
                hunts * (mob.encounter_ticks + self.model.chase_ticks) + kills * mob.health * self.model.hit_ticks
            )
        found, search = self.resource(move.item, before.layer)
        blocks = math.ceil(step.count / found.mean_yield)
        return round(math.ceil(blocks / found.cluster) * search + blocks * self.gather_unit(gather, tool)[0])
