"""BAR's fusion: the popped Step Stack read as one step per kind of action, and which step needs which.

The Step Stack holds one step per goal, so a plan for a pickaxe holds "craft 4
planks" several times, once per goal that wanted planks. Fusion merges every
step of the same action (type, item as the rule book resolves it, tool; a dig
down per target layer) into one whose count is the sum, the first occurrence
(deepest goal first, as BAR pops the stack) fixing its place. The decomposition
tree then says which fused step must precede which (:func:`fusion_needs`), and
:mod:`.ordering` finds an order that honours them.

Pure functions of the tree, so property tests can check them without a planner.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..kb import KnowledgeBase, Rules
from ..model import Plan, Step, StepType
from .decomposer import goal_layer
from .ordering import Need
from .result import GoalNode

#: roles whose unit is used, not consumed
KEPT_ROLES = ("tool", "station")


@dataclass(frozen=True)
class Fusion:
    steps: list[Step]  # one per fused group, in first-popped order
    groups: list[list[int]]  # the node ids fused into each step
    at: dict[int, int]  # node id -> its fused step


def fuse(kb: KnowledgeBase, nodes: list[GoalNode], popped: list[int]) -> Fusion:
    """Merge the popped nodes' steps of the same action (a dig down per layer) into one, counts summed."""
    keys: dict[tuple, int] = {}
    groups: list[list[int]] = []
    for nid in popped:
        step = nodes[nid].decomposition.step
        if step.type is StepType.DIG_DOWN:
            key: tuple = ("dig", goal_layer(nodes[nid].goal))
        else:
            key = (step.type, kb.resolve(step.item), step.tool, step.recipe)
        if key not in keys:
            keys[key] = len(groups)
            groups.append([])
        groups[keys[key]].append(nid)
    steps = [merge([nodes[n].decomposition.step for n in group]) for group in groups]
    return Fusion(steps, groups, {nid: i for i, group in enumerate(groups) for nid in group})


def merge(steps: list[Step]) -> Step:
    """One step for several of the same action: the first, with the counts summed (a dig down stays one)."""
    first = steps[0]
    if first.type is StepType.DIG_DOWN:
        return first
    return first.model_copy(update={"count": sum(s.count or 0 for s in steps)})


def dig_steps(nodes: list[GoalNode], fusion: Fusion) -> dict[int, int]:
    """Layer -> the fused step of the planned dig down that reaches it."""
    out = {}
    for i, group in enumerate(fusion.groups):
        layer = goal_layer(nodes[group[0]].goal)
        if layer is not None:
            out[layer] = i
    return out


def fusion_needs(kb: KnowledgeBase, rules: Rules, nodes: list[GoalNode], fusion: Fusion, share: bool) -> list[Need]:
    """Which fused step must precede which: from the tree, from layers, and (``share``) from sharing."""
    steps, at = fusion.steps, fusion.at
    makers: dict[str, list[int]] = {}
    digs = dig_steps(nodes, fusion)
    dug = set(digs.values())
    for i in range(len(steps)):
        if i not in dug:
            makers.setdefault(kb.resolve(steps[i].item), []).append(i)
    needs: list[Need] = []
    for nid, after in at.items():
        for cid in nodes[nid].children:
            child = nodes[cid]
            if child.held:  # the start state provides it: no step comes first
                continue
            if child.decomposition is not None:
                befores = [at[cid]]
            else:
                layer = goal_layer(child.goal)
                if layer is not None:  # reached by a planned dig, or already at the start
                    befores = [digs[layer]] if layer in digs else []
                else:
                    befores = makers.get(kb.resolve(child.goal.item), [])
            for before in befores:
                needs.append(Need(before, after, child.role, child.index, child.goal.item))
    for i, step in enumerate(steps):  # surface-only resources before going deeper
        found = rules.step_layers(step)
        if found and max(found) + 1 in digs:
            needs.append(Need(i, digs[max(found) + 1], "surface", 0, step.item))
    if share:
        needs += shared_needs(needs)
    return needs


def shared_needs(needs: list[Need]) -> list[Need]:
    """Where one unit is both used (tool/station) and consumed: every use comes first."""
    users: dict[int, set[int]] = {}
    takers: dict[int, set[int]] = {}
    for d in needs:
        if d.role in KEPT_ROLES:
            users.setdefault(d.before, set()).add(d.after)
        elif d.role in ("ingredient", "fuel"):
            takers.setdefault(d.before, set()).add(d.after)
    extra = []
    for maker in set(users) & set(takers):
        for user in users[maker]:
            for taker in takers[maker]:
                if user != taker:
                    extra.append(Need(user, taker, "shared", 0))
    return extra


def layer_needs(rules: Rules, plan: Plan, sources: list[list[int]]) -> set[tuple[int, int, str]]:
    """Where climbs were put in: layer moves keep their order and each gathering step its layer segment."""
    if all(sources):
        return set()
    moves = [i for i, step in enumerate(plan.steps) if step.type.moves]
    out = {(a, b, "layer") for a, b in zip(moves, moves[1:])}
    for i, step in enumerate(plan.steps):
        if rules.step_layers(step) is None:
            continue
        prior = [m for m in moves if m < i]
        later = [m for m in moves if m > i]
        if prior:
            out.add((prior[-1], i, "layer"))
        if later:
            out.add((i, later[0], "layer"))
    return out
