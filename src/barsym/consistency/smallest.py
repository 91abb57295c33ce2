"""The smallest repair: a plan one step away from a valid one is repaired by that one step.

BAR's module (b) regenerates windows around the low-scored steps, and a window
can grow far beyond the mistake: a 5-step wooden_pickaxe plan with a bogus
``craft 1 clock`` came back as 20 steps that went for gold and redstone, the
clock still unmade (issue 56). A person fixes such a plan with one edit, so the
symbolic repairer first looks for one, in this order:

1. **delete** a step (the bogus clock);
2. **recount** a step: more of what a later step is short of (a cut count), or
   fewer of what it used up that a later step needed;
3. **replace** a step by one that makes what is missing;
4. **insert** such a step (a dropped dig down, a dropped crafting table).

Only steps up to the first failing one are edited: a change after it leaves it
failing. What is missing is read off the simulator's reasons for the first
failing step, the independent failures after it and a missing goal
(:func:`barsym.sim.diagnosis.diagnose`, :class:`~.needs.NeedPlanner`); a new
step makes it by any way the rule book knows, with the count that covers every
later shortage of it, and a tool the agent holds there (past the first failure: holds once the
replaced step is gone, since that step may be what starved the steps between). Of the edits that make
the plan valid, one that leaves no waste is preferred, then the order above,
then the edit nearest the first failure. None found: the rounds take over.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..kb import UnknownItemError
from ..model import MAX_COUNT, Goal, Plan, Step, StepType
from ..sim import Failure, State, Transition, future_demand, goal_failure, rollout
from ..sim.diagnosis import diagnose
from ..validation import ValidationResult, Verdict
from .needs import Need, NeedPlanner

KINDS = ("delete", "recount", "replace", "insert")
#: counts tried below a step's own when it used up too much
LOWER = 16
#: edits of one kind that make the plan run, validated in full in search of one without waste
CHECKED = 6


@dataclass(frozen=True)
class Edit:
    """One edit of a plan: ``kind`` at ``position`` (0-based), the new step (None for a delete)."""

    kind: str
    position: int
    step: Step | None = None

    def apply(self, steps: Sequence[Step]) -> list[Step]:
        out = list(steps)
        if self.kind == "delete":
            del out[self.position]
        elif self.kind == "insert":
            assert self.step is not None
            out.insert(self.position, self.step)
        else:
            assert self.step is not None
            out[self.position] = self.step
        return out

    def labels(self, labels: Sequence) -> list:
        """The steps' provenance after the edit: the new or changed step is the symbolic repairer's."""
        from .results import Provenance

        out = list(labels)
        if self.kind == "delete":
            del out[self.position]
        elif self.kind == "insert":
            out.insert(self.position, Provenance.REPAIRED_SYMBOLIC)
        else:
            out[self.position] = Provenance.REPAIRED_SYMBOLIC
        return out

    def describe(self, steps: Sequence[Step]) -> str:
        """``delete step 4 (craft 1 clock)``, as the repair's text says it."""
        n = self.position + 1
        if self.kind == "delete":
            return f"delete step {n} ({steps[self.position]})"
        if self.kind == "insert":
            return f"insert {self.step} before step {n}" if n <= len(steps) else f"add {self.step} at the end"
        return f"change step {n} ({steps[self.position]}) to {self.step}"


def smallest_edit(needs: NeedPlanner, steps: Sequence[Step], goal: Goal, start: State, before: ValidationResult):
    """(edit, validation of the edited plan) for the best one-step repair of an invalid plan, or None."""
    if before.valid or before.rollout is None:
        return None
    steps = tuple(steps)
    first = before.failed_step or len(steps) + 1  # 1-based; n + 1: only the goal is missing
    wanted = _needs(needs, steps, goal, before, first)
    wasteful = None
    for kind in KINDS:
        runs = [
            e
            for e in _edits(needs, kind, steps, before.trace, first, wanted)
            if _runs(needs, e.apply(steps), start, goal)
        ]
        for edit in sorted(runs, key=lambda e: abs(first - 1 - e.position))[:CHECKED]:
            checked = needs.validator.validate(_plan(edit.apply(steps)), goal=goal, start=start)
            if checked.verdict is Verdict.VALID:
                return edit, checked
            wasteful = wasteful or (edit, checked)
    return wasteful


def _plan(steps: Sequence[Step]) -> Plan:
    return Plan(steps=tuple(steps))


def _runs(needs: NeedPlanner, steps: Sequence[Step], start: State, goal: Goal) -> bool:
    """Whether every step runs from ``start`` and the end holds ``goal`` (waste allowed): a valid plan."""
    state = start
    for i, step in enumerate(steps):
        reserve = future_demand(needs.rules, steps[i + 1 :], state) if step.type is StepType.SMELT else {}
        moved = needs.sim.transition(step, state, reserve)
        if isinstance(moved, Failure):
            return False
        state = moved.state
    return goal_failure(needs.kb, goal, state) is None


def _needs(needs: NeedPlanner, steps: tuple[Step, ...], goal: Goal, before: ValidationResult, first: int) -> list:
    """(need, counts worth trying): what the first failing step, the later independent failures and the goal
    miss; each counted as it stands, and widened to every later shortage from its own step and from the
    first failure (an edit there may serve them all)."""
    found: list[tuple[Need, int]] = []
    failing = sorted({e.step for e in before.errors if e.step and e.caused_by is None} | {first})
    for number in failing:
        if number > len(steps):
            continue
        step, state = steps[number - 1], before.trace[number - 1]
        for reason in diagnose(needs.sim, step, state).reasons:
            need = needs.need_of(step, reason, state)
            if need is not None:
                found.append((need, number))
    short = goal_failure(needs.kb, goal, before.final_state)
    if short is not None and short.item:
        found.append((Need(short.item, max(1, int(short.needed or 1) - int(short.had or 0))), len(steps) + 1))
    out: dict[tuple, dict[int, None]] = {}
    at = min(first, len(steps))
    for need, number in found:
        counts = out.setdefault((need.item, need.layer), {})
        counts[need.count] = None
        if need.item is None:
            continue
        for where in dict.fromkeys((min(number, len(steps)), at)):
            if where >= 1:
                rest = list(steps[where - 1 :])
                counts[needs.shortfall(rest, before.trace[where - 1], goal, need).count] = None
    return [(Need(item, min(counts), layer=layer), tuple(counts)) for (item, layer), counts in out.items()]


def _edits(needs: NeedPlanner, kind: str, steps, trace: list[State], first: int, wanted) -> Iterator[Edit]:
    """The edits of one kind worth trying, nearest the first failure first.

    Deletes, recounts and replacements anywhere (a later craft holds back the planks a smelt would burn:
    taking it out lets the smelt run); a new step only before the first failure, the step it is for."""
    near = sorted(range(len(steps)), key=lambda i: (abs(first - 1 - i), i))
    if kind == "delete":
        yield from (Edit("delete", i) for i in near)
    elif kind == "recount":
        yield from _recounts(needs, steps, trace, near, wanted)
    elif kind == "replace":
        for i in near:
            if i < len(trace):
                state = trace[i] if i < first - 1 else _held_without(needs, steps, trace[0], i) or trace[i]
                yield from (Edit("replace", i, step) for step in _makers(needs, wanted, state))
    else:
        for i in range(min(first, len(steps) + 1) - 1, -1, -1):
            yield from (Edit("insert", i, step) for step in _makers(needs, wanted, trace[i]))


def _held_without(needs: NeedPlanner, steps, start: State, position: int) -> State | None:
    """What the agent holds before step ``position`` once that step is gone, or None if an earlier step fails.

    Past the first failure the plan's own trace is no guide: a bogus step can make an earlier smelt fail (a
    later ``craft 1 chest`` holds back the planks it would burn), and every step after it then runs short, the
    iron pickaxe a ``mine 1 gold_ore`` needs included. The step that belongs there is written from the state
    the plan reaches without the bogus one (:func:`barsym.sim.rollout`: a smelt holds back what the steps
    after it, the rest of the plan, will use)."""
    played = rollout(needs.sim, tuple(steps[:position]) + tuple(steps[position + 1 :]), start)
    if any(not outcome.ok for outcome in played.outcomes[:position]):
        return None
    return played.states()[position]


def _recounts(needs: NeedPlanner, steps, trace: list[State], near: list[int], wanted) -> Iterator[Edit]:
    """More of a needed item where a step makes it; fewer where a step used up what is missing."""
    kb = needs.kb
    items = {need.item: counts for need, counts in wanted if need.item is not None}
    for i in near:
        step = steps[i]
        if step.type.moves or not step.item or not kb.is_known(step.item):
            continue
        made = kb.resolve(step.item)
        for item, counts in items.items():
            if made in _acceptable(needs, item):
                for more in dict.fromkeys((*counts, 1)):
                    if (step.count or 0) + more <= MAX_COUNT:
                        yield Edit("recount", i, step.model_copy(update={"count": (step.count or 0) + more}))
        if (step.count or 0) > 1 and i < len(trace):  # fewer: of a step that fails, or used up what is missing
            after = needs.sim.transition(step, trace[i])
            used = set(after.consumed) if isinstance(after, Transition) else set()
            if not isinstance(after, Transition) or any(used & set(_acceptable(needs, item)) for item in items):
                for fewer in range((step.count or 1) - 1, max(0, (step.count or 1) - 1 - LOWER), -1):
                    yield Edit("recount", i, step.model_copy(update={"count": fewer}))


def _acceptable(needs: NeedPlanner, item: str) -> tuple[str, ...]:
    try:
        return needs.kb.acceptable(needs.kb.resolve(item))
    except UnknownItemError:
        return ()


def _makers(needs: NeedPlanner, wanted, state: State) -> Iterator[Step]:
    """One step for each need and each way the rule book makes it, as it can be written from ``state``."""
    kb, rules = needs.kb, needs.rules
    for need, counts in wanted:
        if need.item is None:
            if need.layer is not None and need.layer > state.layer:
                tool = rules.best_held_tool(kb.dig_down_kind, rules.dig_tier, state.count)
                yield Step(type=StepType.DIG_DOWN, tool=tool)
            elif need.layer is not None and rules.can_climb:
                yield Step(type=StepType.CLIMB_UP)
            continue
        try:
            item = kb.resolve(need.item)
        except UnknownItemError:
            continue
        for action in rules.ways(item):
            kind = StepType(action.kind)
            tool = None
            if action.tool is not None:
                tool = rules.best_held_tool(action.tool.kind, action.tool.tier, state.count)
                if tool is None:
                    continue
            for n in counts:
                yield Step(type=kind, item=need.item, count=min(n, MAX_COUNT), tool=tool)
