"""Benchmark: the ``bar`` planner with the embedded SmolLM2-135M on BAR's 53 tasks.

    python bench/bench_llm.py [--dataset ../shared/datasets/bar_tech_tree] [--limit N]
                              [--mode graph|vocab] [--threads 2] [--no-facts] [--decoder spans|tokens]
                              [--check-decoder] [--uncached-tasks 2] [--json FILE]

Reports, for the in-process model on ``--threads`` threads (default 2), in one process:

- wall time per task (median, max; the model is loaded and its few-shot prefix primed before timing);
- BAR's Acc/F1 of ``bar`` next to the ``symbolic`` planner's on the same tasks, and executable plans;
- LLM effort: goals put to the model, retries, first-try / after-feedback acceptance, symbolic fallback;
- per call: prompt tokens re-evaluated, reply tokens, **model evaluations** (token by token: one per reply
  token plus the prompt; forced-span decoding: one per choice point) and seconds;
- peak resident memory of the process (``resource.getrusage``).

``--no-facts`` leaves the knowledge base's facts out of the prompts (the prompt as before issue 13);
``--decoder tokens`` decodes token by token through llama.cpp's sampler (the old path).
``--check-decoder`` also answers every greedy call token by token on a second model instance with the
same prompt and counts the replies that differ (it makes the run slower; timings then mean little).

Targets (issue 13): median <= 2 s per task, first-try acceptance >= 85 %, symbolic fallback <= 5 % of
the goals put to the model, Acc/F1 of bar within 0.5 of symbolic, all plans executable, RSS < 1 GiB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.eval import evaluate, load_dataset  # noqa: E402
from barsym.kb import cache_dir, load_kb  # noqa: E402
from barsym.llm import LlamaCppBackend, LLMOptions  # noqa: E402
from barsym.planner import make_planner  # noqa: E402
from barsym.reasoning.planners.backward.llm_planners import STATE_DIR  # noqa: E402

TARGETS = {"median_s": 2.0, "first_try": 85.0, "fallback": 5.0, "score_gap": 0.5, "rss_mib": 1024.0}
#: the columns this benchmark totals: fields of barsym.planner.stats.LLMStats (getattr fails on a wrong name)
SUMMED = (
    "goals",
    "llm_goals",
    "llm_calls",
    "retries",
    "reused_replies",
    "accepted_first_try",
    "accepted_after_feedback",
    "accepted_calls",
    "fallbacks",
    "context_answers",
    "graph_forced",
    "prompt_tokens",
    "evaluated_prompt_tokens",
    "completion_tokens",
    "evaluations",
    "drafted_tokens",
    "llm_seconds",
)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


class DecoderCheck:
    """Answers each greedy grammar call a second time, token by token, and records where the replies differ."""

    def __init__(self, backend, twin):
        self.calls, self.differ = 0, []
        original = backend.complete

        def complete(messages, **kw):
            reply = original(messages, **kw)
            if kw.get("grammar") and not kw.get("temperature"):
                self.calls += 1
                other = twin.complete(messages, **kw)
                if other.text != reply.text:
                    self.differ.append(
                        {"goal": messages[-1]["content"].splitlines()[0], "spans": reply.text, "tokens": other.text}
                    )
            return reply

        backend.complete = complete


def run(planner, tasks, kb, label: str):
    def show(number, total, outcome):
        calls = outcome.result.stats.model.llm_calls if outcome.result is not None else 0
        verdict = outcome.result.validation.verdict.value if outcome.result is not None else "no plan"
        print(
            f"  [{number:>2}/{total}] {outcome.task.key:<32} {outcome.seconds:6.2f} s  {calls:>3} calls  {verdict}",
            file=sys.stderr,
            flush=True,
        )

    print(f"{label}:", file=sys.stderr)
    return evaluate(tasks, planner, kb, name=planner.name, progress=show)


def totals(evaluation) -> dict:
    out = dict.fromkeys(SUMMED, 0)
    for outcome in evaluation.outcomes:
        if outcome.result is None:
            continue
        for key in SUMMED:  # the model's counters (PlanStats.llm), seconds as the JSON rounds them
            value = getattr(outcome.result.stats.model, key)
            out[key] += round(value, 3) if isinstance(value, float) else value
    return out


def per_call(tot: dict) -> dict:
    calls = tot["llm_calls"]
    if not calls:
        return {"calls": 0}
    return {
        "calls": calls,
        **{
            f"{k}_per_call": round(tot[k] / calls, 2)
            for k in ("prompt_tokens", "evaluated_prompt_tokens", "completion_tokens", "evaluations", "llm_seconds")
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "bar_tech_tree")
    parser.add_argument("--limit", type=int, help="only the first N tasks")
    parser.add_argument("--mode", choices=["vocab", "graph"], default="graph")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-facts", action="store_true", help="prompts without the knowledge base's facts")
    parser.add_argument("--decoder", choices=["spans", "tokens"], default="spans")
    parser.add_argument("--check-decoder", action="store_true", help="compare every greedy reply with token-by-token")
    parser.add_argument("--uncached-tasks", type=int, default=0, help="tasks to re-run without prefix caching")
    parser.add_argument("--json", type=Path, help="also write the numbers as JSON")
    args = parser.parse_args()

    kb = load_kb()
    tasks = load_dataset(args.dataset, kb)[: args.limit]
    options = LLMOptions(n_threads=args.threads, n_ctx=2048)
    started = time.perf_counter()
    backend = LlamaCppBackend(None, options=options, decoder=args.decoder, state_dir=cache_dir() / STATE_DIR)
    load = time.perf_counter() - started
    facts = not args.no_facts
    planner = make_planner("bar", kb, backend=backend, llm_mode=args.mode, facts=facts)
    primed = backend.prime(list(planner.decomposer.prompts.prefix))
    check = None
    if args.check_decoder:
        check = DecoderCheck(backend, LlamaCppBackend(None, options=options, decoder="tokens"))
    load_avg = os.getloadavg()
    print(
        f"model {backend.model_path.name} loaded in {load:.2f} s; prefix {primed}; {len(tasks)} tasks, "
        f"{args.mode} mode, {args.threads} threads, decoder {args.decoder}, facts {'on' if facts else 'off'}; "
        f"load average {load_avg[0]:.2f}",
        file=sys.stderr,
    )
    bar = run(planner, tasks, kb, "bar")
    rss_main = peak_rss_mib()
    symbolic = evaluate(tasks, make_planner("symbolic", kb), kb, name="symbolic")
    uncached = {"calls": 0}
    if args.uncached_tasks:
        with LlamaCppBackend(None, options=options, prefix_cache=False, decoder=args.decoder) as cold:
            cold_planner = make_planner("bar", kb, backend=cold, llm_mode=args.mode, facts=facts, log=False)
            uncached = per_call(totals(run(cold_planner, tasks[: args.uncached_tasks], kb, "without prefix caching")))

    tot = totals(bar)
    seconds = [o.seconds for o in bar.outcomes]
    n = len(bar.outcomes)
    asked = tot["llm_goals"] or 1
    b, s = bar.overall(), symbolic.overall()
    report = {
        "tasks": n,
        "mode": args.mode,
        "threads": args.threads,
        "decoder": args.decoder,
        "facts": facts,
        "model_load_s": round(load, 3),
        "prefix": {"source": primed.source, "tokens": primed.tokens, "seconds": round(primed.seconds, 3)}
        if primed
        else None,
        "load_average_start": round(load_avg[0], 2),
        "load_average_end": round(os.getloadavg()[0], 2),
        "seconds_per_task": {
            "median": round(statistics.median(seconds), 3),
            "max": round(max(seconds), 3),
            "mean": round(statistics.fmean(seconds), 3),
        },
        "acc": {"bar": round(b.accuracy, 2), "symbolic": round(s.accuracy, 2)},
        "f1": {"bar": round(b.f1, 2), "symbolic": round(s.f1, 2)},
        "executable": sum(o.result is not None and o.result.validation.valid for o in bar.outcomes),
        "first_try_pct": round(100 * tot["accepted_first_try"] / asked, 1),
        "after_feedback_pct": round(100 * tot["accepted_after_feedback"] / asked, 1),
        "fallback_pct": round(100 * tot["fallbacks"] / asked, 1),
        "totals": tot,
        "with_prefix_cache": per_call(tot),
        "without_prefix_cache": uncached,
        "peak_rss_mib": round(max(rss_main, peak_rss_mib()), 1),
        "decoder_check": {"calls": check.calls, "differ": check.differ} if check else None,
        "plans": {o.task.key: [str(step) for step in o.result.plan.steps] if o.result else None for o in bar.outcomes},
    }
    print_report(report, backend)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


def met(ok: bool) -> str:
    return "met" if ok else "NOT met"


def print_report(r: dict, backend) -> None:
    t, sec = r["totals"], r["seconds_per_task"]
    n = r["tasks"]
    print(
        f"bar planner, embedded {backend.model_path.name}, {r['mode']} mode, {r['threads']} threads, {n} tasks, "
        f"decoder {r['decoder']}, facts {'on' if r['facts'] else 'off'} "
        f"(load average {r['load_average_start']:.2f} at start, {r['load_average_end']:.2f} at end)"
    )
    print(
        f"  wall time per task: median {sec['median']:.2f} s, max {sec['max']:.2f} s, mean {sec['mean']:.2f} s "
        f"-- target median <= {TARGETS['median_s']:g} s: {met(sec['median'] <= TARGETS['median_s'])}"
    )
    gap = max(abs(r["acc"]["bar"] - r["acc"]["symbolic"]), abs(r["f1"]["bar"] - r["f1"]["symbolic"]))
    print(
        f"  Acc bar {r['acc']['bar']:.2f} / symbolic {r['acc']['symbolic']:.2f}; F1 bar {r['f1']['bar']:.2f} / "
        f"symbolic {r['f1']['symbolic']:.2f} -- target within {TARGETS['score_gap']:g}: "
        f"{met(gap <= TARGETS['score_gap'])}"
    )
    print(f"  executable plans: {r['executable']}/{n} -- {met(r['executable'] == n)}")
    print(
        f"  per task: {t['goals'] / n:.1f} goals; {t['llm_goals'] / n:.1f} put to the LLM, {t['retries'] / n:.1f} "
        f"retries, {t['llm_calls'] / n:.1f} real calls, {t['reused_replies'] / n:.1f} replies reused; "
        f"{t['context_answers'] / n:.1f} from context, {t['graph_forced'] / n:.1f} forced by the graph"
    )
    print(
        f"  accepted: first try {r['first_try_pct']:.1f} % -- target >= {TARGETS['first_try']:g} %: "
        f"{met(r['first_try_pct'] >= TARGETS['first_try'])}; after feedback {r['after_feedback_pct']:.1f} %; "
        f"symbolic fallback {r['fallback_pct']:.1f} % -- target <= {TARGETS['fallback']:g} %: "
        f"{met(r['fallback_pct'] <= TARGETS['fallback'])}"
    )
    for label, c in (
        ("with prefix cache", r["with_prefix_cache"]),
        ("without prefix cache", r["without_prefix_cache"]),
    ):
        if c.get("calls"):
            print(
                f"  {label}: {c['calls']} calls, prompt {c['prompt_tokens_per_call']:.0f} tokens/call, "
                f"re-evaluated {c['evaluated_prompt_tokens_per_call']:.1f}/call, reply "
                f"{c['completion_tokens_per_call']:.1f} tokens in {c['evaluations_per_call']:.1f} model "
                f"evaluations/call, {c['llm_seconds_per_call']:.3f} s/call"
            )
    if r["decoder_check"]:
        d = r["decoder_check"]
        print(f"  decoder check: {len(d['differ'])} of {d['calls']} greedy replies differ from token-by-token")
        for case in d["differ"]:
            print(f"    {case['goal']}: spans {case['spans']!r} / tokens {case['tokens']!r}")
    print(
        f"  peak RSS: {r['peak_rss_mib']:.0f} MiB -- target < {TARGETS['rss_mib']:g} MiB: "
        f"{met(r['peak_rss_mib'] < TARGETS['rss_mib'])}"
    )


if __name__ == "__main__":
    sys.exit(main())
