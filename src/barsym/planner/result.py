"""What every planner returns: the plan, its decomposition tree, and how its steps depend on each other.

:class:`PlanResult` is shared by BAR's backward planner, the inventory search
and the LLM planners, so the commands, the evaluation and any later module
(state consistency, memory) read one shape whoever planned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Goal, Plan, Step
from ..validation import ValidationResult
from .decomposer import Decomposition
from .stats import PlanStats


@dataclass
class GoalNode:
    """One goal in the decomposition tree: answered by a step, or covered."""

    id: int
    goal: Goal
    role: str  # "goal" for the root, else the role in its parent's step
    parent: int | None = None
    index: int = 0  # position among the parent's subgoals
    decomposition: Decomposition | None = None
    covered: str | None = None  # why no step was needed
    unanswered: str | None = None  # why the decomposer gave no step (keep_invalid planners only)
    from_start: int = 0  # units of the goal (as first asked) taken from the start inventory
    held: bool = False  # covered by the start state alone: no planned step provides it
    children: list[int] = field(default_factory=list)
    step_index: int | None = None  # position of its (fused) step in the final plan

    def to_dict(self, nodes: list["GoalNode"]) -> dict:
        out: dict = {"goal": {"item": self.goal.item, "count": self.goal.count}, "role": self.role}
        if self.from_start:
            out["from_start"] = self.from_start
        if self.decomposition is not None:
            d = self.decomposition
            out["step"] = str(d.step)
            out["provenance"] = d.provenance
            if d.note:
                out["note"] = d.note
            if self.step_index is not None:
                out["plan_step"] = self.step_index + 1
        if self.covered:
            out["covered"] = self.covered
        if self.unanswered:
            out["unanswered"] = self.unanswered
        if self.children:
            out["subgoals"] = [nodes[c].to_dict(nodes) for c in self.children]
        return out


@dataclass
class PlanResult:
    goal: Goal
    plan: Plan
    nodes: list[GoalNode]
    sources: list[list[int]]  # per plan step, the tree nodes fused into it
    needs: list[tuple[int, int, str]]  # (before, after, role): plan positions that must keep their order
    raw_steps: tuple[Step, ...]  # BAR's stack popped, before fusion
    validation: ValidationResult
    planner: str
    decomposer: str
    stats: PlanStats = field(default_factory=PlanStats)  # seconds, counters, a section per module

    def provenance(self, position: int) -> list[str]:
        if not self.sources[position]:
            return ["layer"]  # a climb up (or dig down again) the planner put in for a gathering step's layer
        return sorted({self.nodes[n].decomposition.provenance for n in self.sources[position]})

    def serves(self, position: int) -> list[str]:
        """What this step is for: the items of the steps it feeds ("fuel for X"), or "goal"."""
        names = ["goal"] if position == len(self.plan) - 1 else []
        if not self.sources[position]:  # an inserted climb or dig: for the gathering step it leads to
            following = next((s for s in self.plan.steps[position + 1 :] if not s.type.moves), None)
            return [following.item] if following is not None and following.item else names
        for before, after, role in self.needs:
            step = self.plan.steps[after]
            if before != position or role in ("surface", "shared") or (role == "layer" and step.type.moves):
                continue  # an order kept, not a use: gathering before the move that leaves its layer
            label = step.item if step.item else "dig down"
            if role == "fuel":
                label = f"fuel for {label}"
            if label not in names:
                names.append(label)
        return names

    def independent(self, a: int, b: int) -> bool:
        """True when no need links plan steps ``a`` and ``b`` directly."""
        return not any({before, after} == {a, b} for before, after, _ in self.needs)

    def tree(self) -> dict:
        return self.nodes[0].to_dict(self.nodes)

    def to_text(self) -> str:
        """The plan as ``barsym plan`` prints it (:func:`~barsym.planner.render.plan_text`)."""
        from .render import plan_text

        return plan_text(self)

    def to_dict(self) -> dict:
        """The plan as plain data, as ``barsym plan --format json`` writes it (without the exit status)."""
        from .render import plan_record

        return plan_record(self)
