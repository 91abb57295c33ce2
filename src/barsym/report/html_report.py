"""``barsym report RUN... -o report.html``: runs of several planners side by side, in one HTML file.

The input is what ``barsym eval --run FILE`` wrote (a header naming the run,
one record per task), so a report can be made from any mix of finished,
resumed or still-running evaluations without running anything again. The
output is a single self-contained file -- inline CSS, inline SVG charts drawn
by :mod:`.svg`, no script or font from anywhere -- because reports get mailed,
archived and opened offline.

Sections (each only where the runs carry its data): BAR's Acc / F1 per group
and planner; executable-plan rate, LLM calls, acceptance and fallback rates
and time per task; execution success per world and group; DEPS's rounds; and
how the simulator's and the model's step scores agreed (state consistency).
"""

from __future__ import annotations

import statistics
import time

from ..consistency.stats import RepairStats
from ..eval.runner import ALL, ordered_groups
from ..reasoning.planners.forward.stats import DepsSummary
from ..redact import escape_controls
from .compare import comparison_note, depth_of, depth_section, experts_from_datasets, shared_tasks
from .parts import INTERVAL_NOTE, note, rate_text
from .parts import pct as _pct
from .parts import section as _section
from .parts import table as _table
from .run_model import runs_table
from .runs import Run, load_runs  # noqa: F401 -- load_runs still importable from here
from .svg import Series, bar_chart
from .tasks import STYLE as TASK_STYLE
from .tasks import task_section


def _scores_section(runs: list[Run]) -> str:
    groups = ordered_groups(g for run in runs for g in run.groups())
    scored = [(run, run.scores()) for run in runs]
    if not any(s for _, s in scored):
        return _section("Plan similarity", "<p>These runs have no expert plans to compare with.</p>")
    columns = groups + [ALL]
    rows = []
    for run, scores in scored:
        for metric in ("accuracy", "f1"):
            rows.append(
                [run.label, "Acc" if metric == "accuracy" else "F1"]
                + [f"{getattr(scores[g], metric):.2f}" if g in scores else "-" for g in columns]
            )
    charts = "".join(
        bar_chart(
            f"{name} per group",
            columns,
            [Series(run.label, [getattr(s[g], metric) if g in s else None for g in columns]) for run, s in scored],
            y_max=100.0,
        )
        for name, metric in (("AccuracyHard", "accuracy"), ("F1ScoreHard", "f1"))
    )
    return _section(
        "Plan similarity (BAR's AccuracyHard and F1ScoreHard, %)", _table(["planner", "metric", *columns], rows), charts
    )


def _cost_section(runs: list[Run]) -> str:
    summaries = [(run, run.summary()) for run in runs]
    rows = []
    for run, s in summaries:
        sec = s["seconds_per_task"]
        rows.append(
            [
                run.label,
                str(s["tasks"]),
                rate_text(s["executable"], s["tasks"]),
                f"{s['per_task']['llm_calls']:.1f}",
                _pct(s["first_try_rate"]),
                _pct(s["after_feedback_rate"]),
                _pct(s["fallback_rate"]),
                str(s["plan_fallbacks"]),
                f"{sec['median']:.2f}",
                f"{sec['mean']:.2f}",
                f"{sec['max']:.2f}",
            ]
        )
    labels = [run.label for run, _ in summaries]

    def one(title, values, unit="", y_max=None):
        return bar_chart(title, labels, [Series("all tasks", values)], unit=unit, y_max=y_max)

    charts = (
        one("Executable plans (validator), %", [s["executable_rate"] for _, s in summaries], y_max=100.0)
        + one("LLM calls per task", [s["per_task"]["llm_calls"] for _, s in summaries])
        + bar_chart(
            "Answers per goal put to the LLM, %",
            labels,
            [
                Series("accepted first try", [s["first_try_rate"] for _, s in summaries]),
                Series("after feedback", [s["after_feedback_rate"] for _, s in summaries]),
                Series("symbolic fallback", [s["fallback_rate"] for _, s in summaries]),
            ],
            y_max=100.0,
        )
        + bar_chart(
            "Seconds per task",
            labels,
            [
                Series("median", [s["seconds_per_task"]["median"] for _, s in summaries]),
                Series("mean", [s["seconds_per_task"]["mean"] for _, s in summaries]),
            ],
        )
    )
    head = [
        "planner",
        "tasks",
        "executable",
        "LLM calls / task",
        "first try",
        "after feedback",
        "fallback",
        "plan-level fallbacks",
        "s / task median",
        "mean",
        "max",
    ]
    answers = []  # the acceptance rates again, with their intervals, for the runs that asked a model
    for run, s in summaries:
        t = s["totals"]
        asked = t["llm_goals"]
        if asked:
            left = max(0, asked - t["accepted_first_try"] - t["accepted_after_feedback"])
            answers.append(
                [
                    run.label,
                    str(asked),
                    rate_text(t["accepted_first_try"], asked),
                    rate_text(t["accepted_after_feedback"], asked),
                    rate_text(min(t["fallbacks"], left), asked),
                ]
            )
    detail = (
        _table(
            ["planner", "goals put to the LLM", "accepted first try", "after feedback", "symbolic fallback"], answers
        )
        if answers
        else ""
    )
    return _section(
        "Cost and trust: executable plans, LLM calls, acceptance, time",
        _table(head, rows),
        note("Executable: the validator's verdict (valid, or valid with waste). " + INTERVAL_NOTE),
        detail,
        charts,
    )


def _world(run: Run) -> dict:
    """The run header's world (name, runs), ``{}`` for a run without one."""
    return (run.header.get("spec") or {}).get("world") or {}


def _world_section(runs: list[Run]) -> str:
    executed = [run for run in runs if any("execution" in r for r in run.records)]
    if not executed:
        return ""
    parts = []
    worlds = sorted({_world(run).get("name", "?") for run in executed})
    for world in worlds:
        chosen = [run for run in executed if _world(run).get("name") == world]
        groups = ordered_groups(g for run in chosen for g in run.groups()) + [ALL]
        rates, tallies = [], []
        for run in chosen:
            per: dict[str, list[int]] = {}
            planned_runs = int(_world(run).get("runs") or 0)
            for r in run.records:
                e = (r.get("execution") or {}).get("planner")
                total = e["runs"] if e else planned_runs  # no plan: every run failed
                for name in (r["group"], ALL):
                    acc = per.setdefault(name, [0, 0])
                    acc[0] += e["successes"] if e else 0
                    acc[1] += total
            tallies.append(per)
            rates.append(
                Series(run.label, [100.0 * per[g][0] / per[g][1] if g in per and per[g][1] else None for g in groups])
            )
        rows = [
            [run.label] + [rate_text(*counts[g]) if g in counts else "-" for g in groups]
            for run, counts in zip(chosen, tallies)
        ]
        parts.append(_table(["planner", *groups], rows))
        parts.append(bar_chart(f"Success in the {world} world per group, %", groups, rates, y_max=100.0))
    return _section(
        "Execution: success rate per world and group (runs that reached the goal)", note(INTERVAL_NOTE), *parts
    )


def _deps_section(runs: list[Run]) -> str:
    """DEPS's explain-and-replan rounds, from ``stats["deps"]`` (rounds run, the round that succeeded)."""
    rows, series = [], []
    for run in runs:
        deps = [d for d in (run.stats(r).section(DepsSummary) for r in run.records) if d is not None]
        if not deps:
            continue
        top = max(int(d.rounds or 0) for d in deps) or 1
        won = [d.success_round for d in deps if isinstance(d.success_round, int)]
        by_round = [100.0 * sum(1 for n in won if n <= k) / len(deps) for k in range(1, top + 1)]
        rows.append(
            [
                run.label,
                str(len(deps)),
                f"{statistics.fmean(int(d.rounds or 0) for d in deps):.2f}",
                str(top),
                rate_text(len([n for n in won if n <= top]), len(deps)),
            ]
        )
        series.append((run.label, by_round))
    if not rows:
        return ""
    top = max(len(v) for _, v in series)
    chart = bar_chart(
        "Success within N rounds (DEPS), %",
        [str(k) for k in range(1, top + 1)],
        [Series(label, v + [v[-1]] * (top - len(v))) for label, v in series],
        y_max=100.0,
    )
    return _section("DEPS rounds", _table(["planner", "tasks", "mean rounds", "most", "succeeded"], rows), chart)


def _agreement_section(runs: list[Run]) -> str:
    """State consistency: repairs made and, where recorded, how the two step scorers agreed."""
    rows = []
    for run in runs:
        stats = [s for s in (run.stats(r).section(RepairStats) for r in run.records) if s is not None]
        if not stats:
            continue
        pairs = [
            (a, b)
            for s in stats
            for a, b in zip((s.step_scores or {}).get("simulator", []), (s.step_scores or {}).get("llm", []))
            if b is not None
        ]
        agree = [a == b for a, b in pairs]
        rows.append(
            [
                run.label,
                str(len(stats)),
                str(sum(not s.valid_before for s in stats)),
                str(sum(not s.valid_before and s.valid_after for s in stats)),
                str(sum(s.repaired_steps for s in stats)),
                str(sum(s.scoring_llm_calls or 0 for s in stats)),
                f"{100 * statistics.fmean(agree):.1f} % of {len(agree)} steps" if agree else "not recorded",
            ]
        )
    if not rows:
        return ""
    head = [
        "planner",
        "plans",
        "invalid before",
        "repaired to valid",
        "steps repaired",
        "scoring LLM calls",
        "step scores the simulator and the LLM agree on",
    ]
    return _section("State consistency and step-score agreement", _table(head, rows))


STYLE = """
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;max-width:1100px;color:#222}
h1{font-size:22px}h2{font-size:17px;margin-top:30px;border-bottom:1px solid #ddd;padding-bottom:4px}
table{border-collapse:collapse;margin:10px 0 16px}th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}
svg.chart{display:inline-block;vertical-align:top;margin:8px 24px 18px 0}svg .title{font-size:14px;font-weight:600}
svg .legend,svg .axis{font-size:11px;fill:#333}svg .value{font-size:9px;fill:#444}
svg .grid{stroke:#e4e4e4}svg .base{stroke:#555}.meta{color:#666;font-size:12px}
.note{color:#555;font-size:12px;margin:4px 0 10px}td{white-space:nowrap}
.settings{white-space:normal;display:inline-block;max-width:26em;font-size:12px}
.compare{background:#fff8e1;border-left:4px solid #E69F00;padding:6px 10px}
"""


def render(runs: list[Run], kb=None) -> str:
    """The whole report as one HTML document (``kb``: for the goals' depths; default the built-in one)."""
    if kb is None:
        from ..kb import load_kb

        mc = next((str((r.header.get("spec") or {}).get("mc_version") or "") for r in runs), "") or "1.16.5"
        kb = load_kb(mc)
    compared, said = shared_tasks(runs)
    listing = runs_table(runs, compared)
    body = "".join(
        [
            _scores_section(compared),
            _cost_section(compared),
            depth_section(compared, kb),
            _world_section(compared),
            _deps_section(compared),
            _agreement_section(compared),
            task_section(runs, depth_of(kb, runs[0]) if runs else (lambda r: None), experts_from_datasets(runs, kb)),
        ]
    )
    made = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    # every name on the page (tasks, groups, files, planners, items) comes from run files: a NUL, an ESC or
    # U+202E (which reverses how the text after it reads) is shown as \x00, \x1b, \u202e, never raw
    return escape_controls(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>barsym report</title><style>{STYLE}{TASK_STYLE}</style></head><body>"
        f'<h1>barsym evaluation report</h1><p class="meta">{len(runs)} run(s); made {made}</p>'
        f"{listing}{comparison_note(said)}{body}"
        "<script>console.log('barsym report: ' + document.querySelectorAll('svg.chart').length + "
        "' charts')</script></body></html>\n"
    )
