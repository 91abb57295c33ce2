"""Does a model read BAR's few-shot turns? The answer to a goal the prompt already shows, with and without facts' help.

    PYTHONPATH=src python tools/few_shot_copy.py [--adapter PATH|none] [--threads 1]

BAR's decomposer without facts sends a fixed prefix whose few-shot turns answer
``crafting_table``, ``planks``, ``stick`` and ``wooden_pickaxe``. This asks the
model, under the planner's own grammar for each goal:

- a goal whose answer is one of the prefix's own turns (``1 crafting_table``,
  ``1 wooden_pickaxe``);
- the same goal with one more turn inserted near the end of the turns,
  showing it at another count (``2 crafting_table: 8 planks``);
- a training item (``oak_boat``) with and without its turn inserted.

The base model copies the prefix's turns; an adapter that copies only the
inserted turn has learned that the fixed turns are never the answer (they
never are in training, where their items are held out). docs/results/taught-model.md
reads its output.
"""

from __future__ import annotations

import argparse

from barsym.distill.shots import shot_turn
from barsym.kb import load_kb
from barsym.llm.settings import ModelSettings
from barsym.model import Goal
from barsym.planner.registry import graph_for
from barsym.reasoning.calls.backends import backend_for
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder
from barsym.reasoning.planners.backward.llm_planners import bar_planner
from barsym.reasoning.spec import PlannerSpec


def turn(asked: str, answer: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": asked}, {"role": "assistant", "content": answer}]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--adapter", help="LoRA adapter (default: the shipped one; none: the base model)")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    kb = load_kb()
    graph = graph_for(kb)
    planner = bar_planner(kb, PlannerSpec.of("bar", {"backend": None, "facts": False, "graph": graph}))
    prefix = [dict(m) for m in planner.decomposer.prompts.prefix]
    grammars = GrammarBuilder(kb, graph)
    backend = backend_for(ModelSettings(threads=args.threads, adapter=args.adapter))
    table = shot_turn(kb, planner.decomposer.conventions, Goal(item="crafting_table", count=2))
    boat = shot_turn(kb, planner.decomposer.conventions, Goal(item="oak_boat"))
    assert table is not None and boat is not None
    cases = [
        ("the prefix's own turn", prefix, Goal(item="crafting_table")),
        ("the prefix's own turn", prefix, Goal(item="wooden_pickaxe")),
        (
            "+ inserted: " + table[1],
            prefix[:-2] + turn(*table) + prefix[-2:],
            Goal(item="crafting_table"),
        ),
        ("no turn shows it", prefix, Goal(item="oak_boat")),
        ("+ inserted: " + boat[1], prefix[:-2] + turn(*boat) + prefix[-2:], Goal(item="oak_boat")),
    ]
    for label, messages, goal in cases:
        asked = [*messages, {"role": "user", "content": f"Goal: {goal.count} {goal.item}"}]
        reply = backend.complete(asked, grammar=grammars.for_goal(goal).text, max_tokens=32, temperature=0.0)
        print(f"{goal.count} {goal.item:16s} {label:52s} -> {reply.text.strip()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
