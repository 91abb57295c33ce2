"""Benchmark: the ``bar`` planner with the embedded SmolLM2-135M on BAR's 53 tasks.

    python bench/bench_llm.py [--dataset ../shared/datasets/bar_tech_tree] [--limit N]
                              [--mode graph|vocab] [--threads 2] [--uncached-tasks 2] [--json FILE]

Reports, for the in-process model on ``--threads`` threads (default 2):

- wall time per task (median, max; the model is loaded once, before timing);
- LLM effort per task: goals put to the model (one first call each), retries
  counted separately, accepted answers, real calls and replies reused;
- prompt tokens the model re-evaluated per call, with prefix (KV) caching and,
  on the first ``--uncached-tasks`` tasks, without it (every prompt token
  evaluated), with the time per call in both cases, split into goals' first
  attempts (only the new goal line) and retries (reply + objection appended);
- peak resident memory of the process (``resource.getrusage``).

Targets (issue 4): median < 10 s per task, peak RSS < 1 GiB.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.eval import load_dataset  # noqa: E402
from barsym.kb import load_kb  # noqa: E402
from barsym.llm import LlamaCppBackend, LLMOptions  # noqa: E402
from barsym.planner import PlanningError, make_planner  # noqa: E402

TARGET_MEDIAN_S = 10.0
TARGET_RSS_MIB = 1024.0


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def run(planner, tasks) -> list[dict]:
    rows = []
    for number, task in enumerate(tasks, start=1):
        started = time.perf_counter()
        try:
            result = planner.plan(task.goal)
            stats, verdict = result.stats, result.validation.verdict.value
        except PlanningError as exc:
            stats, verdict = {}, f"no plan ({exc.kind})"
        seconds = time.perf_counter() - started
        rows.append({"task": task.key, "seconds": round(seconds, 3), "verdict": verdict, **{
            k: stats.get(k, 0) for k in ("goals", "llm_goals", "llm_calls", "retries", "reused_replies",
                                         "accepted_first_try", "accepted_after_feedback", "accepted_calls",
                                         "max_accepted_calls_per_goal", "fallbacks", "context_answers",
                                         "graph_forced", "prompt_tokens",
                                         "evaluated_prompt_tokens", "completion_tokens", "llm_seconds")}})
        print(f"  [{number:>2}/{len(tasks)}] {task.key:<32} {seconds:6.2f} s  {rows[-1]['llm_calls']:>3} calls  "
              f"{rows[-1]['verdict']}", file=sys.stderr, flush=True)
    return rows


class CallLog:
    """Wraps the backend to record each call's re-evaluated prompt tokens, split first attempt / retry.

    A goal's first attempt ends with the goal message right after the fixed few-shot
    prefix; a retry carries the model's refused reply and the verifier's objection.
    """

    def __init__(self, backend, prefix_messages: int):
        self.backend, self.prefix = backend, prefix_messages
        self.first: list[int] = []
        self.retry: list[int] = []
        original = backend.complete

        def complete(messages, **kwargs):
            reply = original(messages, **kwargs)
            (self.first if len(messages) == self.prefix + 1 else self.retry).append(reply.evaluated_prompt_tokens or 0)
            return reply

        backend.complete = complete

    def summary(self) -> dict:
        out = {}
        for label, values in (("first_attempts", self.first), ("retries", self.retry)):
            if values:
                out[label] = {"calls": len(values), "median_evaluated": statistics.median(values),
                              "mean_evaluated": round(statistics.fmean(values), 1), "max_evaluated": max(values)}
        return out


def per_call(rows: list[dict], log: CallLog | None = None) -> dict:
    calls = sum(r["llm_calls"] for r in rows)
    if not calls:
        return {"calls": 0}
    return {
        **({"split": log.summary()} if log else {}),
        "calls": calls,
        "prompt_tokens_per_call": round(sum(r["prompt_tokens"] for r in rows) / calls, 1),
        "evaluated_per_call": round(sum(r["evaluated_prompt_tokens"] for r in rows) / calls, 1),
        "completion_per_call": round(sum(r["completion_tokens"] for r in rows) / calls, 1),
        "seconds_per_call": round(sum(r["llm_seconds"] for r in rows) / calls, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "bar_tech_tree")
    parser.add_argument("--limit", type=int, help="only the first N tasks")
    parser.add_argument("--mode", choices=["vocab", "graph"], default="graph")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--uncached-tasks", type=int, default=2, help="tasks to re-run without prefix caching")
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON")
    args = parser.parse_args()

    kb = load_kb()
    tasks = load_dataset(args.dataset, kb)[: args.limit]
    options = LLMOptions(n_threads=args.threads, n_ctx=2048)
    started = time.perf_counter()
    backend = LlamaCppBackend(None, options=options)
    load = time.perf_counter() - started
    planner = make_planner("bar", kb, backend=backend, llm_mode=args.mode)
    log = CallLog(backend, len(planner.decomposer.prompts.prefix))
    print(f"model {backend.model_path.name} loaded in {load:.2f} s; {len(tasks)} tasks, {args.mode} mode, "
          f"{args.threads} threads", file=sys.stderr)
    rows = run(planner, tasks)
    cached = per_call(rows, log)
    rss_after_main = peak_rss_mib()

    uncached: dict = {"calls": 0}
    if args.uncached_tasks:
        print("without prefix caching:", file=sys.stderr)
        with LlamaCppBackend(None, options=options, prefix_cache=False) as cold:
            cold_planner = make_planner("bar", kb, backend=cold, llm_mode=args.mode)
            cold_log = CallLog(cold, len(cold_planner.decomposer.prompts.prefix))
            uncached = per_call(run(cold_planner, tasks[: args.uncached_tasks]), cold_log)

    seconds = [r["seconds"] for r in rows]
    tot = {k: sum(r[k] for r in rows) for k in ("llm_goals", "llm_calls", "retries", "reused_replies",
                                                 "accepted_first_try", "accepted_after_feedback", "fallbacks",
                                                 "context_answers", "graph_forced", "goals", "accepted_calls")}
    n = len(rows)
    most_per_goal = max((r["max_accepted_calls_per_goal"] for r in rows), default=0)
    report = {
        "tasks": n, "mode": args.mode, "threads": args.threads, "model_load_s": round(load, 3),
        "seconds_per_task": {"median": round(statistics.median(seconds), 3), "max": round(max(seconds), 3),
                             "mean": round(statistics.fmean(seconds), 3)},
        "per_task": {k: round(v / n, 2) for k, v in tot.items()},
        "totals": tot,
        "max_accepted_calls_per_distinct_goal": most_per_goal,
        "executable": sum(r["verdict"] in ("valid", "valid with waste") for r in rows),
        "with_prefix_cache": cached, "without_prefix_cache": uncached,
        "peak_rss_mib": round(max(rss_after_main, peak_rss_mib()), 1),
        "peak_rss_mib_main_run": round(rss_after_main, 1),
        "rows": rows,
    }
    s, p = report["seconds_per_task"], report["per_task"]
    print(f"bar planner, embedded {backend.model_path.name}, {args.mode} mode, {args.threads} threads, {n} tasks")
    print(f"  wall time per task: median {s['median']:.2f} s, max {s['max']:.2f} s, mean {s['mean']:.2f} s "
          f"-- target median < {TARGET_MEDIAN_S:g} s: {'met' if s['median'] < TARGET_MEDIAN_S else 'NOT met'}")
    print(f"  executable plans: {report['executable']}/{n}")
    print(f"  per task: {p['goals']:.1f} goals; {p['llm_goals']:.1f} put to the LLM (one first call each), "
          f"{p['retries']:.1f} retries, {p['llm_calls']:.1f} real calls, {p['reused_replies']:.1f} replies reused; "
          f"{p['context_answers']:.1f} from context, {p['graph_forced']:.1f} forced by the graph")
    asked = tot["llm_goals"] or 1
    print(f"  accepted: first try {100 * tot['accepted_first_try'] / asked:.1f} %, after feedback "
          f"{100 * tot['accepted_after_feedback'] / asked:.1f} %, "
          f"symbolic fallback {100 * tot['fallbacks'] / asked:.1f} %")
    print(f"  accepted calls: {p['accepted_calls']:.1f} per task; at most {most_per_goal} per distinct goal "
          f"in any task -- target at most 1: {'met' if most_per_goal <= 1 else 'NOT met'}")
    for label, c in (("with prefix cache", cached), ("without prefix cache", uncached)):
        if c.get("calls"):
            print(f"  {label}: {c['calls']} calls, prompt {c['prompt_tokens_per_call']:.0f} tokens/call, "
                  f"re-evaluated {c['evaluated_per_call']:.1f}/call, completion {c['completion_per_call']:.1f}/call, "
                  f"{c['seconds_per_call']:.3f} s/call")
            for part, v in c.get("split", {}).items():
                print(f"    {part.replace('_', ' ')}: {v['calls']} calls, re-evaluated median "
                      f"{v['median_evaluated']:g}, mean {v['mean_evaluated']:g}, max {v['max_evaluated']} tokens")
    print(f"  peak RSS: {report['peak_rss_mib']:.0f} MiB (main run alone {rss_after_main:.0f} MiB) "
          f"-- target < {TARGET_RSS_MIB:g} MiB: {'met' if report['peak_rss_mib'] < TARGET_RSS_MIB else 'NOT met'}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
