"""BAR's planning loop: a Goal Queue, a Step Stack, and a decomposition tree.

The loop (Du et al. 2025): pop the goal at the head of the queue, ask the
decomposer for one step and the subgoals that step needs, push the step, queue
the subgoals; stop when the queue is empty and read the plan off the stack.
The planner never looks inside a decomposer, so the symbolic graph, an LLM or a
memory can answer; what it keeps is the whole tree (goal -> step + subgoals +
provenance), because a plan is only as trustworthy as the answers it came from.

The planner itself applies the rules that hold for any decomposer:
- a tool or station is used, not consumed: a goal for one that is already
  planned is covered (one crafting table, one furnace, one pickaxe per tier);
- a layer already reached by a planned dig down is covered;
- a station planned for use may also be the unit an ingredient consumes, as the
  expert plans do (blast_furnace: the furnace smelts, then becomes part of the
  blast furnace); ordering then puts every use before the consumption. If that
  cannot work the planner plans again without sharing.

Every finished plan is played forward by the validator before it is returned:
barsym never hands out a plan it cannot execute itself. The one exception is
``keep_invalid=True`` (the ``llm-only`` baseline, whose point is to show what
an unchecked model produces): the plan comes back with the validator's verdict,
and goals the decomposer could not answer (:class:`Unanswered`) stay open.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque

from ..graph import CraftGraph
from ..kb import EPSILON, KnowledgeBase, Rules, UnknownItemError, rules_for
from ..model import Goal, Plan, StepType
from ..sim import State
from ..sim.wear import CODE as WEAR_CODE
from ..validation import Validator
from .decomposer import Decomposer, Decomposition, PlanContext, PlanningError, Unanswered, goal_layer
from .fusion import KEPT_ROLES, dig_steps, fuse, fusion_needs, layer_needs
from .ordering import NoOrder, drop_blocking_surface, lay_out, layer_rank, order_steps
from .result import GoalNode, PlanResult
from .stats import PlanStats
from .verify import check_decomposition, subgoal_roles


class BackwardPlanner:
    """Plan one goal with any :class:`Decomposer`."""

    def __init__(
        self,
        kb: KnowledgeBase,
        decomposer: Decomposer,
        graph: CraftGraph | None = None,
        validator: Validator | None = None,
        verify: bool = False,
        max_goals: int = 20000,
        name: str | None = None,
        keep_invalid: bool = False,
        rules: Rules | str | None = None,
    ):
        self.kb = kb
        self.rules = rules_for(kb, rules if rules is not None else getattr(decomposer, "rules", None))
        self.decomposer = decomposer
        self.graph = graph or getattr(decomposer, "graph", None) or CraftGraph(kb, self.rules)
        self.validator = validator or Validator(kb, self.rules)
        self.verify = verify
        self.max_goals = max_goals
        self.name = name or getattr(decomposer, "name", "backward")
        self.keep_invalid = keep_invalid
        self._sharing_used = False
        self._start = State()
        self._cover = State()  # the start as the loop plans from it: layers down to its layer are reached
        self._use_held = True

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult:
        """Plan ``goal`` from ``start`` (default: empty inventory on the surface).

        What the start inventory holds is used first: tools and stations it
        holds are not made again, materials it holds are consumed before any
        are planned, and layers at or above its layer are reached.
        """
        started = time.perf_counter()
        root = Goal(item=self.kb.resolve(goal.item), count=goal.count)  # UnknownItemError goes to the caller
        self._start = start or State()
        held = self._start.count_any(self.kb.acceptable(root.item))
        reach = self.graph.reachability(root.item)
        if not reach.reachable and held < root.count:
            raise PlanningError("unreachable", reach.reason)
        if self._start.layer == 0 or not self.rules.can_climb:
            return self._planned(root, started, self._start.layer)
        # below the surface: plan from where the agent stands, and (when that plan climbs) as if from the
        # surface, climbing first; keep the one with fewer wasted steps, then fewer steps (barsym.planner.layers)
        try:
            here = self._planned(root, started, self._start.layer)
        except PlanningError as exc:
            if exc.kind.about_goal:
                raise
            return self._planned(root, started, 0)
        if not any(step.type is StepType.CLIMB_UP for step in here.plan.steps):
            return here
        try:
            above = self._planned(root, started, 0)
        except PlanningError:
            return here
        return min((here, above), key=lambda r: layer_rank(r.plan, r.validation))

    def _planned(self, root: Goal, started: float, cover: int) -> PlanResult:
        """Plan with the layers down to ``cover`` taken as reached (the start's layer, or one above it)."""
        self._cover = State(self._start.inventory, cover)
        try:
            return self._plan(root, started, use_held=True)
        except PlanningError as exc:
            if exc.kind not in ("invalid", "no_order") or not self._start.inventory:
                raise
            # Held materials are named as held (oak_planks) while planned ones are generic (planks), and the
            # simulator takes a slot's units in its own order; where that upsets the count, plan the materials
            # as if none were held (held tools, stations, fuel for nothing else and the layer still count).
            return self._plan(root, started, use_held=False)

    def _plan(self, root: Goal, started: float, use_held: bool) -> PlanResult:
        self._use_held = use_held
        failure: PlanningError | None = None
        kept: PlanResult | None = None  # an invalid plan, returned only with keep_invalid
        for attempt, share in enumerate((True, False), start=1):
            self._sharing_used = False  # set when a goal is covered by consuming a planned station
            try:
                result = self._attempt(root, share)
            except PlanningError as exc:
                # without sharing, the same answers give the same plan: only retry if sharing happened
                if exc.kind not in ("invalid", "no_order") or not share or not self._sharing_used:
                    if kept is None:
                        raise
                    break
                failure = exc
                continue
            result.stats = dataclasses.replace(
                result.stats,
                attempts=attempt,
                held_materials_used=use_held,
                seconds=round(time.perf_counter() - started, 6),
            )
            if result.validation.valid or not share or not self._sharing_used:
                return result
            kept = result
        if kept is not None:
            return kept
        assert failure is not None
        raise failure

    # ---- one pass of the loop ----------------------------------------------------------
    def _attempt(self, root: Goal, share: bool) -> PlanResult:
        restart = getattr(self.decomposer, "start_attempt", None)  # its per-goal counters describe this attempt
        if restart is not None:
            restart()
        context = PlanContext(self.kb, root, start=self._cover, use_held=self._use_held)
        claimed: dict[str, int] = {}
        nodes = [GoalNode(0, root, "goal")]
        queue = deque([0])
        context.pending[root.item] += 1
        stack: list[int] = []
        calls = checks = 0
        while queue:
            node = nodes[queue.popleft()]
            context.pending[node.goal.item] -= 1
            node.covered = self._covered(node, context, share, claimed)
            if node.covered:
                continue
            if len(nodes) > self.max_goals:
                raise PlanningError(
                    "decomposition", f"{root}: more than {self.max_goals} goals; the decomposition does not terminate"
                )
            context.path = self._path(node, nodes)
            try:
                decomposition = self.decomposer.decompose(node.goal, context)
            except UnknownItemError as exc:
                raise PlanningError("decomposition", f"{node.goal}: {exc}") from None
            except Unanswered as exc:
                if not self.keep_invalid:
                    raise PlanningError("decomposition", f"{node.goal}: no answer: {exc}") from None
                node.unanswered = str(exc)
                continue
            calls += 1
            if self.verify and not decomposition.verified:
                checks += 1
                problems = check_decomposition(self.kb, node.goal, decomposition, self.rules)
                if problems:
                    raise PlanningError(
                        "decomposition",
                        f"{node.goal}: {decomposition.provenance} answer rejected: {'; '.join(problems)}",
                    )
            node.decomposition = decomposition
            roles = subgoal_roles(self.kb, decomposition.step, decomposition.subgoals, self.rules)
            layer = goal_layer(node.goal)
            item = (
                None if layer is not None else self._canonical(decomposition.step.item or node.goal.item, decomposition)
            )
            context.record(item, decomposition, roles, node.role in KEPT_ROLES, layer)
            stack.append(node.id)
            for index, (sub, role) in enumerate(zip(decomposition.subgoals, roles)):
                child = GoalNode(len(nodes), sub, role, node.id, index)
                nodes.append(child)
                node.children.append(child.id)
                queue.append(child.id)
                context.pending[sub.item] += 1
        return self._finish(root, nodes, stack, share, calls, checks)

    @staticmethod
    def _path(node: GoalNode, nodes: list[GoalNode]) -> tuple[Goal, ...]:
        above = []
        parent = node.parent
        while parent is not None:
            above.append(nodes[parent].goal)
            parent = nodes[parent].parent
        return tuple(reversed(above))

    def _canonical(self, name: str, decomposition: Decomposition) -> str:
        try:
            return self.kb.resolve(name)
        except UnknownItemError as exc:
            raise PlanningError("decomposition", f"{decomposition.provenance} answer names {exc}") from None

    def _covered(self, node: GoalNode, context: PlanContext, share: bool, claimed: dict[str, int]) -> str | None:
        layer = goal_layer(node.goal)
        if layer is not None:
            if layer <= context.start.layer:
                node.held = True
                return f"the start is on layer {context.start.layer}"
            return f"layer {layer} is already reached by a planned dig down" if context.reached(layer) else None
        try:
            item = self.kb.resolve(node.goal.item)
        except UnknownItemError:
            return None
        held = self._from_start(node, item, context)
        if held:
            node.held = True
            return held
        if node.parent is None:
            return None
        if node.role in KEPT_ROLES:
            have = context.produced[item] if share else context.kept[item]
            return f"reuses the {item} already planned (used, not consumed)" if have >= 1 else None
        persistent = self.rules.is_persistent(item)
        if share and node.role == "ingredient" and persistent:
            free = context.kept[item] - claimed.get(item, 0)
            if free >= node.goal.count:
                claimed[item] = claimed.get(item, 0) + node.goal.count
                self._sharing_used = True
                return f"consumes the {item} planned as a station or tool, after its last use"
        return None

    def _from_start(self, node: GoalNode, item: str, context: PlanContext) -> str | None:
        """Cover a goal, or part of it, from the start inventory (a partial cover shrinks the goal)."""
        start = context.start
        if not start.inventory:
            return None
        if node.role in KEPT_ROLES:
            tool = self.rules.tool(item)
            serving = (
                self.rules.best_held_tool(tool.kind, tool.tier, start.count)
                if tool is not None
                else (item if start.count(item) else None)
            )
            return f"{serving} is in the start inventory (used, not consumed)" if serving else None
        if not context.use_held and not self.rules.is_persistent(item):
            return None
        if node.role == "fuel":
            return self._fuel_from_start(node, item, context)
        free = {name: start.count(name) - context.from_start[name] for name in self.kb.acceptable(item)}
        have = sum(max(0, n) for n in free.values())
        if have <= 0:
            return None
        take = min(have, node.goal.count)
        left = take
        for name, n in free.items():
            grab = min(max(0, n), left)
            context.from_start[name] += grab
            left -= grab
        if take >= node.goal.count:
            return f"{take} {item} from the start inventory"
        node.goal = Goal(item=node.goal.item, count=node.goal.count - take)
        node.from_start = take
        return None

    def _fuel_from_start(self, node: GoalNode, item: str, context: PlanContext) -> str | None:
        """Fuel is burn time: any fuel the start holds covers a fuel goal (coal for planks), in the furnace's order."""
        rules, start = self.rules, context.start
        burn = node.goal.count * rules.fuel_value(item)
        held = {
            name: start.count(name) - context.from_start[name]
            for name in start.counts
            if rules.fuel_value(name) > 0 and not rules.is_persistent(name)
        }
        fuel, got = rules.pick_fuel({n: c for n, c in held.items() if c > 0}, burn, reserve={})
        if not fuel:
            return None
        for name, n in fuel.items():
            context.from_start[name] += n
        if got + EPSILON >= burn:
            return "fuel from the start inventory: " + ", ".join(f"{n} {name}" for name, n in fuel.items())
        node.goal = Goal(item=node.goal.item, count=rules.fuel_units(item, burn - got))
        return None

    # ---- fusion, ordering, validation -------------------------------------------------------
    def _finish(
        self, root: Goal, nodes: list[GoalNode], stack: list[int], share: bool, calls: int, checks: int = 0
    ) -> PlanResult:
        popped = stack[::-1]  # BAR pops the stack: deepest goals first
        fusion = fuse(self.kb, nodes, popped)
        steps, fused, at = fusion.steps, fusion.groups, fusion.at
        order, needs = self._order(root, steps, fusion_needs(self.kb, self.rules, nodes, fusion, share))
        layouts = [(order, needs)]
        if self.rules.can_climb and self._start.layer > 0:  # below the surface: the better of two layouts
            from .layers import orders_below

            layouts = orders_below(self.rules, steps, needs, dig_steps(nodes, fusion), self._start.layer) or layouts
        best = None
        for order, needs in layouts:
            source = f"barsym plan {root.item} ({self.name})"
            plan, position = lay_out(self.rules, self.validator.sim, steps, order, self._start, source)
            self._check_climb(root, plan)
            validation = self.validator.validate(plan, goal=root, start=self._start)
            if best is None or layer_rank(plan, validation) < layer_rank(best[1], best[3]):
                best = (order, plan, position, validation, needs)
        assert best is not None
        order, plan, position, validation, needs = best
        for nid, i in at.items():
            nodes[nid].step_index = position[i]
        worn = self.rules.profile.durability and all(e.code == WEAR_CODE for e in validation.errors)
        if not validation.valid and not self.keep_invalid and not worn:  # a worn tool: the repairer tops it up
            error = validation.errors[0]
            where = f"step {error.step}" if error.step else "the end"
            raise PlanningError("invalid", f"{root.item}: the plan fails validation at {where}: {error.message}")
        sources: list[list[int]] = [[] for _ in plan.steps]  # inserted climbs and digs come from no goal
        for i in order:
            sources[position[i]] = fused[i]
        return PlanResult(
            goal=root,
            plan=plan,
            nodes=nodes,
            sources=sources,
            needs=sorted(
                {(position[d.before], position[d.after], d.role) for d in needs if d.before != d.after}
                | layer_needs(self.rules, plan, sources)
            ),
            raw_steps=tuple(nodes[n].decomposition.step for n in popped),
            validation=validation,
            planner=self.name,
            decomposer=getattr(self.decomposer, "name", "?"),
            stats=PlanStats(goals=len(nodes), decompositions=calls, shared_stations=share, loop_checks=checks),
        )

    def _order(self, root: Goal, steps: list, needs: list) -> tuple[list[int], list]:
        """An order of the fused steps honouring ``needs`` (and the needs it honours), or why there is none."""
        try:
            return order_steps(steps, needs), needs
        except NoOrder as exc:
            if self.keep_invalid:  # an unchecked planner's answers may loop: show BAR's raw stack order
                return list(range(len(steps))), needs
            if exc.surface and self.rules.can_climb:  # BAR's agent never climbs; a player does, when it must
                needs = drop_blocking_surface(steps, needs)
                try:
                    return order_steps(steps, needs), needs
                except NoOrder as again:
                    raise PlanningError(
                        "no_order", f"{root.item}: no order of the steps works: {again.reason}"
                    ) from None
            if exc.surface:
                raise PlanningError(
                    "no_return", f"{root.item} cannot be obtained without climbing back up: {exc.reason}"
                ) from None
            raise PlanningError("no_order", f"{root.item}: no order of the steps works: {exc.reason}") from None

    def _check_climb(self, root: Goal, plan: Plan) -> None:
        """A start below the surface cannot gather what only grows above it: say so, not 'invalid'."""
        layer = self._start.layer
        if self.rules.can_climb:
            return  # the climbs were put in
        for step in plan.steps:
            found = self.rules.step_layers(step)
            if found and max(found) < layer:
                raise PlanningError(
                    "no_return",
                    f"{root.item} needs {step.item}, found on layer "
                    f"{max(found)} and above, but the start is on layer "
                    f"{self.kb.layer_name(layer)} and the agent never climbs back up",
                )
