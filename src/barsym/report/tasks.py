"""``barsym report``'s per-task table: one row per task, and a drill-down under each.

The aggregate tables say *how often*; a reader who doubts a number wants
the task behind it. Each task is one ``<details>`` element (it opens and
closes without any script): the closed row shows the task, its tech-tree
depth and, per run, the verdict, the plan's accuracy against the expert's
and the execution success; opened, it shows per run the planner's plan and
the expert plan side by side, aligned step by step (the step diff: equal
steps plain, changed ones marked), the validator's verdict on both with the
one-sentence reason, the planning error where there was no plan, and the
execution failures where the run executed its plans.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from html import escape

from ..eval.runner import ordered_groups, show_step
from ..validation import Verdict
from .parts import rate_text

#: verdict -> the badge's CSS class
BADGE = {Verdict.VALID.value: "ok", Verdict.WASTEFUL.value: "warn", Verdict.INVALID.value: "bad"}
#: failure lines shown per execution (the run file has them all)
SHOWN_FAILURES = 5

STYLE = """
.tasks .row{display:grid;gap:6px;align-items:center;padding:3px 6px;border-bottom:1px solid #e4e4e4}
.tasks .head{font-weight:600;background:#f3f3f3}
.tasks summary{cursor:pointer;list-style:none}.tasks summary::-webkit-details-marker{display:none}
.tasks summary .key::before{content:"\\25B8  ";color:#666}.tasks details[open]>summary .key::before{content:"\\25BE  "}
.tasks details[open]>summary{background:#eef4fb}
.badge{display:inline-block;padding:0 6px;border-radius:3px;font-size:12px;white-space:nowrap}
.badge.ok{background:#d9f0e3}.badge.warn{background:#fbeccb}.badge.bad{background:#f8d4d0}.badge.none{color:#999}
.drill{padding:6px 14px 14px 26px;border-bottom:1px solid #ccc}.drill h4{margin:12px 0 4px;font-size:14px}
table.diff td{font:12px/1.35 ui-monospace,Menlo,Consolas,monospace;text-align:left}
table.diff td.n{color:#888;text-align:right}table.diff th{text-align:left}
table.diff tr.replace td{background:#fff4d6}table.diff tr.delete td{background:#fde2df}
table.diff tr.insert td{background:#dff3e6}.drill p{margin:4px 0}.drill ul{margin:4px 0;padding-left:20px}
"""


def task_keys(runs) -> list[str]:
    """Every task of any run, by group in the paper's order, then in the order the runs name them."""
    seen: dict[str, str] = {}
    for run in runs:
        for r in run.records:
            seen.setdefault(r["key"], r["group"])
    order = {g: i for i, g in enumerate(ordered_groups(seen.values()))}
    return sorted(seen, key=lambda k: order[seen[k]])  # stable: the runs' order inside a group


def _number(value) -> float | None:
    """A finite number from a record, or None (a record is a file anyone may have edited)."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def _badge(record: dict | None) -> str:
    if record is None:
        return '<span class="badge none">not in this run</span>'
    if not record.get("planned"):
        return f'<span class="badge bad">no plan ({escape(str(record.get("error_kind", "?")))})</span>'
    verdict = str(record.get("verdict", "?"))
    parts = [verdict]
    if _number(record.get("accuracy")) is not None:
        parts.append(f"Acc {_number(record['accuracy']):.0f}")
    ran = (record.get("execution") or {}).get("planner")
    if ran:
        parts.append(f"runs {ran['successes']}/{ran['runs']}")
    return f'<span class="badge {BADGE.get(verdict, "none")}">{escape(" · ".join(parts))}</span>'


def diff_table(plan: list[dict], expert: list[dict] | None, label: str) -> str:
    """The two plans side by side, aligned by difflib: equal, changed, only in the plan, only in the expert's."""
    ours = [show_step(r) for r in plan]
    if expert is None:
        rows = [("equal", i + 1, step, "", "") for i, step in enumerate(ours)]
        head = ["#", f"plan ({label})", "", "expert plan (none recorded for this task)"]
    else:
        theirs = [show_step(r) for r in expert]
        rows = []
        for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=ours, b=theirs, autojunk=False).get_opcodes():
            for i in range(max(a1 - a0, b1 - b0)):
                a, b = a0 + i, b0 + i
                left = ours[a] if a < a1 else ""
                right = theirs[b] if b < b1 else ""
                kind = op if op != "replace" or (left and right) else ("delete" if left else "insert")
                rows.append((kind, a + 1 if left else "", left, b + 1 if right else "", right))
        head = ["#", f"plan ({label})", "#", "expert plan"]
    body = "".join(
        f'<tr class="{kind}"><td class="n">{a}</td><td>{escape(left)}</td><td class="n">{b}</td>'
        f"<td>{escape(right)}</td></tr>"
        for kind, a, left, b, right in rows
    )
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    return f'<table class="diff"><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>'


def _execution(record: dict, plan: list[dict]) -> str:
    """The runs of the plan (and of the expert plan): success with its interval, failures by step and code."""
    execution = record.get("execution") or {}
    lines = []
    for who in ("planner", "expert"):
        e = execution.get(who)
        if not e:
            continue
        name = "the plan" if who == "planner" else "the expert plan"
        lines.append(
            f"<p>{name} in the {escape(str(e.get('world', '?')))} world: {e['successes']}/{e['runs']} runs "
            f"succeeded, {escape(rate_text(e['successes'], e['runs']))}</p>"
        )
        failures = sorted(e.get("failures") or [], key=lambda f: -int(f.get("count", 0)))
        items = []
        for f in failures[:SHOWN_FAILURES]:
            step = f.get("step")
            steps = plan if who == "planner" else record.get("expert_plan") or []
            where = (
                f"step {step} ({show_step(steps[step - 1])})"
                if isinstance(step, int) and 0 < step <= len(steps)
                else f"step {step}"
                if step is not None
                else "the end (goal check)"
            )
            items.append(f"<li>{int(f.get('count', 0))} failed at {escape(where)}: {escape(str(f.get('code')))}</li>")
        if len(failures) > SHOWN_FAILURES:
            items.append(f"<li>and {len(failures) - SHOWN_FAILURES} other kinds of failure</li>")
        if items:
            lines.append(f"<ul>{''.join(items)}</ul>")
        if e.get("description"):
            lines.append(f"<p>a typical failed run: {escape(str(e['description']))}</p>")
    return "".join(lines)


def drill_down(record: dict, label: str, expert: list[dict] | None) -> str:
    """One run's view of one task: verdicts and why, the aligned plans, the executions."""
    parts = [f"<h4>{escape(label)}</h4>"]
    expert = record.get("expert_plan") or expert
    if not record.get("planned"):
        parts.append(f"<p>no plan ({escape(str(record.get('error_kind')))}): {escape(str(record.get('error')))}</p>")
        if expert:
            parts.append(diff_table([], expert, label))
        return "".join(parts)
    verdict = f"verdict: {escape(str(record.get('verdict')))}"
    if record.get("expert_verdict"):
        verdict += f"; expert plan: {escape(str(record['expert_verdict']))}"
    acc, f1, distance = (_number(record.get(k)) for k in ("accuracy", "f1", "edit_distance"))
    if acc is not None:
        verdict += f"; Acc {acc:.1f}" + (f", F1 {f1:.1f}" if f1 is not None else "")
        verdict += f", edit distance {distance:.0f}" if distance is not None else ""
    parts.append(f"<p>{verdict}</p>")
    if record.get("why"):
        parts.append(f"<p>why they differ: {escape(str(record['why']))}</p>")
    elif record.get("matches_expert"):
        parts.append("<p>the plan is the expert plan, step for step</p>")
    plan = record.get("plan") if isinstance(record.get("plan"), list) else []
    parts.append(diff_table(plan, expert, label))
    parts.append(_execution(record, plan))
    return "".join(parts)


def task_section(runs, depth_of: Callable[[dict], int | None], experts: dict[str, list[dict]] | None = None) -> str:
    """The per-task table: a row per task of any run, each opening onto every run's drill-down."""
    keys = task_keys(runs)
    if not keys:
        return ""
    experts = experts or {}
    by_run = [{r["key"]: r for r in run.records} for run in runs]
    columns = f"minmax(180px,1.4fr) 50px repeat({len(runs)},minmax(120px,1fr))"
    head = "".join(f"<div>{escape(x)}</div>" for x in ["task", "depth", *[run.label for run in runs]])
    rows = [f'<div class="row head" style="grid-template-columns:{columns}">{head}</div>']
    for key in keys:
        records = [records.get(key) for records in by_run]
        first = next(r for r in records if r is not None)
        depth = depth_of(first)
        cells = "".join(f"<div>{_badge(r)}</div>" for r in records)
        inner = "".join(drill_down(r, run.label, experts.get(key)) for run, r in zip(runs, records) if r is not None)
        rows.append(
            f'<details id="task-{escape(key)}"><summary class="row" style="grid-template-columns:{columns}">'
            f'<div class="key">{escape(key)}</div><div>{"-" if depth is None else depth}</div>{cells}'
            f'</summary><div class="drill">{inner}</div></details>'
        )
    return (
        f'<section class="tasks"><h2>Per task ({len(keys)} tasks; open a row for the plans, the step diff, '
        f"the verdicts and the execution failures)</h2>{''.join(rows)}</section>"
    )
