"""``barsym score FILE... [--goal ITEM] [START] [--scores simulator|llm|both] [--t 5] [--k 3] [--format json]``.

Per step of each plan, BAR's 1-10 score from the simulator (with the reason:
which step fails, how soon, of what kind) and from the model, their minimum
(``both``), and the anchor pairs each source picks at ``--t``. With several
files, the cross-check over all of them follows: how well the model's scores
agree with the simulator's (Spearman, precision and recall of its anchors).

Exit status: 0 scores printed, 2 unusable input (an unreadable or empty
file, a bad option, a model that cannot be used).
"""

from __future__ import annotations

import argparse
import json
import sys

from ..consistency import AnchorPair, ConsistencyConfig, combine, merge, simulator_scores, step_scoring
from ..consistency.crosscheck import CrossCheck
from ..validation import Validator
from .common import UsageError, add_format, kb_from_args
from .llm_options import add_model_arguments, backend_from, model_settings
from .options import add_model, read_model
from .plan_files import add_plan_file_arguments, each_plan, goal_from_args
from .state_options import add_state_arguments, rules_from_args, start_from_args


def add_parser(sub) -> None:
    p = sub.add_parser(
        "score",
        help="score every step 1-10 (simulator and LLM) and show the anchors",
        description="BAR's step scores (1: the next steps are likely wrong; 10: they are right) "
        "from the simulator's rollout and from the model, and the anchors they pick.",
    )
    add_plan_file_arguments(p)
    add_model(
        p,
        ConsistencyConfig,
        skip=set(ConsistencyConfig.model_fields) - {"scores", "score_method", "t", "k"},
        defaults={"scores": "both"},
    )
    add_format(
        p, "text|json", "text: a table per plan (default); json: one object, plans and the cross-check", json_alias=True
    )
    add_state_arguments(p)
    add_model_arguments(p, "LLM (for --scores llm|both)")
    p.set_defaults(run=run)


def _pairs(scores: list[int | None], t: int, k: int) -> list[list[int]]:
    return [p.as_list() for p in step_scoring([10 if s is None else s for s in scores], t, k)]


def run(args: argparse.Namespace) -> int:
    config = read_model(args, ConsistencyConfig, scores="both")
    t, k, source = config.t, config.k, config.scores.value
    kb = kb_from_args(args)
    goal = goal_from_args(kb, args)
    start = start_from_args(kb, args)
    rules = rules_from_args(kb, args)
    scorer = None
    if source != "simulator":
        from ..reasoning.step_scorer import LLMStepScorer

        llm = model_settings(args)
        try:
            scorer = LLMStepScorer(
                backend_from(llm), seed=llm.seed, temperature=llm.temperature, method=config.score_method, rules=rules
            )
        except ValueError as exc:  # a probability method on a server that gives none
            raise UsageError(f"--score-method: {exc}") from None
    validator = Validator(kb, rules)
    check = CrossCheck(t=t)
    records, unusable = [], []
    for path, plan in each_plan(args.files, lambda name, _: unusable.append(name)):
        plan_goal = goal or plan.default_goal()
        validation = validator.validate(plan, goal=plan_goal, start=start)
        sim = simulator_scores(validator, validation, k)
        llm_scores = scorer.score(plan.steps, plan_goal) if scorer is not None else None
        if llm_scores is not None:
            check.add([s.score for s in sim], llm_scores)
        record = _record(path, plan, plan_goal, validation, sim, llm_scores, source, t, k)
        records.append(record)
        if args.format != "json":
            sys.stdout.write(_text(record))
    summary = check.to_dict() if scorer is not None else None
    if args.format == "json":
        print(json.dumps({"plans": records, "crosscheck": summary}, indent=2))
    elif summary is not None and len(records) > 1:
        print(_summary(summary))
    return 2 if unusable else 0


def _record(path, plan, goal, validation, sim, llm, source, t, k) -> dict:
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
    anchors = {"simulator": _pairs([s.score for s in sim], t, k)}
    if llm is not None:
        anchors["llm"] = _pairs(llm, t, k)
        anchors["both"] = _pairs(both, t, k)
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
    }


def _text(record: dict) -> str:
    goal = record["goal"]
    lines = [
        f"{record['file']}: {record['verdict']} ({len(record['scores'])} steps, goal {goal['count']} "
        f"{goal['item']}); scores 1-10, anchors below t={record['t']}, k={record['k']}"
    ]
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


def _summary(d: dict) -> str:
    def show(value) -> str:
        return "-" if value is None else f"{value:.3f}"

    dist = ", ".join(f"{k}: {v}" for k, v in d["llm_distribution"].items())
    return (
        f"cross-check over {d['plans']} plans, {d['steps']} steps: Spearman {show(d['spearman'])} "
        f"(mean per plan {show(d['spearman_per_plan_mean'])}); anchors at t={d['t']}: simulator "
        f"{d['simulator_anchors']}, llm {d['llm_anchors']}, both {d['both_anchors']}; llm precision "
        f"{show(d['precision'])}, recall {show(d['recall'])}; the model's scores: {dist or 'none'}"
    )
