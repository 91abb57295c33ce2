"""Fuse repeated steps and put the fused steps in an executable, expert-like order.

**Fusion.** BAR's stack pops one step per goal, so ``craft stick`` appears once
per consumer. The expert plans say each item once, with the total count. Steps
fuse when they are the same action (type, item, tool); a dig down never fuses
with another, since each one goes one layer deeper.

**Order.** Any topological order of the needs is executable; the expert plans
pick a particular one, and so do we, by building the plan backwards from the
goal (the goal step last), each time placing the step that can go latest:

1. crafts and smelts before (i.e. later than) gathering, and gathering before
   dig downs. So crafts happen as late as possible, right before the step that
   first needs them (the furnace right before the first smelt, the chest right
   before the hopper), gathering happens right after the dig down that makes it
   possible, and each dig down comes right after the pickaxe it uses.
2. among those, the step whose first consumer comes latest (as late as possible);
3. among siblings of that consumer, the later subgoal goes later (a decomposer
   lists ingredients, then the station: planks, stick, crafting_table,
   wooden_pickaxe).

Layers make one more kind of need: a resource found only down to layer k must
be gathered before the dig down to layer k+1 (all logs first), since the agent
never climbs back up. If that is impossible (vines need shears, and shears need
iron from below), ordering fails with a reason instead of a wrong plan.

Finally, each run of consecutive smelts is put in first-come order, smelting
first what has waited longest (cobblestone mined before iron ore is smelted
first), as a player feeding one furnace would.

**Layout.** Where the rules let the agent climb, :func:`lay_out` puts in the
climbs and digs a gathering step's layer needs, and every dig that names no
pickaxe is given the one the agent holds there (:func:`name_dig_tools`);
:func:`layer_rank` says which of two layouts is better (a start below the
surface is laid out more than one way: :mod:`barsym.planner.layers`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import Plan, Step, StepType
from ..sim import Simulator, State, Transition

if TYPE_CHECKING:
    from ..kb import Rules
    from ..validation import ValidationResult

_CLASS = {
    StepType.CRAFT: 0,
    StepType.SMELT: 0,
    StepType.MINE: 1,
    StepType.KILL: 1,
    StepType.DIG_DOWN: 2,
    StepType.CLIMB_UP: 2,
}


def fusion_key(step: Step) -> tuple | None:
    """Steps with equal keys are one action and fuse; None (a dig down or climb up) never fuses."""
    if step.type.moves:
        return None
    return (step.type, step.item, step.tool, step.recipe)


def fuse(steps: Iterable[Step]) -> list[Step]:
    """Merge each action into its first occurrence, summing counts."""
    order: list[tuple] = []
    merged: dict[tuple, Step] = {}
    for position, step in enumerate(steps):
        key = fusion_key(step) or ("dig", position)
        if key in merged:
            old = merged[key]
            merged[key] = old.model_copy(update={"count": (old.count or 0) + (step.count or 0)})
        else:
            order.append(key)
            merged[key] = step
    return [merged[key] for key in order]


@dataclass(frozen=True)
class Need:
    """Step ``before`` must run before step ``after``; ``role`` says why."""

    before: int
    after: int
    role: str  # ingredient, fuel, tool, station, layer, surface, shared
    index: int = 0  # position of the need among the consumer's subgoals
    item: str | None = None


class NoOrder(Exception):
    """The needs form a cycle; ``reason`` explains it in words."""

    def __init__(self, reason: str, surface: bool):
        super().__init__(reason)
        self.reason = reason
        self.surface = surface


def order_steps(steps: Sequence[Step], needs: Iterable[Need]) -> list[int]:
    """A permutation of ``range(len(steps))`` honouring every need (see module doc)."""
    n = len(steps)
    succ: list[set[int]] = [set() for _ in range(n)]
    pred: list[set[int]] = [set() for _ in range(n)]
    index: dict[tuple[int, int], int] = {}
    need_list = [d for d in needs if d.before != d.after]
    for d in need_list:
        succ[d.before].add(d.after)
        pred[d.after].add(d.before)
        index[(d.before, d.after)] = max(index.get((d.before, d.after), 0), d.index)
    waiting = [len(s) for s in succ]
    ready = {i for i in range(n) if not waiting[i]}
    from_end: dict[int, int] = {}
    backwards: list[int] = []

    def priority(i: int) -> tuple:
        first = max(succ[i], key=lambda j: from_end[j], default=None)
        where = from_end[first] if first is not None else -1
        sibling = index.get((i, first), 0) if first is not None else 0
        return (_CLASS[steps[i].type], where, -sibling, i)

    while ready:
        pick = min(ready, key=priority)
        ready.discard(pick)
        from_end[pick] = len(backwards)
        backwards.append(pick)
        for p in pred[pick]:
            waiting[p] -= 1
            if waiting[p] == 0:
                ready.add(p)
    if len(backwards) < n:
        raise _explain_cycle(steps, need_list)
    order = backwards[::-1]
    return _smelt_first_come(steps, order, need_list)


def drop_blocking_surface(steps: Sequence[Step], needs: Iterable[Need]) -> list[Need]:
    """Needs without the "gather above before digging" ones that cannot hold.

    A surface gather that itself needs a dig (milking a cow needs a bucket,
    which needs iron from below) cannot come before that dig; its surface needs
    are dropped so that the plan can climb back up for it (see
    :func:`insert_layer_moves`). Every other surface need stays, so the other
    surface gathering still happens first, as BAR's plans do.
    """
    needs = list(needs)
    before: dict[int, set[int]] = {}
    for d in needs:
        if d.role != "surface":
            before.setdefault(d.after, set()).add(d.before)
    blocked = set()
    for d in needs:
        if d.role != "surface":
            continue
        seen, stack = set(), [d.before]
        while stack:
            node = stack.pop()
            for prior in before.get(node, ()):
                if prior not in seen:
                    seen.add(prior)
                    stack.append(prior)
        if any(steps[i].type is StepType.DIG_DOWN for i in seen):
            blocked.add(d.before)
    return [d for d in needs if not (d.role == "surface" and d.before in blocked)]


def insert_layer_moves(
    steps: Sequence[Step], layers_of, start_layer: int, next_layer: Callable[[int, str], int]
) -> tuple[list[Step], list[int]]:
    """Put ``climb up`` (and, after a climb, ``dig down`` again) where a gathering step's layer needs it.

    ``next_layer(layer, step type)`` is the rule book's layer arithmetic
    (:meth:`barsym.kb.Rules.next_layer`). ``layers_of(step)`` gives the layers a gathering step can happen on (None
    for other steps). Returns the new steps and, for each old position, its new
    one. A dig down inserted after a climb uses the pickaxe of the last dig.
    """
    out: list[Step] = []
    where: list[int] = []
    layer, pickaxe = start_layer, None
    for step in steps:
        if step.type.moves:  # the rule book's layer arithmetic (Rules.next_layer)
            if step.type is StepType.DIG_DOWN:
                pickaxe = step.tool or pickaxe
            layer = next_layer(layer, step.type.value)
        else:
            found = layers_of(step)
            if found and layer not in found:
                if layer > max(found):
                    out += [Step(type=StepType.CLIMB_UP)] * (layer - max(found))
                    layer = max(found)
                else:
                    out += [Step(type=StepType.DIG_DOWN, tool=pickaxe)] * (min(found) - layer)
                    layer = min(found)
        where.append(len(out))
        out.append(step)
    return out, where


def lay_out(rules: Rules, sim: Simulator, steps: Sequence[Step], order: list[int], start: State, source: str):
    """(plan, fused step -> plan position): the ordered steps with the layer moves they need put in."""
    ordered, moved = [steps[i] for i in order], list(range(len(order)))
    if rules.can_climb:
        ordered, moved = insert_layer_moves(ordered, rules.step_layers, start.layer, rules.next_layer)
    plan = name_dig_tools(rules, sim, Plan(steps=tuple(ordered), source=source), start)
    return plan, {old: moved[new] for new, old in enumerate(order)}


def name_dig_tools(rules: Rules, sim: Simulator, plan: Plan, start: State) -> Plan:
    """``plan`` with each dig down that names no pickaxe naming one the agent holds there."""
    if all(s.type is not StepType.DIG_DOWN or s.tool for s in plan.steps):
        return plan
    kind = rules.kb.dig_down_kind
    state, steps = start, []
    for step in plan.steps:
        if step.type is StepType.DIG_DOWN and not step.tool:
            tier = rules.layer_tiers.get(min(state.layer + 1, rules.kb.deepest_layer), rules.dig_tier)
            held = rules.best_held_tool(kind, tier, state.count) or rules.best_held_tool(
                kind, rules.dig_tier, state.count
            )
            if held is not None:
                step = step.model_copy(update={"tool": held})
        steps.append(step)
        moved = sim.transition(step, state)
        if isinstance(moved, Transition):
            state = moved.state
    return plan.model_copy(update={"steps": tuple(steps)})


def layer_rank(plan: Plan, validation: ValidationResult) -> tuple[bool, int, int, int]:
    """Sort key of the better plan: valid, fewer wasted steps, fewer steps, fewer digs after a climb."""
    redundant = sum(w.code == "redundant_step" for w in validation.warnings)
    kinds = [s.type for s in plan.steps if s.type.moves]
    climbed = kinds.index(StepType.CLIMB_UP) if StepType.CLIMB_UP in kinds else len(kinds)
    return (not validation.valid, redundant, len(plan), kinds[climbed:].count(StepType.DIG_DOWN))


def _smelt_first_come(steps: Sequence[Step], order: list[int], needs: list[Need]) -> list[int]:
    """Reorder each run of consecutive smelts so the longest-waiting input goes first."""
    inputs: dict[int, set[int]] = {}
    for d in needs:
        if d.role == "ingredient":
            inputs.setdefault(d.after, set()).add(d.before)
    position = {step: pos for pos, step in enumerate(order)}
    out = list(order)
    start = 0
    while start < len(out):
        end = start
        while end < len(out) and steps[out[end]].type is StepType.SMELT:
            end += 1
        if end - start > 1:
            run = out[start:end]
            members = set(run)
            placed: list[int] = []
            while len(placed) < len(run):
                free = [s for s in run if s not in placed and not (inputs.get(s, set()) & (members - set(placed)))]
                pick = min(free, key=lambda s: (max((position[p] for p in inputs.get(s, ())), default=-1), position[s]))
                placed.append(pick)
                position[pick] = start + len(placed) - 1
            out[start:end] = placed
        start = max(end, start + 1)
    return out


def _explain_cycle(steps: Sequence[Step], needs: list[Need]) -> NoOrder:
    import networkx as nx  # only when the steps cannot be ordered: a light command never loads it

    g = nx.DiGraph()
    for d in needs:
        g.add_edge(d.before, d.after, role=d.role)
    try:
        cycle = nx.find_cycle(g)
    except nx.NetworkXNoCycle:  # pragma: no cover - only called when a cycle exists
        return NoOrder("the steps' needs cannot be ordered", False)
    for k, (before, after) in enumerate(cycle):
        if g.edges[before, after]["role"] == "surface":
            stuck = steps[before]
            needed = steps[cycle[k - 1][0]]
            return NoOrder(
                f"{stuck.item} is only found above ground, but '{stuck}' needs '{needed}', which can only "
                f"happen after digging down, and BAR's agent never climbs back up",
                True,
            )
    chain = " -> ".join(str(steps[b]) for b, _ in cycle)
    return NoOrder(f"the steps' needs form a cycle: {chain}", False)
