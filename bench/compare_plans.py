"""Compare the ``bar`` planner's plans and replies between the base commit and this tree, on BAR's 53 tasks.

    python bench/compare_plans.py [--base COMMIT | --base-tree DIR] [--limit N] [--threads 2] [--json FILE]
        [--facts] [--decoder spans|tokens]

Answers "does this tree give the same answers as today's greedy decoding?". Each side
runs in its own process over the same tasks (model loaded once per side), recording
every model call (the goal line of the prompt, and the reply) and the final plans;
then the script lists the tasks whose plans differ and the first call where the
replies part. By default this tree runs as close to the base as it can -- prompts
without facts (``--facts`` to include them) -- so what is compared is the decoding:
forced spans and the pinned prefix (``--decoder spans``, default) or llama.cpp's
token-by-token sampler (``--decoder tokens``).

``python bench/compare_plans.py --dump TREE OUT`` is the per-side worker (used internally).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def dump(out: Path, limit: int | None, threads: int, facts: bool, decoder: str) -> None:
    """Run in a process whose PYTHONPATH is one tree's src: plans and calls to ``out`` as JSON."""
    from barsym.eval import load_dataset
    from barsym.kb import load_kb
    from barsym.llm import LlamaCppBackend, LLMOptions
    from barsym.planner import PlanningError, make_planner

    kb = load_kb()
    tasks = load_dataset(REPO.parent / "shared" / "datasets" / "bar_tech_tree", kb)[:limit]
    options = LLMOptions(n_threads=threads, n_ctx=2048)
    try:
        backend = LlamaCppBackend(None, options=options, decoder=decoder)
    except TypeError:  # the base commit's backend has a single decoder
        backend = LlamaCppBackend(None, options=options)
    calls: list[dict] = []
    original = backend.complete

    def complete(messages, **kw):
        reply = original(messages, **kw)
        calls.append(
            {
                "goal": messages[-1]["content"].splitlines()[0],
                "turns": len(messages),
                "temperature": kw.get("temperature"),
                "reply": reply.text,
            }
        )
        return reply

    backend.complete = complete
    planner = make_planner("bar", kb, backend=backend, facts=facts, log=False)  # the base ignores both options
    result: dict = {}
    started = time.perf_counter()
    for task in tasks:
        first = len(calls)
        try:
            plan = [str(step) for step in planner.plan(task.goal).plan.steps]
        except PlanningError as exc:
            plan = [f"no plan: {exc}"]
        result[task.key] = {"plan": plan, "calls": calls[first:]}
    out.write_text(json.dumps({"seconds": time.perf_counter() - started, "tasks": result}))


def side(tree: Path, out: Path, args, facts: bool, decoder: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "BARSYM_LOG_DB": "off"}
    cmd = (
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--dump",
            str(tree),
            str(out),
            "--threads",
            str(args.threads),
            "--decoder",
            decoder,
        ]
        + (["--facts"] if facts else [])
        + (["--limit", str(args.limit)] if args.limit else [])
    )
    subprocess.run(cmd, env=env, check=True)
    return json.loads(out.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base")
    parser.add_argument("--base-tree", type=Path)
    parser.add_argument("--limit", type=int)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--facts", action="store_true", help="this tree's prompts with facts (the base has none)")
    parser.add_argument("--decoder", choices=["spans", "tokens"], default="spans")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--dump", nargs=2, metavar=("TREE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        dump(Path(args.dump[1]), args.limit, args.threads, args.facts, args.decoder)
        return 0
    with tempfile.TemporaryDirectory(prefix="barsym-compare-") as tmp:
        base = args.base_tree
        if base is None:
            commit = (
                args.base
                or subprocess.run(
                    ["git", "-C", str(REPO), "merge-base", "HEAD", "main"], check=True, capture_output=True, text=True
                ).stdout.strip()
            )
            base = Path(tmp) / "base"
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "add", "--detach", str(base), commit],
                check=True,
                capture_output=True,
            )
        try:
            load = os.getloadavg()[0]
            old = side(base, Path(tmp) / "old.json", args, facts=False, decoder="tokens")
            new = side(REPO, Path(tmp) / "new.json", args, facts=args.facts, decoder=args.decoder)
        finally:
            if args.base_tree is None:
                subprocess.run(
                    ["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], capture_output=True
                )
    report = compare(old, new)
    report.update(
        load_average_start=round(load, 2),
        load_average_end=round(os.getloadavg()[0], 2),
        facts=args.facts,
        decoder=args.decoder,
    )
    print_report(report)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def compare(old: dict, new: dict) -> dict:
    differ, parted = [], []
    same_calls = total_calls = 0
    for key, before in old["tasks"].items():
        after = new["tasks"].get(key, {"plan": [], "calls": []})
        if before["plan"] != after["plan"]:
            differ.append(key)
        for a, b in zip(before["calls"], after["calls"]):
            total_calls += 1
            if (a["goal"], a["turns"]) != (b["goal"], b["turns"]):
                parted.append({"task": key, "old_goal": a["goal"], "new_goal": b["goal"], "why": "asked differently"})
                break
            if a["reply"] != b["reply"]:
                parted.append(
                    {
                        "task": key,
                        "goal": a["goal"],
                        "attempt_turns": a["turns"],
                        "temperature": a["temperature"],
                        "old": a["reply"],
                        "new": b["reply"],
                    }
                )
                break
            same_calls += 1
    return {
        "tasks": len(old["tasks"]),
        "plans_differ": differ,
        "first_differing_calls": parted,
        "calls_compared": total_calls,
        "calls_same": same_calls,
        "seconds": {"old": round(old["seconds"], 1), "new": round(new["seconds"], 1)},
    }


def print_report(r: dict) -> None:
    print(
        f"bar planner, base commit (token by token, no facts) vs this tree (decoder {r['decoder']}, facts "
        f"{'on' if r['facts'] else 'off'}), {r['tasks']} tasks (load average {r['load_average_start']:.2f} at start, "
        f"{r['load_average_end']:.2f} at end)"
    )
    print(f"  plans that differ: {len(r['plans_differ'])} ({', '.join(r['plans_differ']) or 'none'})")
    print(
        f"  calls compared in order until the first difference per task: {r['calls_same']} of "
        f"{r['calls_compared']} identical"
    )
    for d in r["first_differing_calls"]:
        if "old" in d:
            print(
                f"    {d['task']}: {d['goal']} (turns {d['attempt_turns']}, temperature {d['temperature']}): "
                f"old {d['old']!r} / new {d['new']!r}"
            )
        else:
            print(f"    {d['task']}: old asked {d['old_goal']!r}, new asked {d['new_goal']!r}")
    print(f"  time: old {r['seconds']['old']} s, new {r['seconds']['new']} s")


if __name__ == "__main__":
    sys.exit(main())
