"""Benchmark: what the model knows of the game, one question per goal, without facts.

    python bench/bench_know.py [--adapter PATH|none] [--stand-ins] [--threads 1] [--json FILE]

BAR's decomposer asks the model one thing per goal -- the step that makes it and what that step needs
(``Goal: 3 iron_ingot`` -> ``smelt 3 iron_ingot: 3 iron_ore, 2 planks, 1 furnace``) -- and without facts in
its prompt only the model's knowledge answers. A whole ``barsym eval`` measures that knowledge mixed with
everything else (a wrong answer's subtree, retries, fallbacks) and takes a quarter of an hour; this asks
each question once, in the context of a plan for that goal alone (the same question the training data's
``know`` examples ask), and counts the answers the crafting graph accepts as they are.

The questions: every goal the symbolic planner decomposes in its plans for BAR's 53 and DEPS' 70 tasks
from their empty starts (the item and count it asked), and the three layers; each once. These are the
goals ``bar --no-facts`` asks about when the model answers right. One-step knowledge of every item may be
taught (the card's rule), so this measures whether the taught knowledge holds, not generalisation to new
tasks; the stand-ins (no model, the same grammar) show what the grammar alone gives.

Printed: the share accepted for each side, and the questions the model got wrong with its reply.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.distill.knowledge import question_context  # noqa: E402
from barsym.eval import load_dataset  # noqa: E402
from barsym.kb import load_kb  # noqa: E402
from barsym.llm.stand_in import STAND_INS, make_stand_in  # noqa: E402
from barsym.model import Goal  # noqa: E402
from barsym.planner import make_planner  # noqa: E402
from barsym.planner.decomposer import PlanningError, Unanswered, layer_goal  # noqa: E402
from barsym.planner.registry import graph_for  # noqa: E402


def questions(kb) -> list[Goal]:
    """The goals the symbolic planner decomposes for BAR's and DEPS' tasks, each (item, count) once; the layers."""
    planner = make_planner("symbolic", kb)
    seen: dict[tuple[str, int], Goal] = {}
    for name in ("bar", "deps"):
        for task in load_dataset(name, kb):
            result = planner.plan(task.goal)
            for node in result.nodes:
                if node.decomposition is not None and not node.goal.item.startswith("layer:"):
                    seen.setdefault((node.goal.item, node.goal.count), node.goal)
    layers = [layer_goal(layer) for layer in range(1, kb.deepest_layer + 1)]
    return sorted(seen.values(), key=lambda g: (g.item, g.count)) + layers


def ask_all(kb, graph, backend, goals: list[Goal]) -> list[dict]:
    from barsym.reasoning.planners.backward.bar_decomposer import LLMDecomposer

    decomposer = LLMDecomposer(
        kb, backend, mode="vocab", facts=False, graph=graph, max_retries=0, fallback=None, log=False
    )
    rows = []
    for goal in goals:
        decomposer.start_plan()
        try:
            answer = decomposer.decompose(goal, question_context(kb, goal))
            ok, reply = True, str(answer.step)
        except (PlanningError, Unanswered) as exc:
            ok, reply = False, str(exc)
        rows.append(
            {
                "goal": f"{goal.count} {goal.item}",
                "accepted": ok and decomposer.stats.accepted_first_try == 1,
                "why": "" if ok else reply[:200],
            }
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adapter", help="LoRA adapter (default: the shipped one; none: the base model alone)")
    parser.add_argument("--stand-ins", action="store_true", help="also ask the no-model stand-ins")
    parser.add_argument("--no-model", action="store_true", help="only the stand-ins")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    kb = load_kb()
    graph = graph_for(kb)
    goals = questions(kb)
    sides = [] if args.no_model else ["model"]
    sides += list(STAND_INS) if args.stand_ins or args.no_model else []
    table = {}
    for side in sides:
        if side == "model":
            from barsym.llm.settings import ModelSettings
            from barsym.reasoning.calls.backends import backend_for

            backend = backend_for(ModelSettings(threads=args.threads, adapter=args.adapter))
        else:
            backend = make_stand_in(side)
        started = time.perf_counter()
        rows = ask_all(kb, graph, backend, goals)
        seconds = time.perf_counter() - started
        accepted = sum(r["accepted"] for r in rows)
        table[side] = {"accepted": accepted, "asked": len(rows), "seconds": round(seconds, 1), "rows": rows}
        print(
            f"{side}: {accepted} / {len(rows)} accepted ({100 * accepted / len(rows):.1f} %), {seconds:.0f} s",
            flush=True,
        )
    print(f"\n{len(goals)} questions (goals of the symbolic plans for BAR's 53 and DEPS' 70 tasks, and the layers)")
    print("| side | accepted as answered | share |")
    print("| --- | ---: | ---: |")
    for side, row in table.items():
        print(f"| {side} | {row['accepted']} / {row['asked']} | {100 * row['accepted'] / row['asked']:.1f} % |")
    if "model" in table:
        wrong = [r for r in table["model"]["rows"] if not r["accepted"]]
        print(f"\nthe model's refused answers ({len(wrong)}):")
        for r in wrong:
            print(f"  {r['goal']}: {r['why']}")
    if args.json:
        args.json.write_text(json.dumps({"questions": len(goals), "sides": table}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
