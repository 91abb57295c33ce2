"""What ``barsym score`` and ``barsym repair`` show of a plan: its step scores with the anchors, its repair as a diff.

A script that scores or repairs plans through the API wants the same table,
diff and record the commands print, so they are written here, beside the
scores and the repair they show, rather than in the command-line layer.
"""

from __future__ import annotations

import difflib

from ..bar_io import step_to_record
from ..model import Goal, Plan
from ..steps import clip
from ..validation import ValidationResult, Validator
from .anchors import AnchorPair, merge, step_scoring
from .config import ConsistencyConfig
from .crosscheck import CrossCheck
from .results import RepairResult
from .scores import StepScore, combine, simulator_scores


def diff_lines(result: RepairResult) -> list[str]:
    """The repair as a diff: ``-`` the user's steps it removes, ``+`` the steps it adds, with step numbers."""
    old = [str(s) for s in result.original.steps]
    new = [str(s) for s in result.plan.steps]
    lines = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            lines += [f"  {a0 + i + 1:>3} {b0 + i + 1:>3}  {old[a0 + i]}" for i in range(a1 - a0)]
            continue
        lines += [f"- {i + 1:>3}      {old[i]}" for i in range(a0, a1)]
        lines += [f"+     {i + 1:>3}  {new[i]}  [{result.provenance[i].value}]" for i in range(b0, b1)]
    return lines


def removed_steps(result: RepairResult) -> int:
    """How many of the user's steps the repair took out with nothing in their place (a changed step is not one)."""
    old = [str(s) for s in result.original.steps]
    new = [str(s) for s in result.plan.steps]
    opcodes = difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
    return sum(max(0, (a1 - a0) - (b1 - b0)) for op, a0, a1, b0, b1 in opcodes if op != "equal")


def repair_text(path: str, result: RepairResult) -> str:
    """The repair as ``barsym repair`` prints it: the verdicts, the windows of each round, the diff."""
    before, after = result.before.verdict.value, result.after.verdict.value
    if result.valid_before:
        return f"{path}: {before}: nothing to repair ({len(result.original)} steps)\n"
    windows = "; ".join(
        f"round {r.number}: " + (", ".join(f"steps {w.start}-{w.end - 1}" for w in r.windows) or "no anchors")
        for r in result.rounds
    )
    if result.edit:
        windows = f"the smallest repair: {result.edit}" + (f"; {windows}" if windows else "")
    lines = [f"{path}: {before} -> {after} ({result.config.describe()})", f"  {windows}", "  old new  step"] + [
        "  " + line for line in diff_lines(result)
    ]
    removed = removed_steps(result)  # a deleted step is neither repaired nor kept: say so
    tail = f", {removed} removed" if removed else ""
    lines.append(f"  {result.stats.repaired_steps} step(s) repaired, {result.stats.kept_steps} kept{tail}")
    if not result.valid_after:
        lines.append(f"  cannot repair: still {result.after.failure()}")
    return "\n".join(lines) + "\n"


def repair_status(result: RepairResult) -> tuple[str, str | None]:
    """``valid`` (nothing to repair), ``repaired`` or ``unrepaired`` with where the plan still fails."""
    if result.valid_before:
        return "valid", None
    if result.valid_after:
        return "repaired", None
    return "unrepaired", f"still {result.after.failure()}"


def cannot_repair_record(path: str, reason: object) -> dict:
    """A plan whose goal cannot be had at all (:class:`~.results.CannotRepair`), as a :func:`repair_record` is read."""
    return {"file": path, "valid_before": False, "valid_after": False, "cannot_repair": str(reason)}


def repair_record(path: str, result: RepairResult) -> dict:
    """One file's repair as plain data: verdicts, scores, anchors, windows, rounds, the new steps."""
    first = result.rounds[0] if result.rounds else None
    sim, llm = result.initial, first.llm if first is not None else None
    return {
        "file": path,
        "goal": {"item": result.goal.item, "count": result.goal.count},
        "valid_before": result.valid_before,
        "valid_after": result.valid_after,
        "verdict_before": result.before.verdict.value,
        "verdict_after": result.after.verdict.value,
        "scores": [
            {"step": s.step, "simulator": s.score, "llm": llm[i] if llm else None, "reason": s.reason()}
            for i, s in enumerate(sim)
        ],
        "anchors": [p.as_list() for p in first.pairs] if first else [],
        "windows": [w.as_list() for w in first.windows] if first else [],
        "rounds": [r.to_dict() for r in result.rounds],
        "edit": result.edit,  # the smallest repair, when one step did it (then there are no rounds)
        "steps": [step_to_record(s) for s in result.plan.steps],
        "provenance": [p.value for p in result.provenance],
        "errors_after": [e.to_dict() for e in result.after.errors],
        "stats": result.stats.to_dict(),
    }


def anchor_pairs(scores: list[int | None], t: int, k: int) -> list[list[int]]:
    """The anchor pairs ``scores`` give at ``t`` (a step without a score counts as 10), as ``[start, end]`` lists."""
    return [p.as_list() for p in step_scoring([10 if s is None else s for s in scores], t, k)]


def score_record(
    path: str,
    plan: Plan,
    goal: Goal,
    validation: ValidationResult,
    sim: list[StepScore],
    llm: list[int] | None,
    source: str,
    t: int,
    k: int,
    method: str | None = None,
) -> dict:
    """One plan's scores per step (simulator, model, both), the anchors each source picks and the windows."""
    both = [combine(s.score, v) for s, v in zip(sim, llm)] if llm is not None else None
    steps = []
    for i, (step, s) in enumerate(zip(plan.steps, sim)):
        steps.append(
            {
                "step": i + 1,
                "text": str(step),
                "simulator": s.score,
                "reason": s.reason(),
                "llm": llm[i] if llm is not None else None,
                "both": both[i] if both is not None else None,
            }
        )
    anchors = {"simulator": anchor_pairs([s.score for s in sim], t, k)}
    if llm is not None:
        anchors["llm"] = anchor_pairs(llm, t, k)
        anchors["both"] = anchor_pairs(both, t, k)
    chosen = anchors["simulator"] if source == "simulator" else anchors[source]
    windows = [w.as_list() for w in merge([AnchorPair(*p) for p in chosen])]
    return {
        "file": "<stdin>" if path == "-" else path,
        "goal": {"item": goal.item, "count": goal.count},
        "verdict": validation.verdict.value,
        "t": t,
        "k": k,
        "scores": steps,
        "anchors": anchors,
        "source": source,
        "windows": windows,
        "llm_method": method,
    }


class ScoreSheet:
    """Plans scored one by one as ``barsym score`` does: each one's :func:`score_record`, and the cross-check of the
    model's scores (``scorer``, an :class:`~barsym.reasoning.scoring.step_scorer.LLMStepScorer`) against the simulator's."""

    def __init__(self, validator: Validator, config: ConsistencyConfig, scorer=None):
        self.validator, self.config, self.scorer = validator, config, scorer
        self.check, self.records = CrossCheck(t=config.t), []

    def add(self, path: str, plan: Plan, goal: Goal | None = None, start=None) -> dict:
        """Score ``plan`` (against ``goal``, else its last step's item) and keep its record."""
        goal = goal or plan.default_goal()
        validation = self.validator.validate(plan, goal=goal, start=start)
        sim = simulator_scores(self.validator, validation, self.config.k)
        llm = self.scorer.score(plan.steps, goal) if self.scorer is not None else None
        if llm is not None:
            self.check.add([s.score for s in sim], llm)
        method = self.scorer.method_text if self.scorer is not None else None
        c = self.config
        self.records.append(score_record(path, plan, goal, validation, sim, llm, c.scores.value, c.t, c.k, method))
        return self.records[-1]

    def crosscheck(self) -> dict | None:
        """The cross-check over every plan added; None without the model's scores."""
        return self.check.to_dict() if self.scorer is not None else None


def score_text(record: dict) -> str:
    """A :func:`score_record` as ``barsym score`` prints it: a table of the steps, then the anchors."""
    goal = record["goal"]
    lines = [
        f"{record['file']}: {record['verdict']} ({len(record['scores'])} steps, goal {goal['count']} "
        f"{clip(goal['item'])}); scores 1-10, anchors below t={record['t']}, k={record['k']}"
    ]
    if record.get("llm_method"):
        lines[0] += f"; the model's scores read as {record['llm_method']}"
    width = max((len(s["text"]) for s in record["scores"]), default=4)
    lines.append(f"  {'step':>4}  {'':<{width}}  sim  llm  both  simulator's reason")

    def show(value) -> str:
        return "-" if value is None else str(value)

    for s in record["scores"]:
        lines.append(
            f"  {s['step']:>4}  {s['text']:<{width}}  {s['simulator']:>3}  {show(s['llm']):>3}  "
            f"{show(s['both']):>4}  {s['reason']}"
        )
    for source, pairs in record["anchors"].items():
        listed = ", ".join(f"[{a}, {b}]" for a, b in pairs) or "none"
        lines.append(f"  anchors from {source} scores: {listed}")
    listed = ", ".join(f"steps {a}-{b - 1}" for a, b in record["windows"]) or "none"
    lines.append(f"  windows a repair with {record['source']} scores regenerates: {listed}")
    return "\n".join(lines) + "\n"


def crosscheck_text(d: dict) -> str:
    """The cross-check of :class:`~barsym.consistency.crosscheck.CrossCheck` in one line."""

    def show(value) -> str:
        return "-" if value is None else f"{value:.3f}"

    dist = ", ".join(f"{k}: {v}" for k, v in d["llm_distribution"].items())
    return (
        f"cross-check over {d['plans']} plans, {d['steps']} steps: Spearman {show(d['spearman'])} "
        f"(mean per plan {show(d['spearman_per_plan_mean'])}); anchors at t={d['t']}: simulator "
        f"{d['simulator_anchors']}, llm {d['llm_anchors']}, both {d['both_anchors']}; llm precision "
        f"{show(d['precision'])}, recall {show(d['recall'])}; the model's scores: {dist or 'none'}"
    )
