"""BAR's table of an evaluation and its per-task differences, as ``barsym eval`` prints them.

:func:`format_table` is the paper's table (Acc, F1, ED per group and overall), or the counts of
plans made when the task set has no expert plans; :func:`format_details` lists every task without a
plan and every plan that differs from the expert's, with why (:func:`~barsym.eval.runner.why`).
"""

from __future__ import annotations

from ..eval.runner import ALL, Evaluation, why


def format_table(evaluation: Evaluation) -> str:
    """The paper's table (Acc, F1, ED per group and overall), or plannability counts."""
    rows = []
    if evaluation.has_references:
        groups = evaluation.groups()
        rows.append(f"{'group':<10} {'tasks':>5} {'Acc':>7} {'F1':>7} {'ED':>6} {'ED ratio':>9} {'exact':>7}")
        for name in evaluation.group_names() + [ALL]:
            g = evaluation.overall() if name == ALL else groups.get(name)
            if g is None:
                continue
            rows.append(
                f"{name:<10} {g.tasks:>5} {g.accuracy:>7.2f} {g.f1:>7.2f} {g.edit_distance:>6.2f} "
                f"{g.edit_distance_ratio:>9.4f} {f'{g.exact}/{g.tasks}':>7}"
            )
    else:
        rows.append(f"{'group':<10} {'tasks':>5} {'planned':>8} {'valid':>6} {'unreachable':>12} {'failed':>7}")
        for name in evaluation.group_names() + [ALL]:
            c = evaluation.counts(None if name == ALL else name)
            rows.append(
                f"{name:<10} {c['tasks']:>5} {c['planned']:>8} {c['valid']:>6} {c['unreachable']:>12} {c['failed']:>7}"
            )
    return "\n".join(rows)


def format_details(evaluation: Evaluation) -> str:
    """Per task: planning failures, and every plan that differs from the expert's, with why."""
    lines = []
    for o in evaluation.outcomes:
        if o.error is not None:
            lines.append(f"{o.task.key}: no plan ({o.error.kind.value}): {o.error.message}")
        elif o.differs:
            lines.append(f"{o.task.key}: differs from the expert plan (edit distance {o.score.edit_distance})")
            lines += [f"    {line}" for line in o.diff_lines()]
            lines.append(f"    why: {why(o)}")
    return "\n".join(lines)
