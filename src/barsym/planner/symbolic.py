"""The symbolic decomposer: split a goal by reading the crafting graph.

It is the reference answer for every other decomposer, so its choices are
deterministic and written down here:

- **Which way to make an item**: ``CraftGraph.best_producer``, the action with
  the lowest graph cost (raw resources and steps, with tools, stations and
  layers counted once); ties break by name. Costs are a fixpoint that settles on
  non-cyclic ways, so following the choice never loops (iron_ingot is smelted,
  not crafted back from nuggets).
- **Which item fills an ingredient slot**: the generic family name when the slot
  accepts it (``planks``, ``logs``, as BAR writes), then any item listed in
  ``prefer`` (empty by default), else the cheapest reachable member
  (``cobblestone`` for stone crafting materials, ``coal`` for coals: mining one
  coal is far cheaper than a furnace and a smelt, although BAR's torch expert
  plan smelts charcoal; ``prefer=("charcoal",)`` reproduces that).
- **Batches**: a craft makes whole batches; spare units are left in the context
  and the next goal for the same item uses them first (8 sticks = 2 crafts of
  2 planks, whoever asked for them).
- **Fuel**: budgeted as planks (BAR's convention), joint per smelted item:
  smelting 3 then 4 iron ingots budgets ceil(7 / 1.5) = 5 planks.
- **Tools**: the lowest tier that can do the job (cobblestone with a wooden
  pickaxe even when an iron one is planned later), as the expert plans do.
- **Depth**: mining below the surface asks for ``layer:N``; layer N is reached
  by one dig down from layer N-1 with the pickaxe of the tier that layer's ores
  need (wooden -> stone layer, stone -> iron layer, iron -> deep layer), capped
  at the highest tier the whole plan needs, so a plan that only needs slime
  balls digs with a wooden pickaxe instead of making an iron one.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..graph import CraftGraph, item_node
from ..kb import KnowledgeBase, Rules, rules_for
from ..model import MAX_COUNT, Goal, Step, StepType
from ..plain_models import ModelError
from .decomposer import Decomposition, PlanContext, PlanningError, goal_layer, layer_goal

PROVENANCE = "symbolic"


class SymbolicDecomposer:
    name = PROVENANCE

    def __init__(
        self,
        kb: KnowledgeBase,
        graph: CraftGraph | None = None,
        fuel: str | None = None,
        prefer: tuple[str, ...] = (),
        rules: Rules | str | None = None,
    ):
        self.kb = kb
        self.rules = rules_for(kb, rules)
        self.prefer = tuple(prefer)
        self.graph = graph or CraftGraph(kb, self.rules)
        self.fuel = fuel or next((g for g in kb.generic if g == "planks"), "planks")
        self.fuel_burn = self.rules.fuel_value(self.fuel)
        if self.fuel_burn <= 0:
            raise ValueError(f"{self.fuel} is not a fuel in this knowledge base")
        self._producer: dict[str, tuple[str, str, int]] = {}
        self._choice: dict[tuple[str, ...], str] = {}
        self._tier_memo: dict[str, int] = {}

    # ---- the one public question -------------------------------------------------
    def decompose(self, goal: Goal, context: PlanContext) -> Decomposition:
        try:
            layer = goal_layer(goal)
            if layer is not None:
                return self._dig(layer, context)
            item = self.kb.resolve(goal.item)
            kind, _, index = self.producer(item)
            if kind == "craft":
                return self._craft(item, goal.count, index, context)
            if kind == "smelt":
                return self._smelt(item, goal.count, index, context)
            return self._gather(item, goal.count, context)
        except ModelError as exc:  # said in barsym's words, not pydantic's ("Input should be ...")
            needed = exc.errors()[0].get("input")
            amount = f"{needed} units" if isinstance(needed, int) else "more units"
            raise PlanningError(
                "too_large",
                f"{goal}: a step would need {amount}, more than the {MAX_COUNT} one step may make; ask for fewer",
            ) from None

    # ---- choices ---------------------------------------------------------------------
    def producer(self, item: str) -> tuple[str, str, int]:
        """(kind, item, recipe index) of the chosen way to make ``item``."""
        found = self._producer.get(item)
        if found is None:
            action = self.graph.best_producer(item)
            if action is None:
                why = self.graph.reachability(item)
                reason = (
                    why.reason
                    if not why.reachable
                    else f"nothing makes {item} under the {self.rules.name} rules: only the start inventory can hold it"
                )
                raise PlanningError("unreachable", reason)
            kind, _, rest = action.partition(":")
            name, _, index = rest.partition("#")
            found = (kind, name, int(index) if index else 0)
            self._producer[item] = found
        return found

    def choose(self, accepts: tuple[str, ...]) -> str:
        """The item that fills an ingredient slot accepting ``accepts``."""
        found = self._choice.get(accepts)
        if found is None:
            generic = [name for name in accepts if name in self.kb.generic] if self.rules.generic_names else []
            preferred = [name for name in self.prefer if name in accepts]
            if generic:
                found = generic[0]
            elif preferred:
                found = preferred[0]
            else:
                costs = self.graph.costs
                found = min(accepts, key=lambda n: (costs.get(item_node(n), math.inf), n))
            self._choice[accepts] = found
        return found

    def _slot(self, accepts: tuple[str, ...], need: int, context: PlanContext) -> list[tuple[str, int]]:
        """Who fills a slot: members the start inventory holds first (coal held for a torch), then the choice."""
        out = []
        if context.start.inventory and context.use_held:
            for name in accepts:
                free = context.start.count(name) - context.from_start[name]
                if free > 0 and need > 0:
                    take = min(free, need)
                    out.append((name, take))
                    need -= take
        if need > 0:
            out.append((self.choose(accepts), need))
        return out

    def tool_for(
        self,
        kind: str,
        min_tier: int,
        context: PlanContext | None = None,
        *,
        held: Callable[[str], int] | None = None,
        best: bool = False,
    ) -> str:
        """The rule book's tool choice (:meth:`Rules.choose_tool`): one held that serves (at the start of the
        plan, or ``held``), else the lowest tier, then the cheapest by the graph's costs."""
        costs = self.graph.costs
        if held is None and context is not None and context.start.inventory:
            held = context.start.count
        return self.rules.choose_tool(kind, min_tier, held, lambda name: costs.get(item_node(name), math.inf), best)

    # ---- decompositions (what each needs: the rule book's action schema) -------------------
    def _craft(self, item: str, count: int, index: int, context: PlanContext) -> Decomposition:
        step = Step(type=StepType.CRAFT, item=item, count=count)
        spare = context.surplus(item)
        if count <= spare:
            return Decomposition(step, (), PROVENANCE, yields=0, note=f"{count} spare from an earlier batch")
        action = self.rules.action("craft", item, count - spare, index)
        needs: dict[str, int] = {}
        for slot in action.needs:
            for name, n in self._slot(slot.accepts, slot.count, context):
                needs[name] = needs.get(name, 0) + n
        subgoals = [Goal(item=name, count=n) for name, n in needs.items()]
        if action.station:
            subgoals.append(Goal(item=action.station, count=1))
        per_batch = action.makes // action.runs
        note = f"{action.runs} craft(s) of {per_batch}" + (f", {spare} spare used" if spare else "")
        return Decomposition(step, tuple(subgoals), PROVENANCE, yields=action.makes, note=note)

    def _smelt(self, item: str, count: int, index: int, context: PlanContext) -> Decomposition:
        step = Step(type=StepType.SMELT, item=item, count=count)
        action = self.rules.action("smelt", item, count, index)
        credit = context.fuel_left(item) if action.fuel else 0.0
        fuel = self.rules.fuel_units(self.fuel, action.fuel - credit) if action.fuel > credit else 0
        subgoals = [
            Goal(item=name, count=n)
            for slot in action.needs
            for name, n in self._slot(slot.accepts, slot.count, context)
        ]
        if fuel:
            subgoals.append(Goal(item=self.fuel, count=fuel))
        if action.station:
            subgoals.append(Goal(item=action.station, count=1))
        note = f"fuel: {fuel} {self.fuel}" + (f" plus {credit:g} burn left from earlier budget" if credit else "")
        return Decomposition(step, tuple(subgoals), PROVENANCE, fuel_credit=min(credit, count), note=note)

    def _gather(self, item: str, count: int, context: PlanContext) -> Decomposition:
        source = self.rules.source(item)
        if source is None:
            raise PlanningError("unreachable", f"{item} cannot be mined or killed under the {self.rules.name} rules")
        action = self.rules.action(source.kind, item, count)
        tool = self.tool_for(action.tool.kind, action.tool.tier, context) if action.tool else None
        step = Step(type=StepType(action.kind), item=item, count=count, tool=tool)
        subgoals = [Goal(item=slot.accepts[0], count=slot.count) for slot in action.needs]
        subgoals += [Goal(item=tool, count=1)] if tool else []
        if action.layer > 0:
            subgoals.append(layer_goal(action.layer))
        return Decomposition(step, tuple(subgoals), PROVENANCE, note=f"{action.kind} {action.origin}")

    def dig_tool(self, layer: int, root: str, context: PlanContext | None = None) -> str:
        """The pickaxe that digs down to ``layer`` in a plan for ``root`` (see Depth above).

        With ``context``, a pickaxe the start inventory holds that can dig there is used instead of making the
        conventional one: every decomposer and every check must agree on that, or a plan from a start holding
        an iron pickaxe names a wooden one that is never made."""
        tool = self.rules.dig(layer).tool
        assert tool is not None
        tier = max(tool.tier, min(self.rules.layer_tiers[layer], self.plan_tier(root)))
        pickaxe = self.tool_for(tool.kind, tier)
        if context is None or not context.start.inventory:
            return pickaxe
        return self.tool_for(self.kb.dig_down_kind, self.rules.tier(pickaxe), context)  # one held, if any

    def _dig(self, layer: int, context: PlanContext) -> Decomposition:
        if not 1 <= layer <= self.kb.deepest_layer:
            raise PlanningError("decomposition", f"layer {layer} does not exist")
        pickaxe = self.dig_tool(layer, context.root.item, context)
        subgoals = [Goal(item=pickaxe, count=1)]
        if layer > 1:
            subgoals.append(layer_goal(layer - 1))
        return Decomposition(
            Step(type=StepType.DIG_DOWN, tool=pickaxe),
            tuple(subgoals),
            PROVENANCE,
            note=f"to layer {self.kb.layer_name(layer)}",
        )

    # ---- depth conventions -----------------------------------------------------------------
    def plan_tier(self, item: str) -> int:
        """Highest pickaxe tier that obtaining ``item`` needs (the dig-down tier if it only needs to dig)."""
        try:
            return max(self.rules.dig_tier, self._needs_tier(self.kb.resolve(item), set()))
        except PlanningError:
            return self.rules.dig_tier

    def _needs_tier(self, item: str, seen: set[str]) -> int:
        if item in self._tier_memo:
            return self._tier_memo[item]
        if item in seen:
            return 0
        seen.add(item)
        kind, _, index = self.producer(item)
        action = self.rules.action(kind, item, None, index)
        parts = [self.choose(slot.accepts) for slot in action.needs] + ([action.station] if action.station else [])
        tier = 0
        if action.tool is not None:
            parts.insert(0, self.tool_for(action.tool.kind, action.tool.tier))
            if action.tool.kind == self.kb.dig_down_kind:
                tier = action.tool.tier
        if action.layer > 0:
            tier = max(tier, self.rules.dig_tier)
        for part in parts:
            if part in self.kb.items:
                tier = max(tier, self._needs_tier(part, seen))
        self._tier_memo[item] = tier
        return tier
