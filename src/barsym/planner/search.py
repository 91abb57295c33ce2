"""Planning from an inventory when choices depend on it: depth-first backward search.

Under the ``crafting`` rules (Plancraft's tasks) nothing can be gathered, so
whether a goal is possible depends entirely on what the start inventory holds,
and the right recipe or slot member is the one the inventory can pay for
(cyan stained glass panes from held glass, not from panes and dye). BAR's
breadth-first loop picks each producer by graph cost alone and cannot see
that, so this planner searches instead:

``obtain(item, n)`` uses held units first; for the rest it tries the item's
recipes in the knowledge base's order, and for each ingredient slot that is
short, the slot's members that can be made, recursively, on a copy of the
inventory; a branch that fails is dropped (backtracking). A craft is applied
with the rule book's recipe choice (:meth:`Rules.fitting_recipe`), exactly as
the simulator will apply it, so the plan it returns validates by construction
(and is validated anyway). Items on the current path are never asked for again
(iron_ingot <- iron_block <- iron_ingot loops are cut).

When the goal cannot be made, the reason names the raw items that are missing
and how many, for the recipe that misses the fewest.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..kb import Action, KnowledgeBase, Rules, Slot, rules_for
from ..model import Goal, Plan, Step, StepType
from ..sim import State
from ..validation import Validator
from .decomposer import Decomposition, PlanningError
from .result import GoalNode, PlanResult
from .search_reasons import WhyNot, plus
from .stats import PlanStats

MAKES = ("craft", "smelt")  # the actions an inventory search takes

PROVENANCE = "search"
#: how often a recipe's slots are topped up again after a later slot's make used up an earlier one's units
REFILLS = 2


@dataclass
class _Made:
    """One craft or smelt in the search tree and the makes it needed first.

    Plain names and counts: the search builds and drops many of these, so the
    validated Step and Goal models are made only for the plan it keeps.
    """

    kind: StepType
    item: str
    count: int
    subgoals: tuple[tuple[str, int], ...]
    children: list["_Made"] = field(default_factory=list)
    runs: int = 1  # crafting runs (or items smelted): Plancraft's actions
    recipe: int | None = None  # pinned where the item has more than one recipe of its kind


class SearchPlanner(WhyNot):
    """Plans any goal from a start inventory under a rule profile without gathering."""

    def __init__(
        self,
        kb: KnowledgeBase,
        rules: Rules | str | None = None,
        validator: Validator | None = None,
        max_depth: int = 12,
        max_expansions: int = 20000,
        max_alternatives: int = 32,
        name: str = "symbolic",
    ):
        self.kb = kb
        self.rules = rules_for(kb, rules)
        self.validator = validator or Validator(kb, self.rules)
        self.max_depth = max_depth
        self.max_expansions = max_expansions  # items expanded per plan before the search gives up
        self._budget = max_expansions
        self.max_alternatives = max_alternatives  # complete ways compared before the shortest is kept
        self.name = name
        self._makers: dict[str, bool] = {}
        self._cones: dict[str, tuple] = {}
        self._sets: dict[tuple[str, ...], frozenset[str]] = {}
        self._reach: frozenset[str] = frozenset()

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult:
        started = time.perf_counter()
        start = start or State()
        root = Goal(item=self.kb.resolve(goal.item), count=goal.count)
        inventory = dict(start.counts)
        made: list[_Made] = []
        self._reach = self._relaxed_reach(root.item, inventory)
        if not self._obtain(root.item, root.count, inventory, made, frozenset(), 0):
            raise PlanningError("impossible", self.reason(root, start))
        steps: list[Step] = []
        nodes = [GoalNode(0, root, "goal")]
        sources: list[list[int]] = []
        self._flatten(made, 0, nodes, steps, sources)
        if not made:
            nodes[0].covered = f"{root.count} {root.item} already in the start inventory"
        plan = Plan(steps=tuple(steps), source=f"barsym plan {root.item} ({self.name}, {self.rules.name} rules)")
        validation = self.validator.validate(plan, goal=root, start=start)
        if not validation.valid:
            error = validation.errors[0]
            raise PlanningError("invalid", f"{root.item}: the searched plan fails validation: {error.message}")
        return PlanResult(
            goal=root,
            plan=plan,
            nodes=nodes,
            sources=sources,
            needs=[],
            raw_steps=plan.steps,
            validation=validation,
            planner=self.name,
            decomposer=PROVENANCE,
            stats=PlanStats(
                goals=len(nodes), decompositions=len(steps), seconds=round(time.perf_counter() - started, 6)
            ),
        )

    # ---- the search -----------------------------------------------------------------
    def _held(self, item: str, inventory: dict[str, int]) -> int:
        return self._units(self.kb.acceptable(item), inventory)

    def _units(self, accepts: tuple[str, ...], inventory: dict[str, int]) -> int:
        """Units held of any of ``accepts`` (a slot can list 30 kinds of log; an inventory holds a few items)."""
        names = self._sets.get(accepts)
        if names is None:
            names = self._sets[accepts] = frozenset(accepts)
        return sum(inventory[name] for name in names.intersection(inventory))

    def prepare(self) -> None:
        """Index every item's recipe cone up front (the search's recipe graph), as a long run wants.

        Planning works without it (cones are built on first use); a benchmark
        calls it so that per-task times measure search, not index building.
        """
        made = dict.fromkeys(a.item for a in self.rules.every_action() if a.kind in MAKES)
        for item in made:
            assert item is not None
            self._cone(item)
            for name in self.kb.acceptable(item):
                self._can_make(name)

    # ---- what could be made at all (counts aside): prunes the search ---------------------
    def _cone(self, item: str) -> tuple[tuple[str, tuple[frozenset[str], ...]], ...]:
        """The recipes (result, slots) that can take part in making ``item``, deepest first; cached."""
        found = self._cones.get(item)
        if found is None:
            recipes: list = []
            seen: set[str] = set()
            stack = [item]
            while stack:
                name = stack.pop()
                if name in seen or not self._can_make(name):
                    continue
                seen.add(name)
                for slots in (tuple(frozenset(slot.accepts) for slot in a.needs) for a in self._makers_of(name)):
                    recipes.append((name, slots))
                    for slot in slots:
                        stack.extend(slot)
            found = self._cones[item] = tuple(reversed(recipes))
        return found

    def _relaxed_reach(self, item: str, inventory: dict[str, int]) -> frozenset[str]:
        """Items of ``item``'s cone that held items could make if counts did not matter (a fixpoint)."""
        reach = {name for name, n in inventory.items() if n > 0}
        cone = self._cone(item)
        changed = True
        while changed:
            changed = False
            for result, slots in cone:
                if result not in reach and all(not slot.isdisjoint(reach) for slot in slots):
                    reach.add(result)
                    changed = True
        return frozenset(reach)

    def _can_make(self, item: str) -> bool:
        known = self._makers.get(item)
        if known is None:
            generic_ok = self.rules.generic_names or item not in self.kb.generic
            known = self._makers[item] = generic_ok and bool(self._makers_of(item))
        return known

    def _makers_of(self, item: str, count: int | None = None) -> list[Action]:
        """The crafts and smelts of the rule book's schema that make ``item`` (nothing is gathered here)."""
        return [a for a in self.rules.ways(item, count) if a.kind in MAKES]

    def _obtain(
        self, item: str, count: int, inventory: dict[str, int], made: list[_Made], path: frozenset[str], depth: int
    ) -> bool:
        """Make ``inventory`` hold ``count`` units that count as ``item``; record the makes in ``made``.

        The first ways found are compared and the one with the fewest actions
        (crafting runs and smelted items, Plancraft's unit) is kept.
        """
        self._budget = self.max_expansions
        best = None
        for number, (held, record) in enumerate(self._ways(item, count, inventory, path, depth)):
            cost = self.actions(record)
            if best is None or cost < best[0]:
                best = (cost, held, record)
            if number + 1 >= self.max_alternatives or cost <= 1:
                break
        if best is None:
            return False
        inventory.clear()
        inventory.update(best[1])
        made.extend(best[2])
        return True

    def actions(self, made: list[_Made]) -> int:
        """Craft runs and smelted items in a search tree: the length Plancraft counts."""
        return sum(entry.runs + self.actions(entry.children) for entry in made)

    def _ways(self, item: str, count: int, inv: dict[str, int], path: frozenset[str], depth: int) -> Iterator:
        """Every way (lazily, best first) to hold ``count`` units of ``item``: (inventory, makes).

        A way whose makes use up units of ``item`` itself (an iron ingot crafted from the nuggets being
        made) and so end with fewer than ``count`` is dropped."""
        for held, made in self._all_ways(item, count, inv, path, depth):
            if not made or self._held(item, held) >= count:
                yield held, made

    def _all_ways(self, item: str, count: int, inv: dict[str, int], path: frozenset[str], depth: int) -> Iterator:
        short = count - self._held(item, inv)
        if short <= 0:
            yield inv, []
            return
        if item in path or depth >= self.max_depth or item not in self._reach or not self._can_make(item):
            return
        self._budget -= 1
        if self._budget < 0:
            return
        above, path = path, path | {item}
        makers = self._makers_of(item, short)
        for action in makers:
            if action.kind == "craft":
                yield from self._pay(item, action, short, 0, inv, [], path, depth)
            else:
                yield from self._smelt(item, action, short, inv, path, depth)
        if len(makers) < 2:
            return
        for action in makers:  # no one recipe makes it all: part by one (a batch, what is held), the rest by any
            if action.kind == "craft" and action.runs > 1:
                batch = self.rules.action("craft", item, None, action.recipe)
                parts = self._pay(item, batch, batch.makes, 0, inv, [], path, depth)
            elif action.kind == "smelt" and 0 < (part := self._units(action.needs[0].accepts, inv)) < short:
                parts = self._smelt(item, self.rules.action("smelt", item, part, action.recipe), part, inv, path, depth)
            else:
                continue
            for held, made in parts:
                for rest_inv, rest in self._ways(item, count, held, above, depth + 1):
                    yield rest_inv, made + rest

    def _smelt(self, item: str, action: Action, short: int, inv: dict[str, int], path, depth: int) -> Iterator:
        """Ways to smelt ``short`` ``item`` by ``action``'s recipe, its input made first where it is short."""
        for held, record in self._slot_ways(action.needs[0].accepts, action.needs[0].count, inv, path, depth):
            chosen = self.rules.smelt_recipe(item, short, held, action.recipe)
            if chosen is None or chosen[2]:
                continue
            pin = action.recipe if self.rules.recipe_count("smelt", item) > 1 else None
            after = dict(held)
            for name, n in chosen[1].items():
                after[name] -= n
            after[item] = after.get(item, 0) + short
            sub = ((self._slot_name(action.needs[0]), short),)
            yield after, [_Made(StepType.SMELT, item, short, sub, record, short, pin)]

    def _pay(
        self,
        item: str,
        craft: Action,
        short: int,
        slot: int,
        inv: dict[str, int],
        record: list,
        path: frozenset[str],
        depth: int,
        refills: int = REFILLS,
        reserved: dict[str, int] | None = None,
    ) -> Iterator:
        """Fill the recipe's slots from ``slot`` on (backtracking over each slot's ways), then craft by it.

        The units a filled slot will take are set aside (``reserved``) while the later slots are filled,
        so making a later slot's units cannot use them up (the sticks of a fence are made from other
        planks than the fence's own); should the craft still come up short, the slots are topped up again
        from the first, a few times at most. The craft names its recipe (:attr:`Step.recipe`) where the
        item has more than one, so the simulator plays it as planned, whatever the rule book's own choice
        (the first the inventory pays for) would be: an anvil's iron ingot is made from nuggets, not from
        the iron block the anvil needs."""
        if slot == len(craft.needs):
            whole = plus(inv, reserved or {})
            fit = self.rules.fitting_recipe(item, short, whole, craft.recipe)
            if fit is None or fit.station_missing:
                return
            if not fit.paid:
                if refills > 0:
                    yield from self._pay(item, craft, short, 0, whole, record, path, depth, refills - 1)
                return
            pin = craft.recipe if self.rules.recipe_count("craft", item) > 1 else None
            after = dict(whole)
            for name, n in fit.taken.items():
                after[name] -= n
            after[item] = after.get(item, 0) + craft.makes
            sub = tuple((self._slot_name(need), need.count) for need in craft.needs)
            yield after, [_Made(StepType.CRAFT, item, short, sub, record, craft.runs, pin)]
            return
        need = craft.needs[slot]
        for held, more in self._slot_ways(need.accepts, need.count, inv, path, depth):
            taken: dict[str, int] = {}
            self.rules.take(need, need.count, held, taken)
            rest = {name: n - taken.get(name, 0) for name, n in held.items()}
            yield from self._pay(
                item, craft, short, slot + 1, rest, record + more, path, depth, refills, plus(reserved or {}, taken)
            )

    def _slot_ways(
        self,
        accepts: tuple[str, ...],
        need: int,
        inv: dict[str, int],
        path: frozenset[str],
        depth: int,
        first: int = 0,
        order: tuple[str, ...] | None = None,
    ) -> Iterator:
        """Ways to top a slot up to ``need`` units: one member for all of it, else a mix, batch by batch.

        Mixes take members in one fixed order (most held first), each batch of
        a member before any of the next, so no mix is tried twice.
        """
        held = self._units(accepts, inv)
        if held >= need:
            yield inv, []
            return
        if order is None:
            order = tuple(
                sorted(
                    (a for a in accepts if a in self._reach and self._can_make(a) and a not in path),
                    key=lambda a: -inv.get(a, 0),
                )
            )
        candidates = order
        if first == 0:
            for member in candidates:
                yield from self._ways(member, need - held + self._held(member, inv), inv, path, depth + 1)
        for index in range(first, len(candidates)):  # mixes: one more batch of a member, then the rest
            member = candidates[index]
            for more_inv, more in self._ways(member, self._held(member, inv) + 1, inv, path, depth + 1):
                if self._units(accepts, more_inv) <= held:
                    continue  # the batch ate other units of this slot: no progress
                for rest_inv, rest in self._slot_ways(accepts, need, more_inv, path, depth, max(index, 1), order):
                    yield rest_inv, more + rest

    def _slot_name(self, slot: Slot) -> str:
        label = slot.label.lstrip("#")
        return label if label in self.kb.items else slot.accepts[0]

    def _flatten(
        self, made: list[_Made], parent: int, nodes: list[GoalNode], steps: list[Step], sources: list[list[int]]
    ) -> None:
        """Post-order: a make's children run before it, which is the execution order.

        The root's own make (the last top-level entry) becomes the root node's step.
        """
        for position, entry in enumerate(made):
            if parent == 0 and position == len(made) - 1 and nodes[0].decomposition is None:
                node = nodes[0]
            else:
                goal = Goal(item=entry.item, count=entry.count)
                node = GoalNode(len(nodes), goal, "ingredient", parent, len(nodes[parent].children))
                nodes.append(node)
                nodes[parent].children.append(node.id)
            self._flatten(entry.children, node.id, nodes, steps, sources)
            step = Step(type=entry.kind, item=entry.item, count=entry.count, recipe=entry.recipe)
            subgoals = tuple(Goal(item=name, count=n) for name, n in entry.subgoals)
            node.decomposition = Decomposition(step, subgoals, PROVENANCE)
            node.step_index = len(steps)
            steps.append(step)
            sources.append([node.id])
