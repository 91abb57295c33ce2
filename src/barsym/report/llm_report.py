"""What an evaluation cost and how far the model could be trusted.

BAR's metrics compare plans with the expert's; they do not say whether a plan
runs, how much of it the model wrote, or what it cost. This summary adds, per
planner run: the executable-plan rate (the validator's verdict), LLM calls and
tokens per task, how often the model's answer was accepted on the first try or
after feedback and how often the symbolic decomposer had to answer instead, and
wall time per task. Everything is read from the per-task ``stats`` the
planners record, so a planner without a model simply reports zeros.
"""

from __future__ import annotations

import statistics

from ..consistency.stats import RepairStats
from ..eval.runner import Evaluation
from ..memory.stats import MemoryStats
from ..planner.stats import LLMStats, PlanStats
from ..reasoning.planners.forward.stats import DepsSummary

#: counters summed over tasks: LLMStats' (the one list of them is that dataclass's fields)
SUMMED = LLMStats.summed()


def _rate(part: float, whole: float) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def summarize(evaluation: Evaluation) -> dict:
    """Executable rate, LLM effort and acceptance, and time per task, as one JSON-ready dict."""
    outcomes = evaluation.outcomes
    tasks = len(outcomes)
    executable = sum(o.result is not None and o.result.validation.valid for o in outcomes)
    totals = dict.fromkeys(SUMMED, 0)
    plan_fallbacks = 0
    most_per_goal = 0  # accepted real calls for one distinct goal of one plan (issue 4's target: at most 1)
    verified = True
    for o in outcomes:
        stats: PlanStats = o.result.stats if o.result is not None else PlanStats()
        verified = verified and stats.llm_verified is not False
        for key, value in stats.counters().items():
            totals[key] += value or 0
        plan_fallbacks += bool(stats.plan_fallback)
        most_per_goal = max(most_per_goal, stats.model.max_accepted_calls_per_goal or 0)
    consistency = _consistency(outcomes)
    deps = _deps(outcomes)
    seconds = [o.seconds for o in outcomes]
    asked = totals["llm_goals"]
    # The rates are over the goals put to the model, and each of those ends accepted first try, after
    # feedback, or given up (fallback, or unanswered for llm-only). ``fallbacks`` and ``unanswered`` also
    # count goals given up *without* a call (backend down, call budget used up): dividing them by
    # ``asked`` printed "symbolic fallback 39200.0 %" once a backend died after its first goal.
    # Those goals are counted apart, as ``not_asked``.
    left = max(0, asked - totals["accepted_first_try"] - totals["accepted_after_feedback"])
    not_asked = max(0, totals["fallbacks"] + totals["unanswered"] - left)
    per_task = {
        key: round(totals[key] / tasks, 2) if tasks else 0.0
        for key in ("llm_calls", "llm_goals", "prompt_tokens", "evaluated_prompt_tokens", "completion_tokens")
    }
    return {
        "tasks": tasks,
        "verified": verified,
        "executable": executable,
        "executable_rate": _rate(executable, tasks),
        "totals": totals,
        "per_task": per_task,
        "first_try_rate": _rate(totals["accepted_first_try"], asked),
        "after_feedback_rate": _rate(totals["accepted_after_feedback"], asked),
        "fallback_rate": _rate(min(totals["fallbacks"], left), asked),
        "unanswered_rate": _rate(min(totals["unanswered"], left), asked),
        "not_asked": not_asked,
        "plan_fallbacks": plan_fallbacks,
        "max_accepted_calls_per_goal": most_per_goal,
        "evaluated_per_call": round(totals["evaluated_prompt_tokens"] / totals["llm_calls"], 1)
        if totals["llm_calls"]
        else None,
        "evaluations_per_call": round(totals["evaluations"] / totals["llm_calls"], 1) if totals["llm_calls"] else None,
        **({"consistency": consistency} if consistency else {}),
        **({"deps": deps} if deps else {}),
        "seconds_per_task": {
            "median": round(statistics.median(seconds), 3) if seconds else 0.0,
            "mean": round(statistics.fmean(seconds), 3) if seconds else 0.0,
            "max": round(max(seconds), 3) if seconds else 0.0,
            "total": round(sum(seconds), 3),
        },
    }


def _consistency(outcomes) -> dict:
    """State consistency's totals over the tasks (bar-sc, --consistency); empty when it did not run."""
    runs = [s for o in outcomes if o.result is not None and (s := o.result.stats.section(RepairStats)) is not None]
    if not runs:
        return {}
    keys = (
        "rounds",
        "windows",
        "repaired_steps",
        "kept_steps",
        "symbolic_fallbacks",
        "scoring_llm_calls",
        "repair_llm_calls",
        "repair_forced",
        "llm_calls",
    )  # which of RepairStats' counters the summary shows
    out = {key: sum(getattr(r, key) or 0 for r in runs) for key in keys}
    out["plans"] = len(runs)
    out["invalid_before"] = sum(not r.valid_before for r in runs)
    out["repaired_to_valid"] = sum(not r.valid_before and r.valid_after for r in runs)
    return out


def _deps(outcomes) -> dict:
    """DEPS' loop over the tasks: the round its own episode first reached the goal, rounds run, context cuts."""
    runs = [s for o in outcomes if o.result is not None and (s := o.result.stats.section(DepsSummary)) is not None]
    if not runs:
        return {}
    rounds: dict[str, int] = {}
    for r in runs:
        key = "never" if r.success_round is None else str(r.success_round)
        rounds[key] = rounds.get(key, 0) + 1
    # records read back from a run file may come from a version that kept fewer fields (DepsSummary.from_dict)
    stopped = [r.stopped for r in runs]
    selectors = sorted({r.selector for r in runs})
    return {
        "plans": len(runs),
        "success_round": rounds,
        "rounds_run": sum(r.rounds for r in runs),
        "trimmed_tasks": sum(r.dropped_rounds > 0 for r in runs),
        "stopped": {s: stopped.count(s) for s in sorted(set(stopped))},
        **({"selector": ", ".join(selectors)} if selectors != ["order"] else {}),
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} %"


def format_summary(summary: dict) -> str:
    s, t, per, sec = summary, summary["totals"], summary["per_task"], summary["seconds_per_task"]
    lines = [
        f"executable plans (validator): {s['executable']}/{s['tasks']} ({_pct(s['executable_rate'])})",
        f"wall time per task: median {sec['median']:.2f} s, max {sec['max']:.2f} s, total {sec['total']:.1f} s",
    ]
    c = s.get("consistency")
    if c:
        lines.append(
            f"state consistency: {c['invalid_before']} of {c['plans']} plans invalid before, "
            f"{c['repaired_to_valid']} repaired to valid; {c['rounds']} rounds, {c['windows']} windows, "
            f"{c['repaired_steps']} steps repaired, {c['symbolic_fallbacks']} symbolic fallbacks; LLM calls "
            f"{c['scoring_llm_calls']} scoring, {c['repair_llm_calls']} repair"
        )
    d = s.get("deps")
    if d:
        found = ", ".join(f"round {k}: {n}" for k, n in sorted(d["success_round"].items()) if k != "never")
        lines.append(
            f"DEPS: the goal reached in its own feedback episodes at {found or 'no round'}; never: "
            f"{d['success_round'].get('never', 0)} of {d['plans']}; {d['rounds_run']} plans executed; "
            f"oldest rounds left out of the prompt in {d['trimmed_tasks']} task(s)"
            + (f"; ready steps picked by the {d['selector']} selector" if d.get("selector") else "")
        )
    if not t["llm_goals"] and not t["llm_calls"]:
        lines.append("LLM: not used by this planner")
        return "\n".join(lines)
    lines += [
        f"goals decomposed: {t['goals']}; put to the LLM: {t['llm_goals']}; answered without a call: "
        f"{t['context_answers']} from context, {t['graph_forced']} forced by the graph",
        f"LLM calls: {t['llm_calls']} ({per['llm_calls']:.1f} per task, {per['llm_goals']:.1f} goals per task; "
        f"{t['retries']} retries, {t['reused_replies']} replies reused; accepted calls {t['accepted_calls']}, "
        f"at most {s['max_accepted_calls_per_goal']} per distinct goal of a plan)",
        f"tokens per task: prompt {per['prompt_tokens']:.0f} (evaluated {per['evaluated_prompt_tokens']:.0f}; "
        f"{s['evaluated_per_call'] if s['evaluated_per_call'] is not None else '-'} per call), "
        f"completion {per['completion_tokens']:.0f} ({s['evaluations_per_call'] or '-'} model evaluations per call)",
        f"LLM answers per goal put to it: accepted first try {_pct(s['first_try_rate'])}, after feedback "
        f"{_pct(s['after_feedback_rate'])}, symbolic fallback {_pct(s['fallback_rate'])}"
        if s["verified"]
        else f"LLM answers per goal put to it (unchecked): used {_pct(s['first_try_rate'])} at once, "
        f"{_pct(s['after_feedback_rate'])} after an unreadable reply, no usable answer {_pct(s['unanswered_rate'])}; "
        f"branches cut because the answers looped: {t['loops_cut']}",
        f"refused by the verifier: {t['rejected']}, unreadable: {t['unreadable']}, backend errors: "
        f"{t['backend_errors']}, plan-level fallbacks: {s['plan_fallbacks']}",
    ]
    if s["not_asked"]:
        went = "answered by the symbolic fallback" if s["verified"] else "left without a step"
        lines.append(
            f"goals given up without an LLM call (backend down, call budget spent, or the graph's only "
            f"step refused): {s['not_asked']}, {went}"
        )
    return "\n".join(lines)


def format_memory(evaluation: Evaluation) -> str:
    """One line on the stage memory over a whole run: goals answered from it, entries refused as stale, few-shot help."""
    stats = [
        s
        for o in evaluation.outcomes
        if o.result is not None and (s := o.result.stats.section(MemoryStats)) is not None
    ]
    hits, misses = sum(s.hits for s in stats), sum(s.misses for s in stats)
    stale, few = sum(s.stale for s in stats), sum(s.examples for s in stats)
    share = f" ({100 * hits / (hits + misses):.1f} %)" if hits + misses else ""
    return (
        f"memory: {hits} of {hits + misses} goal(s) answered from memory{share}, {stale} entries refused as "
        f"stale, {few} goal(s) given remembered examples of close goals"
    )
