"""Make a step-verdict training file that shares no prompt with the labelled step set, balanced yes/no.

    PYTHONPATH=src python tools/step_verdict_data.py IN.jsonl OUT.jsonl [--per-kind yes-state=1700,yes-facts=250]

Why: the ``yes-state`` prompt does not name the goal, so holding the benchmarks' goals out
(:mod:`barsym.distill.goals`) does not keep its prompts out -- a training plan for a bed starts
``mine 3 logs`` from nothing, as BAR's plans do. 79 of the 120 steps of the sample in
docs/step-scores.md had their exact yes-state prompt in a 5,000-example file. This drops every
example whose messages equal those of any step of the whole labelled set (BAR's 53 tasks, every
method that has facts), then keeps ``N`` yes and ``N`` no per kind (seeded), shuffled.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.consistency.step_set import labelled_steps  # noqa: E402
from barsym.distill.data import read_jsonl  # noqa: E402
from barsym.distill.verdicts import VERDICT_KINDS, _PromptsOnly  # noqa: E402
from barsym.eval import load_dataset  # noqa: E402
from barsym.eval.dataset import resolve_dataset  # noqa: E402
from barsym.kb import Rules, load_kb  # noqa: E402
from barsym.reasoning.scoring.step_scorer import LLMStepScorer  # noqa: E402
from barsym.validation import Validator  # noqa: E402


def labelled_prompts(kind: str) -> set[str]:
    kb = load_kb()
    rules = Rules(kb)
    path, dialect = resolve_dataset("bar")
    items = labelled_steps(load_dataset(path, kb, dialect), Validator(kb, rules))
    scorer = LLMStepScorer(_PromptsOnly(), method=VERDICT_KINDS[kind], rules=rules, log=False)
    return {json.dumps(scorer.messages(x.goal, x.steps, x.number)) for x in items}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("--per-kind", default="yes-state=1700,yes-facts=250")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        wanted = {k: int(n) for k, _, n in (part.partition("=") for part in args.per_kind.split(","))}
        rows = read_jsonl(Path(args.source))
    except (ValueError, OSError) as exc:
        print(f"step_verdict_data: {exc}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    out = []
    for kind, n in wanted.items():
        if kind not in VERDICT_KINDS:
            print(f"step_verdict_data: {kind!r} is not one of {', '.join(VERDICT_KINDS)}", file=sys.stderr)
            return 2
        banned = labelled_prompts(kind)
        clean = [r for r in rows if r["kind"] == kind and json.dumps(r["messages"]) not in banned]
        dropped = sum(r["kind"] == kind for r in rows) - len(clean)
        for reply in ("yes", "no"):
            pool = [r for r in clean if r["reply"] == reply]
            out += rng.sample(pool, min(n, len(pool)))
        print(f"{kind}: {dropped} examples share a prompt with the labelled set and are dropped")
    rng.shuffle(out)
    with open(args.out, "w", encoding="utf-8") as f:
        for row in out:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    counts = {(r["kind"], r["reply"]): 0 for r in out}
    for r in out:
        counts[r["kind"], r["reply"]] += 1
    print(f"wrote {len(out)} examples to {args.out}: " + ", ".join(f"{k} {v} {n}" for (k, v), n in counts.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
