"""Benchmark: how well each step-scoring method tells steps that cannot run from steps that can.

    python bench/bench_step_scores.py [--methods digit,expected,yes,yes-facts,yes-state,yes-needs,default] [--limit N] [--seed 0]
                                      [--model FILE.gguf] [--json FILE]

The labelled set (:mod:`barsym.consistency.step_set`) is built from BAR's 53 expert plans and faulty
variants of them, each step labelled by the simulator (good: it runs, the steps before it played as
written). Every method scores every step of the set with the same model, in one process; the table
gives, per method, the AUC against the labels, Spearman's rho against the labels and against the
simulator's own 1-10 score, the share of steps without an answer, and seconds per step. Two rows need
no model and bound the table: ``simulator`` (the deterministic score: what a perfect scorer reaches)
and ``constant`` (one score for every step: chance, AUC 0.5).

``default`` is what ``--scores llm`` reads when no ``--score-method`` is given: the method the model
declares (a ``barsym distill`` model names the one it was taught), else ``expected``; its row names
which it was.

Rows of simple rules that read only what the ``yes-recall`` prompt shows (the inventory before the
step and the step itself, no recipe) bound what a model adds there: ``rule: tool held`` (yes unless
the step names a tool that is not held), ``rule: tool held, something to use`` (also no for a craft
or smelt from an empty inventory). The best of them is printed with the model rows' margin over it.

``--stand-ins`` adds, for each method that reads a generated reply (``digit``, ``recall-check``), a row
per no-model stand-in (``first``, ``random``, ``largest``, ``copy-facts``: :mod:`barsym.llm.stand_in`)
answering the same prompt under the same grammar; the probability methods have no stand-in (a stand-in
gives no probabilities), the rules bound them.

``--set dropped`` scores another set: from each expert plan one step dropped
(:func:`~barsym.consistency.step_set.dropped_steps`), a fault no method was shaped on.

``--limit N`` keeps N steps (a seeded sample that keeps the good/bad ratio); the default is the whole
set (567 steps). The model is the embedded SmolLM2-135M unless ``--model`` names another GGUF
(e.g. one written by ``barsym distill``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.consistency.crosscheck import auc, spearman  # noqa: E402
from barsym.consistency.step_set import dropped_steps, labelled_steps  # noqa: E402
from barsym.eval import load_dataset  # noqa: E402
from barsym.eval.dataset import resolve_dataset  # noqa: E402
from barsym.kb import Rules, load_kb  # noqa: E402
from barsym.model import Plan, StepType  # noqa: E402
from barsym.reasoning.scoring.step_scorer import LLMStepScorer, ScoreMethod  # noqa: E402
from barsym.validation import Validator  # noqa: E402


def sample(items: list, limit: int | None, seed: int) -> list:
    if limit is None or limit >= len(items):
        return items
    rng = random.Random(seed)
    good = [x for x in items if x.good]
    bad = [x for x in items if not x.good]
    keep_good = round(limit * len(good) / len(items))
    return sorted(
        rng.sample(good, keep_good) + rng.sample(bad, limit - keep_good), key=lambda x: (x.task, x.fault, x.number)
    )


def row(name: str, scores: list, items: list, seconds: float) -> dict:
    answered = [(s, x) for s, x in zip(scores, items) if s is not None]
    values = [s for s, _ in answered]
    labels = [x.good for _, x in answered]
    return {
        "method": name,
        "steps": len(items),
        "unanswered": len(items) - len(answered),
        "auc": auc(values, labels),
        "spearman_label": spearman(values, [float(g) for g in labels]),
        "spearman_simulator": spearman(values, [float(x.simulator_score) for _, x in answered]),
        "seconds_per_step": seconds / len(items) if items else 0.0,
        "distinct_scores": len({round(v, 3) for v in values}),
    }


def rule_tool_held(state, step) -> float:
    """Yes unless the step names a tool the inventory does not hold (read from the prompt's 'Have')."""
    return 1.0 if step.tool and state.count(step.tool) <= 0 else 10.0


def rule_tool_and_something(state, step) -> float:
    """As rule_tool_held, and no for a craft or smelt from an empty inventory."""
    if step.type in (StepType.CRAFT, StepType.SMELT) and not state.inventory:
        return 1.0
    return rule_tool_held(state, step)


RULES = {"rule: tool held": rule_tool_held, "rule: tool held, something to use": rule_tool_and_something}


def fmt(value) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default=",".join(m.value for m in ScoreMethod))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default=None, help="a GGUF file (default: the embedded model)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--adapter", help="LoRA adapter (default: the shipped one for the embedded model; none: base)")
    parser.add_argument("--set", dest="step_set", choices=("labelled", "dropped"), default="labelled")
    parser.add_argument(
        "--stand-ins", action="store_true", help="also score generated-reply methods with the stand-ins"
    )
    parser.add_argument("--json", dest="json_out", default=None, help="write the table and the set here")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.methods.split(",") if name.strip()]
    known = [m.value for m in ScoreMethod] + ["default"]
    if unknown := [name for name in names if name not in known]:
        parser.error(f"--methods: unknown method {unknown[0]!r}; choose from {', '.join(known)}")
    methods = [None if name == "default" else ScoreMethod(name) for name in names]

    kb = load_kb()
    rules = Rules(kb)
    validator = Validator(kb, rules)
    path, dialect = resolve_dataset("bar")
    build = dropped_steps if args.step_set == "dropped" else labelled_steps
    items = sample(build(load_dataset(path, kb, dialect), validator, seed=args.seed), args.limit, args.seed)
    good = sum(x.good for x in items)
    what = "one step dropped from each" if args.step_set == "dropped" else "faulty variants of"
    print(f"{args.step_set} set: {len(items)} steps ({good} good, {len(items) - good} bad): {what} BAR's expert plans")

    rows = [
        row("simulator", [float(x.simulator_score) for x in items], items, 0.0),
        row("constant", [10.0] * len(items), items, 0.0),
    ]
    befores = [validator.validate(Plan(steps=x.steps[: x.number - 1]), goal=None).final_state for x in items]
    for name, rule in RULES.items():
        rows.append(row(name, [rule(state, x.step) for state, x in zip(befores, items)], items, 0.0))
    per_step: dict[str, list] = {}
    if methods:
        from barsym.llm import LLMOptions
        from barsym.llm.llamacpp.backend import LlamaCppBackend

        backend = LlamaCppBackend(args.model, options=LLMOptions(n_threads=args.threads), adapter=args.adapter)
        print(f"model: {backend.model_name}", flush=True)
        for method in methods:
            scorer = LLMStepScorer(backend, method=method, rules=rules, log=False)
            started = time.perf_counter()
            scores = [scorer.step(x.goal, x.steps, x.number) for x in items]
            seconds = time.perf_counter() - started
            name = scorer.method.value if method else f"default ({scorer.method_text})"
            rows.append(row(name, scores, items, seconds))
            per_step[name] = scores
            print(f"  {name}: done in {seconds:.1f} s", flush=True)
        backend.close()
        if args.stand_ins:
            from barsym.llm.stand_in import STAND_INS, make_stand_in

            for method in [m for m in methods if m is not None and not m.needs_probabilities]:
                for stand_in in STAND_INS:
                    scorer = LLMStepScorer(make_stand_in(stand_in), method=method, rules=rules, log=False)
                    started = time.perf_counter()
                    scores = [scorer.step(x.goal, x.steps, x.number) for x in items]
                    name = f"{method.value} (stand-in {stand_in})"
                    rows.append(row(name, scores, items, time.perf_counter() - started))
                    per_step[name] = scores

    print()
    # the margin is over the best reader with no model: a rule, or a stand-in on the same prompt
    bounds = [r for r in rows if (r["method"].startswith("rule:") or "stand-in" in r["method"]) and r["auc"]]
    best_rule = max(bounds, key=lambda r: r["auc"]) if bounds else None
    if best_rule is not None:
        print(f"best reader with no model: {best_rule['method']} (AUC {fmt(best_rule['auc'])})")
    print(
        "| method | steps | no answer | AUC | AUC minus the best no-model reader's | Spearman (label) "
        "| Spearman (simulator 1-10) | distinct scores | s/step |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        model_row = (
            r["method"] not in ("simulator", "constant")
            and not r["method"].startswith("rule:")
            and "stand-in" not in r["method"]
        )
        margin = r["auc"] - best_rule["auc"] if model_row and best_rule and r["auc"] is not None else None
        r["margin_over_best_rule"] = margin
        print(
            f"| {r['method']} | {r['steps']} | {r['unanswered']} | {fmt(r['auc'])} | {fmt(margin)} | "
            f"{fmt(r['spearman_label'])} | {fmt(r['spearman_simulator'])} | {r['distinct_scores']} "
            f"| {r['seconds_per_step']:.3f} |"
        )
    if args.json_out:
        data = {
            "rows": rows,
            "steps": [dict(x.to_dict(), **{m: s[i] for m, s in per_step.items()}) for i, x in enumerate(items)],
        }
        Path(args.json_out).write_text(json.dumps(data, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
