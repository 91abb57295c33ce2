"""The forward walk over one window: the machinery both repairers share.

From the state before the start anchor, the walk builds the window's steps
one at a time until the *target* can run: the kept steps from the end anchor
up to the next window (and, for a window that reaches the end of the plan,
the goal). At each point the rule book and the simulator say which steps are
worth taking, the **candidates**, each applicable in the current state:

- ``keep``: the window's next original step, when it runs here;
- ``move``: a later original step of the window that makes what the first
  blocked step needs (a crafting table put after its first use moves back);
- ``plan``: the first step of the need planner's plan (the symbolic planner's,
  or the model's with ``--repair-needs model``), from the current
  state, for what the first blocked step needs (widened to every later
  shortage of the same item), leaving alone what the rest will consume.

A **chooser** picks one; the simulator plays it and the walk goes on. The
symbolic repairer prefers keep, then move, then plan, which inserts what is
missing right before the step that needs it and keeps the user's steps
otherwise; the LLM repairer asks the model (a forward chain of thought over
the real state). An original step that no state could run (an unknown item,
an action that cannot make it) is dropped; one whose need cannot be planned
is dropped too. Adjacent steps of the same action, one of them new, are fused
where the result still runs (``mine 2 logs`` + ``mine 2 logs``: ``mine 4 logs``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from ..kb import UnknownItemError
from ..model import MAX_COUNT, Goal, Step, StepType
from ..sim import Failure, State, future_demand, rollout
from .needs import Need, NeedPlanner
from .walk_types import KEPT, Candidate, Chooser, Origin, Taken, WalkState, Window, WindowRepair

__all__ = [
    "KEPT",
    "Candidate",
    "Chooser",
    "Origin",
    "SymbolicChooser",
    "Taken",
    "WalkState",
    "Window",
    "WindowRepair",
    "walk",
]


class SymbolicChooser:
    """Keep the user's step where it runs; else move a later one; else the planner's step.

    Keeping (or widening) goes first unless it makes the need dearer: a kept smelt that
    burns the planks a missing stick was to come from would send the plan
    back up to the surface for logs, so the stick is made first.
    """

    label = "repaired-symbolic"
    order = (Origin.SKIP, Origin.WIDEN, Origin.KEEP, Origin.RETRO, Origin.MOVE, Origin.PLAN)

    def choose(self, window: Window, walk: WalkState, candidates: Sequence[Candidate]) -> int | None:
        planned = [c.cost for c in candidates if c.origin is Origin.PLAN]

        def rank(i: int) -> tuple[int, int]:
            c = candidates[i]
            dearer = c.origin in (Origin.KEEP, Origin.WIDEN) and planned and c.cost > min(planned)
            return (len(self.order) if dearer else self.order.index(c.origin), i)

        return min(range(len(candidates)), key=rank, default=None)


def walk(window: Window, needs: NeedPlanner, chooser: Chooser, budget: int | None = None) -> WindowRepair:
    """Regenerate ``window`` with ``chooser`` (see the module docstring)."""
    budget = budget if budget is not None else 2 * len(window.original) + 40
    at = WalkState(window.before, tuple(window.original), list(range(len(window.original))))
    dropped: list[Step] = []
    seen = {(window.before, len(at.left))}
    climbed_for: list[str] = []
    note, done = "", False
    for _ in range(budget + len(window.original)):
        rest = at.remaining + list(window.target)
        block = needs.blocker(rest, at.state, window.goal, window.after)
        if block is None and not at.left:
            done = True
            break
        if block is not None and block.need is None and block.position < len(at.left):
            dropped.append(at.use(block.position)[0])  # no state runs it: the step itself is wrong
            continue
        raw = _candidates(needs, at, rest, block, window)
        candidates = _fresh(needs, at, raw, seen, rest + list(window.after))
        if raw and not candidates:
            note = "every step that applies leads back to a state already passed: the walk goes in circles"
            break
        if not candidates:
            if at.left and block is not None and block.position == 0:
                dropped.append(at.use(0)[0])  # blocked, and what it needs cannot be planned
                continue
            done, note = _stuck(block, window, at)
            break
        if len(at.done) >= budget:
            note = f"gave up after {budget} steps"
            break
        pick = chooser.choose(window, at, candidates)
        if pick is None:
            note = "the repairer gave up"
            break
        chosen = candidates[pick]
        climbed_for += _climbed_for(chosen, at)
        if chosen.origin is Origin.SKIP:
            dropped.append(at.use(chosen.index or 0)[0])
        else:
            _take(needs, at, chosen, chooser.label, window, rest)
        seen.add((at.state, len(at.left)))
    steps, labels, kept_from = _fuse(
        needs, at.taken, [t.label for t in at.done], [t.kept_from for t in at.done], window
    )
    return WindowRepair(
        window,
        tuple(steps),
        tuple(labels),
        tuple(kept_from),
        done,
        chooser.label,
        tuple(dropped),
        note,
        tuple(dict.fromkeys(climbed_for)),
    )


def _stuck(block, window: Window, at: WalkState) -> tuple[bool, str]:
    """(done, note) when no candidate is left: done when only a target step no state runs is in the way."""
    if block is not None and block.need is None and not at.left:
        return True, f"kept step {window.pair.end + block.position} cannot run in any state: {block.failure.message}"
    return False, f"nothing can be done for: {block.failure.message}" if block else "no step applies"


def _climbed_for(chosen: Candidate, at: WalkState) -> list[str]:
    """What a planned climb up is for: its need and the first thing gathered up there; and the plan followed
    for a need goes on only while nothing else changes the state."""
    found = []
    if chosen.step.type is StepType.CLIMB_UP and chosen.origin is Origin.PLAN and chosen.need:
        found.append(chosen.need)
        above = next((p for p in at.pending[1:] if not p.type.moves), None)
        if above is not None and above.item:
            found.append(above.item)
    if chosen.origin is Origin.PLAN:
        at.pending = at.pending[1:] if at.pending and at.pending[0] == chosen.step else []
    else:
        at.pending, at.pending_for = [], None
    return found


def _take(needs: NeedPlanner, at: WalkState, chosen: Candidate, label: str, window: Window, rest: list[Step]) -> None:
    """Play ``chosen``: a widened earlier step (retro), or a kept, widened, moved or planned step."""
    if chosen.origin is Origin.RETRO:  # an earlier step of the window, widened (and what it starved)
        at.done = [old if old.step == new else Taken(new, label) for old, new in zip(at.done, chosen.redo)]
        at.state = needs.play(at.taken, window.before, rest + list(window.after))
        return
    source = at.use(chosen.index)[1] if chosen.index is not None else None  # keep, widen, move: used up
    after = at.remaining + list(window.target)
    at.state = _play(needs, chosen.step, at.state, after + list(window.after))
    kept = chosen.origin is Origin.KEEP  # a widened step is a new count
    at.done.append(Taken(chosen.step, KEPT if kept else label, source if kept else None))


def _fresh(needs: NeedPlanner, at: WalkState, candidates: list[Candidate], seen: set, later: list[Step]):
    """Leave out candidates that lead back to a state the walk was in (a climb undoing a dig).

    With none left the walk stops: it would go round in circles.
    """

    def revisits(c: Candidate) -> bool:
        if c.origin in (Origin.RETRO, Origin.SKIP):
            return False
        left = len(at.remaining) - (c.index is not None)
        return (_play(needs, c.step, at.state, later), left) in seen

    return [c for c in candidates if not revisits(c)]


def _candidates(needs: NeedPlanner, at: WalkState, rest: list[Step], block, window: Window) -> list[Candidate]:
    goal = window.goal
    out: list[Candidate] = []
    keep = bool(at.remaining) and (block is None or block.position > 0)
    if keep:
        out.append(Candidate(at.remaining[0], Origin.KEEP, 0, "the next step of the plan"))
        tail = list(window.after)
        if _unneeded(needs, at.remaining[0], at.state, rest, window.task, tail):
            out.append(Candidate(at.remaining[0], Origin.SKIP, 0, "the plan does no worse without it"))
        wider = _widen(needs, at, rest, window)
        if wider is not None:
            out.append(wider)
    if block is None or block.need is None:
        return out
    need = block.need
    where = f"step {block.position + 1} of what is left" if block.position < len(rest) else "the goal"
    why = f"{where} needs {need}"
    tail = list(window.after)
    wanted = needs.shortfall(rest, at.state, goal, need, tail)
    if not keep:
        redo = _widen_back(needs, at.taken, window.before, wanted, rest + tail)
        if redo is not None:
            changed = [new for old, new in zip(at.taken, redo) if old != new]
            out.append(
                Candidate(changed[-1], Origin.RETRO, None, f"{why}: an earlier step makes more", redo=tuple(redo))
            )
    for j, step in enumerate(at.remaining[1:], start=1):
        if _makes(needs, step, need) and _runs(needs, step, at.state, rest[:j] + rest[j + 1 :] + tail):
            out.append(Candidate(step, Origin.MOVE, j, why))
    if any(c.origin in (Origin.MOVE, Origin.RETRO) for c in out):
        return out
    follow = at.pending if at.pending and at.pending_for == need.item else None
    for item in (wanted, need):
        planned = follow or needs.steps_for(item, at.state, rest, tail)
        if not planned or not _runs(needs, planned[0], at.state, rest + tail):
            follow = None
            continue
        at.pending, at.pending_for = list(planned), need.item  # followed step by step while the need lasts
        if keep and planned[0].type.moves:
            break  # changing layers for a later step while the next one runs here only undoes itself
        out.append(Candidate(planned[0], Origin.PLAN, None, f"{where} needs {item}", cost=len(planned), need=item.item))
        for i, c in enumerate(out):  # what waiting would cost: the need as it stands after the next step
            if c.origin in (Origin.KEEP, Origin.WIDEN):
                out[i] = dataclasses.replace(
                    c, cost=_cost_after(needs, c.step, at.state, rest[1:], goal, tail, item.item)
                )
        break
    return out


def _cost_after(
    needs: NeedPlanner, step: Step, state: State, rest: list[Step], goal, tail: list[Step], item: str | None
) -> float:
    """Steps still needed for ``item`` after taking ``step`` (0 when that need is gone; inf if it cannot be met)."""
    after = _play(needs, step, state, rest + tail)
    block = needs.blocker(rest, after, goal, tail)
    if block is None or block.need is None or block.need.item != item:
        return 0
    planned = needs.steps_for(needs.shortfall(rest, after, goal, block.need, tail), after, rest, tail)
    return math.inf if planned is None else len(planned)


def _widen_back(
    needs: NeedPlanner, taken: list[Step], before: State, need: Need, later: list[Step], depth: int = 5
) -> list[Step] | None:
    """``taken`` with its last step that makes the needed item widened, and what that starves widened in turn.

    Widening ``smelt 1 iron_ingot`` to 3 needs 2 more iron ore: the last
    earlier step that mines it is widened too, and so on, a few levels deep.
    None when no earlier step of the window makes what is needed, or the
    widened steps do not run.
    """
    if need.item is None or not taken:
        return None
    trial = list(taken)
    item, amount = need.item, need.count
    for _ in range(depth):
        j = next(
            (
                i
                for i in range(len(trial) - 1, -1, -1)
                if _makes(needs, trial[i], Need(item, amount)) and not trial[i].type.moves
            ),
            None,
        )
        if j is None:
            return None
        played = rollout(needs.sim, tuple(trial) + tuple(later), before)
        wider = _more(trial[j], played.outcomes[j], amount)
        if wider is None:
            return None
        trial[j] = wider
        played = rollout(needs.sim, tuple(trial) + tuple(later), before)
        failed = next((o for o in played.outcomes[: len(trial)] if not o.ok), None)
        if failed is None:
            return trial
        starved = needs.need_of(failed.step, failed.failure, failed.before)
        if starved is None or starved.item is None:
            return None
        item, amount = starved.item, starved.count
    return None


def _widen(needs: NeedPlanner, at: WalkState, rest: list[Step], window: Window) -> Candidate | None:
    """The next step with a larger count, when the rest of the whole plan is short of what it makes.

    A cut count (``craft 10 planks`` where 21 are used) is fixed where it was
    cut, by one new count, rather than by new steps wherever the item runs
    out, perhaps underground at the end of the plan.
    """
    step = at.remaining[0]
    if step.type.moves or not step.item or not needs.kb.is_known(step.item):
        return None
    item = needs.kb.resolve(step.item)
    later = rest[1:] + list(window.after)
    wider, added = step, 0
    for _ in range(3):  # settle in a few tries
        played = rollout(needs.sim, (wider,) + tuple(later), at.state)
        if not played.outcomes[0].ok:
            break
        short = needs.later_shortage(later, played.outcomes[0].after, window.task, item)
        trial = _more(wider, played.outcomes[0], short) if short else None
        if trial is None or not _runs(needs, trial, at.state, later):
            break
        wider, added = trial, added + short
    if not added:
        return None
    return Candidate(wider, Origin.WIDEN, 0, f"later steps are short of {added} {item}")


def _unneeded(needs: NeedPlanner, step: Step, state: State, rest: list[Step], task: Goal, tail: list[Step]) -> bool:
    """The next step makes something nothing after it needs, even once every other shortage is met.

    Both must hold: the rest does no worse without it, and the rest, its
    other shortages topped up, is short of none of its item. A producer whose
    consumer fails for another reason (no furnace yet) is still needed.
    """
    if step.type.moves or not step.item or not needs.kb.is_known(step.item):
        return False
    if not needs.without_is_no_worse(rest, state, task, tail):
        return False
    return needs.later_shortage(rest[1:], state, task, needs.kb.resolve(step.item), tail) == 0


def _more(step: Step, outcome, amount: int) -> Step | None:
    """``step`` asked for ``amount`` more units than it makes now (a craft makes whole batches: 10 planks are 12)."""
    made = step.count or 0
    if outcome.ok and outcome.transition.item is not None:
        made = max(made, outcome.transition.produced.get(outcome.transition.item, made))
    count = made + amount
    return step.model_copy(update={"count": count}) if count <= MAX_COUNT else None


def _makes(needs: NeedPlanner, step: Step, need: Need) -> bool:
    if need.item is None:
        return step.type is (StepType.DIG_DOWN if (need.layer or 0) > 0 else StepType.CLIMB_UP)
    try:
        return step.item is not None and needs.kb.resolve(step.item) in needs.kb.acceptable(need.item)
    except UnknownItemError:
        return False


def _reserve(needs: NeedPlanner, step: Step, state: State, later: Sequence[Step]):
    return future_demand(needs.rules, later, state) if step.type is StepType.SMELT else {}


def _runs(needs: NeedPlanner, step: Step, state: State, later: Sequence[Step]) -> bool:
    return not isinstance(needs.sim.transition(step, state, _reserve(needs, step, state, later)), Failure)


def _play(needs: NeedPlanner, step: Step, state: State, later: Sequence[Step]) -> State:
    result = needs.sim.transition(step, state, _reserve(needs, step, state, later))
    assert not isinstance(result, Failure), f"a candidate that does not run: {step}: {result.message}"
    return result.state


def _fuse(
    needs: NeedPlanner, steps: list[Step], labels: list[str], kept_from: list[int | None], window: Window
) -> tuple[list[Step], list[str], list[int | None]]:
    """Merge adjacent same-action steps (one of them new) where the window still runs as well."""

    def quality(candidate: list[Step]) -> int | None:
        block = needs.blocker(candidate + list(window.target), window.before, window.goal, window.after)
        return None if block is None else block.position - len(candidate)

    base = quality(steps)
    i = 0
    while i + 1 < len(steps):
        a, b = steps[i], steps[i + 1]
        if (
            a.same_action(b)
            and not a.type.moves
            and (labels[i] != KEPT or labels[i + 1] != KEPT)
            and (a.count or 0) + (b.count or 0) <= MAX_COUNT
        ):
            fused = a.model_copy(update={"count": (a.count or 0) + (b.count or 0)})
            trial = steps[:i] + [fused] + steps[i + 2 :]
            got = quality(trial)
            if got is None or got == base:
                new = labels[i] if labels[i] != KEPT else labels[i + 1]
                steps, labels = trial, labels[:i] + [new] + labels[i + 2 :]
                kept_from = kept_from[:i] + [None] + kept_from[i + 2 :]
                continue
        i += 1
    return steps, labels, kept_from
