"""Validate a plan by playing it forward: a structured verdict, not a boolean.

A plan is *valid*, *valid with waste* (it runs but makes items it never uses,
or has steps that change nothing), or *invalid* (a step cannot run, or the goal
is missing at the end). For an invalid plan the result names the first failing
step (1-based), an error code, what was missing, and the state before it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum

from .kb import KnowledgeBase, UnknownItemError
from .model import Goal, Plan, Step, StepType
from .sim import Code, Failure, Simulator, State, Transition


class Verdict(str, Enum):
    VALID = "valid"
    WASTEFUL = "valid with waste"
    INVALID = "invalid"


@dataclass(frozen=True)
class Finding:
    """An error or warning about one step (``step`` is 1-based; None = the plan)."""

    step: int | None
    code: str
    message: str
    item: str | None = None
    needed: float | int | None = None
    had: float | int | None = None
    count: int | None = None
    suggestions: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        out = {"step": self.step, "code": self.code, "message": self.message}
        for key in ("item", "needed", "had", "count"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.suggestions:
            out["suggestions"] = list(self.suggestions)
        return out


@dataclass
class ValidationResult:
    source: str | None
    goal: Goal | None
    verdict: Verdict
    errors: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)
    trace: list[State] = field(default_factory=list)  # trace[0] is the start; trace[i] follows step i
    failed_step: int | None = None

    @property
    def valid(self) -> bool:
        return self.verdict is not Verdict.INVALID

    @property
    def state_before_failure(self) -> State | None:
        return self.trace[self.failed_step - 1] if self.failed_step else None

    @property
    def final_state(self) -> State:
        return self.trace[-1]

    def to_dict(self) -> dict:
        out = {
            "file": self.source,
            "goal": None if self.goal is None else {"item": self.goal.item, "count": self.goal.count},
            "valid": self.valid,
            "verdict": self.verdict.value,
            "errors": [e.to_dict() for e in self.errors],
            "warnings": [w.to_dict() for w in self.warnings],
            "steps_run": len(self.trace) - 1,
        }
        before = self.state_before_failure
        if before is not None:
            out["state_before_failure"] = before.to_dict()
        out["final_state"] = self.final_state.to_dict()
        return out


def _finding(step: int | None, failure: Failure) -> Finding:
    return Finding(step, failure.code.value, failure.message, failure.item, failure.needed, failure.had,
                   suggestions=failure.suggestions)


class Validator:
    """Reusable: build once per knowledge base, validate many plans."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.sim = Simulator(kb)

    def validate(self, plan: Plan, goal: Goal | None = None, start: State | None = None) -> ValidationResult:
        goal = goal or plan.default_goal()
        state = start or State()
        result = ValidationResult(plan.source, goal, Verdict.VALID, trace=[state])
        transitions: list[Transition] = []
        for index, step in enumerate(plan.steps, start=1):
            reserve = self.future_demand(plan.steps[index:], state) if step.type is StepType.SMELT else {}
            outcome = self.sim.transition(step, state, reserve)
            if isinstance(outcome, Failure):
                result.errors.append(_finding(index, outcome))
                result.failed_step = index
                result.verdict = Verdict.INVALID
                return result
            transitions.append(outcome)
            state = outcome.state
            result.trace.append(state)
        if goal is not None:
            missing = self._goal_failure(goal, state)
            if missing is not None:
                result.errors.append(Finding(None, missing.code.value, missing.message, missing.item,
                                             missing.needed, missing.had, suggestions=missing.suggestions))
                result.verdict = Verdict.INVALID
                return result
        result.warnings = self._waste(plan, transitions, goal)
        if result.warnings:
            result.verdict = Verdict.WASTEFUL
        return result

    # ---- goal and demand ----------------------------------------------------------
    def _goal_failure(self, goal: Goal, state: State) -> Failure | None:
        try:
            item = self.kb.resolve(goal.item)
        except UnknownItemError as exc:
            return Failure(Code.UNKNOWN_ITEM, f"goal: {exc}", item=goal.item, suggestions=tuple(exc.suggestions))
        have = state.count_any(self.kb.acceptable(item))
        if have >= goal.count:
            return None
        return Failure(Code.GOAL_NOT_REACHED, f"the plan ends with {have} {item}; the goal needs {goal.count}",
                       item=item, needed=goal.count, had=have)

    def future_demand(self, steps: tuple[Step, ...], state: State) -> Mapping[str, int]:
        """Items later crafts and smelts will consume, charged to what is held now.

        Fuel must not be taken from these: the plan budgeted them for a later step.
        """
        demand: dict[str, int] = defaultdict(int)
        for step in steps:
            if step.type not in (StepType.CRAFT, StepType.SMELT) or step.count is None:
                continue
            try:
                item = self.kb.resolve(step.item or "")
            except UnknownItemError:
                continue
            if step.type is StepType.CRAFT:
                recipes = self.kb.crafts.get(item)
                if not recipes:
                    continue
                recipe = recipes[0]
                batches = -(-step.count // recipe.count)
                needs = [(i.accepts, batches * i.count) for i in recipe.ingredients]
            else:
                recipes = self.kb.smelts.get(item)
                if not recipes:
                    continue
                needs = [(recipes[0].input.accepts, step.count)]
            for accepts, n in needs:
                held = next((a for a in accepts if state.count(a) > 0), accepts[-1])
                demand[held] += n
        return demand

    # ---- waste ----------------------------------------------------------------------
    def _waste(self, plan: Plan, transitions: list[Transition], goal: Goal | None) -> list[Finding]:
        requested: dict[str, int] = defaultdict(int)
        producers: dict[str, list[int]] = defaultdict(list)
        used: dict[str, int] = defaultdict(int)
        as_tool: set[str] = set()
        for index, (step, move) in enumerate(zip(plan.steps, transitions), start=1):
            if move.item is not None and step.count is not None:
                requested[move.item] += step.count
                producers[move.item].append(index)
            for name, n in move.consumed.items():
                used[name] += n
            as_tool |= move.used
        goal_item = None
        if goal is not None:
            goal_item = self.kb.resolve(goal.item)
        findings: list[Finding] = []
        for item, asked in requested.items():
            keep = 0
            if goal_item is not None and item in self.kb.acceptable(goal_item):
                keep = goal.count if goal else 0
            use = used[item] + (1 if item in as_tool else 0) + keep
            extra = asked - use
            if extra <= 0:
                continue
            if use == 0:
                for index in producers[item]:
                    findings.append(Finding(index, "redundant_step",
                                            f"step makes {plan.steps[index - 1].count} {item}, which no later step uses",
                                            item=item, count=plan.steps[index - 1].count))
            else:
                findings.append(Finding(producers[item][-1], "waste",
                                        f"{asked} {item} requested, only {use} used: {extra} never used",
                                        item=item, count=extra))
        findings.extend(self._redundant_digs(plan, transitions))
        findings.sort(key=lambda f: (f.step or 0, f.code))
        return findings

    def _redundant_digs(self, plan: Plan, transitions: list[Transition]) -> list[Finding]:
        found = []
        for index, (step, move) in enumerate(zip(plan.steps, transitions), start=1):
            if step.type is not StepType.DIG_DOWN:
                continue
            if move.notes:
                found.append(Finding(index, "redundant_step", move.notes[0]))
                continue
            needed = False
            for later, later_move in zip(plan.steps[index:], transitions[index:]):
                source = self.kb.sources.get(later_move.item or "")
                if later.type in (StepType.MINE, StepType.KILL) and source is not None:
                    if later_move.state.layer - 1 not in source.layers:
                        needed = True
                        break
            if not needed:
                found.append(Finding(index, "redundant_step", "no later step needs the deeper layer this dig down reaches"))
        return found
