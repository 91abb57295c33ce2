"""A plan result as a person reads it and as JSON: what ``barsym plan`` prints, for API users too.

The text is the numbered steps with who answered each and what it is for,
the validator's verdict, then a line or two per module that ran (the model's
counters, then each stats section's own lines); the record is the same
content as plain data. One place writes both, so ``barsym plan`` and
:meth:`~barsym.planner.result.PlanResult.to_text` cannot drift apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..bar_io import step_to_record
from ..sim import StepUse
from .stats import PlanStats

if TYPE_CHECKING:
    from .result import PlanResult

#: how the few-shot prefix of the prompt was made ready (LLMStats.prefix)
PRIMED = {"disk": "loaded from the cache", "evaluated": "evaluated", "memory": "already in memory"}


def plan_text(result: PlanResult) -> str:
    """The plan as ``barsym plan`` prints it: a header, the numbered steps, why it cannot run, the modules' lines."""
    goal, validation = result.goal, result.validation
    lines = [
        f"Plan for {goal.count} {goal.item}: {len(result.plan)} steps, planner {result.planner}, "
        f"validator: {validation.verdict.value}"
    ]
    start = validation.trace[0] if validation.trace else None
    if start is not None and (start.inventory or start.layer):
        lines.append(f"  from the start state: {start.describe()}")
    if not result.plan.steps:
        lines.append(
            "  nothing to do: the start inventory already holds the goal"
            if validation.valid
            else "  no steps: the planner wrote no usable plan"
        )
    width = max((len(str(s)) for s in result.plan.steps), default=0)
    uses = validation.uses()
    for i, step in enumerate(result.plan.steps):
        serves = ", ".join(result.serves(i))
        purpose = f" for {serves}" if serves else ""  # forward planners (deps, cot) know only the last step's
        tags = result.provenance(i) + ([pinned(uses[i])] if step.recipe is not None and i < len(uses) else [])
        lines.append(f"{i + 1:>3}. {str(step):<{width}}  [{', '.join(t for t in tags if t)}]{purpose}")
    if not validation.valid:
        lines.append(f"  cannot run: {validation.failure()}")
    unanswered = [n for n in result.nodes if n.unanswered]
    lines += [f"  no step for {node.goal}: {node.unanswered}" for node in unanswered[:5]]
    if len(unanswered) > 5:
        lines.append(f"  ... and {len(unanswered) - 5} more goals without a step")
    trace = getattr(result, "trace", None)  # deps' rounds, cot's inventories
    if trace is not None:
        lines += trace.lines()
    lines += llm_lines(result.stats) + result.stats.section_lines()  # each section's own lines
    return "\n".join(lines) + "\n"


def pinned(use: StepUse | None) -> str:
    """A step's pinned recipe as the text shows it: ``recipe 1: 9 iron_nugget`` (a batch's ingredients)."""
    if use is None or use.recipe is None:
        return ""
    inputs = ", ".join(f"{n} {name}" for name, n in use.per_batch.items())
    return f"recipe {use.recipe.rpartition('#')[2]}: {inputs}"


def plan_record(result: PlanResult) -> dict:
    """The plan as plain data: goal, planner, verdict, findings, the steps with provenance, the tree, the stats.

    Each step that ran also says what it used (:class:`~barsym.sim.StepUse`): a craft's or smelt's recipe
    (its id and one batch's ingredients) and the batches run, what it consumed and made."""
    uses = result.validation.uses()
    steps = [
        {
            "n": i + 1,
            **step_to_record(step),
            "text": str(step),
            "provenance": result.provenance(i),
            "for": result.serves(i),
            **(uses[i].to_dict() if i < len(uses) and uses[i] is not None else {}),
        }
        for i, step in enumerate(result.plan.steps)
    ]
    data = {
        "goal": {"item": result.goal.item, "count": result.goal.count},
        "planner": result.planner,
        "decomposer": result.decomposer,
        "verdict": result.validation.verdict.value,
        "errors": [e.to_dict() for e in result.validation.errors],
        "warnings": [w.to_dict() for w in result.validation.warnings],
        "steps": steps,
        "tree": result.tree(),
        "stats": result.stats.to_dict(),
    }
    trace = getattr(result, "trace", None)
    if trace is not None:
        data["trace"] = trace.to_dict()
    return data


def llm_lines(stats: PlanStats) -> list[str]:
    """The LLM counters of one plan, in two lines (nothing for planners without a model)."""
    s = stats.llm
    if s is None:
        return []
    # fallbacks (or llm-only's unanswered goals) beyond the goals put to the model were given up without a call
    left = max(0, s.llm_goals - s.accepted_first_try - s.accepted_after_feedback)
    not_asked = max(0, s.fallbacks + s.unanswered - left)
    without = f" ({not_asked} without a call)" if not_asked else ""
    if s.plan_fallbacks:
        decided = (
            f"plan-level fallback: all {s.fallbacks} goals answered by the symbolic planner, "
            f"the model's answers to {s.llm_goals} goals discarded with its plan"
        )
    elif stats.llm_verified is not False:
        decided = (
            f"accepted first try {s.accepted_first_try}, after feedback {s.accepted_after_feedback}, "
            f"symbolic fallback {s.fallbacks}{without}"
        )
    else:
        decided = (
            f"used unchecked {s.accepted_first_try + s.accepted_after_feedback}, "
            f"no usable answer {s.unanswered}{without}, loops cut {s.loops_cut}"
        )
    prefix = (
        f" (few-shot prefix {PRIMED.get(s.prefix, s.prefix)} in {round(s.prefix_seconds, 3):.2f} s)" if s.prefix else ""
    )
    lines = [
        f"LLM ({stats.llm_mode or '?'} mode): {s.llm_calls} calls for {s.llm_goals} goals"
        f" ({s.retries} retries, {s.reused_replies} replies reused); {decided}; "
        f"answered without a call: {s.context_answers} from context, {s.graph_forced} forced by the graph",
        f"tokens: prompt {s.prompt_tokens} (evaluated {s.evaluated_prompt_tokens}, cached "
        f"{s.cached_prompt_tokens}), completion {s.completion_tokens} in {s.evaluations} model "
        f"evaluations; LLM time {round(s.llm_seconds, 3):.1f} s of {stats.seconds or 0:.1f} s{prefix}",
    ]
    if stats.plan_fallback:
        lines.append(f"plan-level fallback to the symbolic planner: {stats.plan_fallback}")
    return lines
