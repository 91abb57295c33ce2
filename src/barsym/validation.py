"""Validate a plan by playing it forward: a structured verdict, not a boolean.

A plan is *valid*, *valid with waste* (it runs but makes items it never uses,
or has steps that change nothing), or *invalid* (a step cannot run, or the goal
is missing at the end). The validator reads a full rollout
(:func:`barsym.sim.rollout`): a failed step changes nothing and the later steps
are still judged, so the result names *every* failing step (1-based) with an
error code, what was missing and the state before it, the first one foremost.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping

from .kb import KnowledgeBase, Rules, rules_for
from .model import Goal, Plan, Step, StepType
from .sim import (
    Code,
    Failure,
    Simulator,
    State,
    Transition,
    future_demand,
    goal_failure,
    rollout,
)
from .sim.wear import CODE as WEAR_CODE
from .sim.wear import copies_worn, wear_outs
from .validation_result import (  # noqa: F401 -- the result types, still importable from here
    Finding,
    ValidationResult,
    Verdict,
    summary_line,
    unusable_record,
)


def _finding(step: int | None, failure: Failure) -> Finding:
    return Finding(
        step,
        failure.code.value,
        failure.message,
        failure.item,
        failure.needed,
        failure.had,
        suggestions=failure.suggestions,
    )


class Validator:
    """Reusable: build once per knowledge base (and rule profile), validate many plans."""

    def __init__(self, kb: KnowledgeBase, rules: Rules | str | None = None):
        self.kb = kb
        self.rules = rules_for(kb, rules)
        self.sim = Simulator(kb, self.rules)

    def validate(self, plan: Plan, goal: Goal | None = None, start: State | None = None) -> ValidationResult:
        goal = goal or plan.default_goal()
        played = rollout(self.sim, plan.steps, start or State())
        result = ValidationResult(
            plan.source, goal, Verdict.VALID, trace=played.states(), rollout=played, rules=self.rules
        )
        made_by_failed: list[tuple[int, Step]] = []
        own: dict[int, tuple[Failure, ...]] = {}
        forced_end = played.final
        if played.failures:  # only a plan that fails is played again (and only then is the module loaded)
            from .sim.diagnosis import own_reasons

            own, forced_end = own_reasons(self.sim, played)
        for outcome in played.failures:
            # what the step misses by itself (the plan played on as if every failed step had run), then,
            # unless it is among those, why it fails here: a knock-on of an earlier failed step
            mine = own.get(outcome.index, ())
            result.errors += [_finding(outcome.index, reason) for reason in mine]
            if not any(r.code is outcome.failure.code and r.item == outcome.failure.item for r in mine):
                cause = self._cause(outcome.failure, made_by_failed)
                if cause is None and mine == () and made_by_failed:
                    cause = made_by_failed[-1][0]  # it runs once the failed steps before it have run
                result.errors.append(dataclasses.replace(_finding(outcome.index, outcome.failure), caused_by=cause))
            made_by_failed.append((outcome.index, outcome.step))
        if result.errors:
            short = self.goal_failure(goal, forced_end) if goal is not None else None
            said = {(e.code, e.item) for e in result.errors}  # an unknown goal item is named once, at its step
            if short is not None and (short.code.value, short.item) not in said:
                result.errors.append(_finding(None, short))  # missing even had every failed step run: its own
            result.failed_step = result.errors[0].step
            result.verdict = Verdict.INVALID
            return result
        if goal is not None:
            missing = self.goal_failure(goal, played.final)
            if missing is not None:
                result.errors.append(
                    Finding(
                        None,
                        missing.code.value,
                        missing.message,
                        missing.item,
                        missing.needed,
                        missing.had,
                        suggestions=missing.suggestions,
                    )
                )
                result.verdict = Verdict.INVALID
                return result
        worn = [
            Finding(w.step, WEAR_CODE, w.message(), w.tool, w.uses, w.life, count=w.copies_short)
            for w in wear_outs(self.rules, played)
        ]
        if worn and self.rules.profile.durability:  # --rules durable: a tool worn out is a failed plan
            result.errors = worn
            result.failed_step = worn[0].step
            result.verdict = Verdict.INVALID
            return result
        transitions = [o.transition for o in played.outcomes]
        result.warnings = self._waste(plan, transitions, goal, played.start.layer, copies_worn(self.rules, played))
        if result.warnings:
            result.verdict = Verdict.WASTEFUL
        result.warnings += worn  # the deterministic world ignores wear (as BAR's plans do): a warning, no verdict
        return result

    def _cause(self, failure: Failure, failed: list[tuple[int, Step]]) -> int | None:
        """The latest earlier failed step whose product is what this failure misses (a knock-on failure)."""
        kb = self.kb
        wanted = list(failure.accepts) or [n for n in (failure.item or "").lstrip("#").split("|") if n]
        for index, step in reversed(failed):
            if step.type is StepType.DIG_DOWN:
                if failure.code is Code.WRONG_LAYER:
                    return index
                continue
            if not step.item or not kb.is_known(step.item):
                continue
            made = kb.resolve(step.item)
            if failure.code is Code.INSUFFICIENT_FUEL and self.rules.fuel_value(made) > 0:
                return index
            for name in wanted:
                if made == name or (kb.is_known(name) and made in kb.acceptable(kb.resolve(name))):
                    return index
                tool, named = self.rules.tool(made), self.rules.tool(name)
                if (
                    failure.code in (Code.MISSING_TOOL, Code.TOOL_TIER_TOO_LOW)
                    and tool is not None
                    and ((named is not None and named.kind == tool.kind) or name.endswith("_" + tool.kind))
                ):
                    return index
        return None

    # ---- goal and demand ----------------------------------------------------------
    def goal_failure(self, goal: Goal, state: State) -> Failure | None:
        """Why ``state`` does not hold ``goal`` (None when it does); also used to score a plan's end."""
        return goal_failure(self.kb, goal, state)

    def future_demand(self, steps: tuple[Step, ...], state: State) -> Mapping[str, int]:
        """Items later crafts and smelts will consume (see :func:`barsym.sim.future_demand`)."""
        return future_demand(self.rules, steps, state)

    # ---- waste ----------------------------------------------------------------------
    def _waste(
        self,
        plan: Plan,
        transitions: list[Transition],
        goal: Goal | None,
        start_layer: int = 0,
        worn: Mapping[str, int] | None = None,
    ) -> list[Finding]:
        """Items made and never used; a tool counts as used once, or as often as its wear uses up a copy (``worn``)."""
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
            use = used[item] + ((worn or {}).get(item, 1) if item in as_tool else 0) + keep
            extra = asked - use
            if extra <= 0:
                continue
            if use == 0:
                for index in producers[item]:
                    findings.append(
                        Finding(
                            index,
                            "redundant_step",
                            f"step makes {plan.steps[index - 1].count} {item}, which no later step uses",
                            item=item,
                            count=plan.steps[index - 1].count,
                        )
                    )
            else:
                findings.append(
                    Finding(
                        producers[item][-1],
                        "waste",
                        f"{asked} {item} requested, only {use} used: {extra} never used",
                        item=item,
                        count=extra,
                    )
                )
        findings.extend(self._redundant_digs(plan, transitions, start_layer))
        findings.sort(key=lambda f: (f.step or 0, f.code))
        return findings

    def _redundant_digs(self, plan: Plan, transitions: list[Transition], start_layer: int = 0) -> list[Finding]:
        """Layer moves (dig down, climb up) the plan could drop with every gathering step still on its layer.

        Moves are tried from the last one back, replaying the layers each time,
        so of two digs where one is enough only the second is flagged (the first
        is what lets the gathering happen).
        """
        found = []
        gathers = []  # (plan position, layers its resource is found on)
        for index, (step, move) in enumerate(zip(plan.steps, transitions), start=1):
            layers = self.rules.step_layers(step) if move.item else None
            if layers:
                gathers.append((index, layers))

        def fine(dropped: set[int]) -> bool:
            layer, at = start_layer, {}
            for index, step in enumerate(plan.steps, start=1):
                if index not in dropped:
                    layer = self.rules.next_layer(layer, step.type.value)
                at[index] = layer
            return all(at[index] in layers for index, layers in gathers)

        dropped: set[int] = set()
        for index in range(len(plan.steps), 0, -1):
            step, move = plan.steps[index - 1], transitions[index - 1]
            if not step.type.moves:
                continue
            if move.notes:
                found.append(Finding(index, "redundant_step", move.notes[0]))
                dropped.add(index)
                continue
            if fine(dropped | {index}):
                dropped.add(index)
                what = "deeper" if step.type is StepType.DIG_DOWN else "higher"
                found.append(
                    Finding(
                        index,
                        "redundant_step",
                        f"no later step needs the {what} layer this "
                        f"{'dig down' if what == 'deeper' else 'climb up'} reaches",
                    )
                )
        moves = [i for i, step in enumerate(plan.steps, start=1) if step.type.moves and i not in dropped]
        for a, b in zip(moves, moves[1:]):  # a move the next one undoes, nothing between them needing its layer
            if a in dropped or plan.steps[a - 1].type is plan.steps[b - 1].type or not fine(dropped | {a, b}):
                continue
            dropped |= {a, b}
            what = "climb up" if plan.steps[a - 1].type is StepType.CLIMB_UP else "dig down"
            message = f"the {what} at step {a} and this step undo each other: no step between them needs that layer"
            found += [Finding(a, "redundant_step", f"step {b} undoes this {what}: no step between needs its layer")]
            found.append(Finding(b, "redundant_step", message))
        return found
