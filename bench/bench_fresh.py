"""Benchmark: ``barsym plan ITEM`` in a fresh process, this tree against a base commit, in one run.

    python bench/bench_fresh.py [--base COMMIT | --base-tree DIR] [--rounds 5] [--item diamond_pickaxe]
                                [--threads 2] [--json FILE]

The machine this runs on is shared, so absolute times say little; this script
runs the base commit's code (from a temporary ``git worktree``, or ``--base-tree``)
and this tree's code alternately, each as a new ``python -m barsym.cli plan``
process with the embedded model on ``--threads`` threads, and reports the
ratio of the medians, the per-round ratios and the load average around the run.

Each side has its own cache folder (knowledge-base pickle; for this tree also the
saved few-shot prefix state and the call log), warmed by one untimed run first;
the time of this tree's first run, which evaluates and saves the prefix, is shown
apart. It also checks that the same command gives the same plan on every run,
and shows where the two sides' plans differ. Target (issue 13): <= 4 s per run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 4.0


def plan_lines(stdout: str) -> list[str]:
    """The numbered steps of a text plan, without provenance (which the two sides may word differently)."""
    return [line.split("[")[0].strip() for line in stdout.splitlines() if line[:4].strip().rstrip(".").isdigit()]


def effort(stdout: str) -> dict:
    """Calls, prompt tokens evaluated, reply tokens and model evaluations, from the plan's LLM counter lines.

    Load-independent, unlike seconds. Older output has no evaluation count: decoding token by token takes
    one evaluation per call for the prompt plus one per reply token.
    """
    calls = re.search(r"LLM \(\w+ mode\): (\d+) calls", stdout)
    tokens = re.search(r"evaluated (\d+), cached \d+\), completion (\d+)(?: in (\d+) model evaluations)?", stdout)
    if not (calls and tokens):
        return {}
    n, evaluated, completion = int(calls[1]), int(tokens[1]), int(tokens[2])
    return {
        "calls": n,
        "prompt_tokens_evaluated": evaluated,
        "reply_tokens": completion,
        "model_evaluations": int(tokens[3]) if tokens[3] else n + completion,
    }


def run_once(tree: Path, cache: Path, item: str, threads: int) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of the child) and the plan's text output."""
    env = {
        **os.environ,
        "PYTHONPATH": str(tree / "src"),
        "BARSYM_CACHE_DIR": str(cache),
        "BARSYM_LOG_DB": str(cache / "logs.db"),
    }
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "barsym.cli", "plan", item, "--threads", str(threads)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"barsym plan failed in {tree} (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="commit of the code to compare with (default: where this branch left main)")
    parser.add_argument("--base-tree", type=Path, help="an existing checkout of the base code instead")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--item", default="diamond_pickaxe")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="barsym-fresh-") as tmp:
        tmp_path = Path(tmp)
        base = args.base_tree
        if base is None and args.base is None:
            args.base = subprocess.run(
                ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
            ).stdout.strip()
        if base is None:
            base = tmp_path / "base"
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "add", "--detach", str(base), args.base],
                check=True,
                capture_output=True,
            )
        try:
            report = measure(base, REPO, tmp_path, args)
        finally:
            if args.base_tree is None:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], capture_output=True
                )
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def measure(base: Path, new: Path, tmp: Path, args) -> dict:
    sides = {"old": (base, tmp / "old-cache"), "new": (new, tmp / "new-cache")}
    load_start = os.getloadavg()[0]
    warm = {name: run_once(tree, cache, args.item, args.threads) for name, (tree, cache) in sides.items()}
    times: dict[str, list[float]] = {"old": [], "new": []}
    cpu: dict[str, list[float]] = {"old": [], "new": []}
    plans: dict[str, set[tuple[str, ...]]] = {"old": set(), "new": set()}
    work = {name: effort(out) for name, (_, _, out) in warm.items()}
    for name, (_, _, out) in warm.items():
        plans[name].add(tuple(plan_lines(out)))
    for round_ in range(args.rounds):
        order = ("old", "new") if round_ % 2 == 0 else ("new", "old")
        for name in order:
            tree, cache = sides[name]
            seconds, used, out = run_once(tree, cache, args.item, args.threads)
            times[name].append(seconds)
            cpu[name].append(used)
            plans[name].add(tuple(plan_lines(out)))
        print(
            f"  round {round_ + 1}: old {times['old'][-1]:.2f} s, new {times['new'][-1]:.2f} s "
            f"(load average {os.getloadavg()[0]:.2f})",
            file=sys.stderr,
            flush=True,
        )
    med = {name: statistics.median(values) for name, values in times.items()}
    med_cpu = {name: statistics.median(values) for name, values in cpu.items()}
    old_plan, new_plan = sorted(plans["old"])[0], sorted(plans["new"])[0]
    return {
        "item": args.item,
        "threads": args.threads,
        "rounds": args.rounds,
        "base": str(args.base_tree or args.base),
        "load_average": {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)},
        "seconds": {name: [round(t, 3) for t in values] for name, values in times.items()},
        "median": {name: round(v, 3) for name, v in med.items()},
        "ratio_old_over_new": round(med["old"] / med["new"], 2),
        "round_ratios": [round(o / n, 2) for o, n in zip(times["old"], times["new"])],
        "cpu_median": {name: round(v, 3) for name, v in med_cpu.items()},
        "cpu_ratio_old_over_new": round(med_cpu["old"] / med_cpu["new"], 2),
        "effort": work,
        "new_first_run_s": round(warm["new"][0], 3),
        "old_first_run_s": round(warm["old"][0], 3),
        "same_plan_every_run": {name: len(p) == 1 for name, p in plans.items()},
        "plan_differences": [f"old {a!r} / new {b!r}" for a, b in zip(old_plan, new_plan) if a != b]
        + ([f"lengths {len(old_plan)} / {len(new_plan)}"] if len(old_plan) != len(new_plan) else []),
    }


def print_report(r: dict) -> None:
    print(
        f"barsym plan {r['item']}, fresh process each run, {r['threads']} threads, {r['rounds']} rounds "
        f"(load average {r['load_average']['start']:.2f} at start, {r['load_average']['end']:.2f} at end)"
    )
    print(f"  old ({r['base']}): median {r['median']['old']:.2f} s  runs {r['seconds']['old']}")
    print(f"  new (this tree): median {r['median']['new']:.2f} s  runs {r['seconds']['new']}")
    print(
        f"  old / new: {r['ratio_old_over_new']:.2f}x (per round {r['round_ratios']}); CPU time median old "
        f"{r['cpu_median']['old']:.2f} s, new {r['cpu_median']['new']:.2f} s: {r['cpu_ratio_old_over_new']:.2f}x"
    )
    for name in ("old", "new"):
        e = r["effort"].get(name) or {}
        if e:
            print(
                f"  {name} effort: {e['calls']} LLM calls, {e['prompt_tokens_evaluated']} prompt tokens evaluated, "
                f"{e['reply_tokens']} reply tokens in {e['model_evaluations']} model evaluations"
            )
    print(
        f"  new, first run (evaluates and saves the prefix state): {r['new_first_run_s']:.2f} s; "
        f"old, first run: {r['old_first_run_s']:.2f} s"
    )
    print(f"  target <= {TARGET_S:g} s for the new median: {'met' if r['median']['new'] <= TARGET_S else 'NOT met'}")
    same = r["same_plan_every_run"]
    print(f"  same plan on every run: old {same['old']}, new {same['new']}")
    print(f"  old vs new plan: {'identical' if not r['plan_differences'] else '; '.join(r['plan_differences'])}")


if __name__ == "__main__":
    sys.exit(main())
