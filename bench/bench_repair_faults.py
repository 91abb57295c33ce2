"""Benchmark: ``barsym repair`` on BAR's expert plans with one injected fault each.

    python bench/bench_repair_faults.py [--dataset ../shared/datasets/bar_tech_tree]
                                        [--repairer symbolic|llm] [--threads 1]

Four fault classes, injected into every executable expert plan wherever they
apply: a dropped dig down (each one), the crafting table moved after its first
use, a dropped furnace, and a count cut in half (each step with a count above
one). Faults that leave the plan valid (spare units cover a cut) are not
counted. Per class: cases, repaired plans that validate, and the edit distance
(BAR's EditDistanceHard) of the repaired plan to the original expert plan.
Target (issue 10): every repaired plan valid, within 2 edits.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.bar_io import read_plan  # noqa: E402
from barsym.consistency import ConsistencyConfig  # noqa: E402
from barsym.kb import load_kb  # noqa: E402
from barsym.metrics import as_records, edit_distance  # noqa: E402
from barsym.model import Plan  # noqa: E402
from barsym.reasoning import model_consistency  # noqa: E402
from barsym.testing.faults import repair_faults  # noqa: E402
from barsym.validation import Validator  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "bar_tech_tree")
    parser.add_argument("--repairer", choices=["symbolic", "llm"], default="symbolic")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    kb = load_kb()
    validator = Validator(kb)
    backend = None
    if args.repairer == "llm":
        from barsym.llm import LlamaCppBackend, LLMOptions

        backend = LlamaCppBackend(None, options=LLMOptions(n_threads=args.threads, n_ctx=2048))
    engine = model_consistency(kb, ConsistencyConfig(repairer=args.repairer, fallback=False), backend=backend)
    rows: dict[str, list[tuple[bool, int]]] = defaultdict(list)
    skipped = 0
    started = time.perf_counter()
    for path in sorted(args.dataset.glob("*/*.jsonl")):
        plan = read_plan(path)
        if not validator.validate(plan).valid:
            skipped += 1
            continue
        goal = plan.default_goal()
        for name, _, steps in repair_faults(plan, validator):
            faulty = Plan(steps=tuple(steps))
            if validator.validate(faulty, goal=goal).valid:
                continue
            result = engine.repair(faulty, goal=goal)
            rows[name].append(
                (
                    validator.validate(result.plan, goal=goal).valid,
                    edit_distance(as_records(result.plan), as_records(plan)),
                )
            )
    print(
        f"repair ({args.repairer} repairer, simulator scores, t=5, k=3) of expert plans with one injected fault; "
        f"{skipped} invalid expert plan(s) left out; {time.perf_counter() - started:.1f} s"
    )
    print(f"{'fault':<28} {'cases':>5} {'valid':>6} {'<=2 edits':>9} {'mean ED':>8} {'max ED':>7}")
    total = [r for rs in rows.values() for r in rs]
    for name, rs in list(rows.items()) + [("all", total)]:
        eds = [d for _, d in rs]
        print(
            f"{name:<28} {len(rs):>5} {sum(v for v, _ in rs):>6} {sum(d <= 2 for d in eds):>9} "
            f"{statistics.fmean(eds):>8.2f} {max(eds):>7}"
        )
    return 0 if all(v and d <= 2 for v, d in total) else 1


if __name__ == "__main__":
    sys.exit(main())
