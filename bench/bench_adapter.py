"""Benchmark: ``barsym plan ITEM`` with the shipped adapter against the base model alone, in one run.

    python bench/bench_adapter.py [--item diamond_pickaxe] [--planner bar] [--rounds 5] [--threads 2]
                                  [--adapter PATH] [--json FILE]

llama.cpp applies a LoRA adapter unmerged: every adapted projection also multiplies by the
adapter's two rank-r matrices. This measures what that costs a user: alternating fresh
processes of ``barsym plan ITEM`` with the default (the shipped adapter) and with
``--adapter none``, each side warmed by one untimed run (its few-shot prefix state is saved in
its own cache folder, as a user's second run finds it), then ``--rounds`` timed pairs.
``--adapter PATH`` measures another adapter in the shipped one's place (one on more blocks
adds more unmerged products, so its cost is what decides whether it could ship). It reports
the ratio of the medians and each pair's ratio (issue 32's target: <= 1.1), and the two sides'
plans, which may differ (the adapter is a different model; the planner checks both).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 1.1


def once(item: str, planner: str, threads: int, adapter: str | None, cache: str) -> tuple[float, str]:
    env = dict(os.environ, BARSYM_CACHE_DIR=cache, BARSYM_LOG_DB=os.path.join(cache, "logs.db"))
    env.pop("BARSYM_ADAPTER", None)
    command = [sys.executable, "-m", "barsym.cli", "plan", item, "--planner", planner, "--threads", str(threads)]
    if adapter is not None:
        command += ["--adapter", adapter]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    return elapsed, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--item", default="diamond_pickaxe")
    parser.add_argument("--planner", default="bar")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--adapter", help="an adapter file to measure instead of the shipped one")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sides = {"adapter": args.adapter, "base": "none"}
    caches = {name: tempfile.mkdtemp(prefix=f"bench-adapter-{name}-") for name in sides}
    plans = {}
    for name, adapter in sides.items():  # warm: the kb pickle and the saved prefix state
        _, plans[name] = once(args.item, args.planner, args.threads, adapter, caches[name])
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, adapter in sides.items():
            elapsed, _ = once(args.item, args.planner, args.threads, adapter, caches[name])
            times[name].append(elapsed)
    ratios = [a / b for a, b in zip(times["adapter"], times["base"])]
    median = {name: statistics.median(values) for name, values in times.items()}
    result = {
        "item": args.item,
        "planner": args.planner,
        "adapter": args.adapter or "shipped",
        "threads": args.threads,
        "rounds": args.rounds,
        "seconds": times,
        "median_s": median,
        "ratio_of_medians": median["adapter"] / median["base"],
        "pair_ratios": ratios,
        "target": TARGET,
        "load_average": os.getloadavg(),
    }
    print(f"barsym plan {args.item} --planner {args.planner}, {args.rounds} alternating pairs of fresh processes:")
    for name in sides:
        print(f"  {name:8s} median {median[name]:.2f} s  ({', '.join(f'{t:.2f}' for t in times[name])})")
    print(
        f"  ratio of medians {result['ratio_of_medians']:.3f} (target <= {TARGET}); per pair "
        + ", ".join(f"{r:.2f}" for r in ratios)
    )
    for name in sides:
        print(f"--- {name} plan ---\n{plans[name].strip()}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
