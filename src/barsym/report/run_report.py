"""What ``barsym eval`` prints and writes of a finished run: BAR's table, the run's cost, the differences.

The text is, in order: the planner and task set, Acc / F1 / ED per group,
what the run cost (executable plans, LLM calls, tokens, time), the stage
memory's line, the execution table when plans were executed in a world,
then every task whose plan differs from the expert plan. The record is the
evaluation as JSON with the same summary (and the executions). A script that
runs :func:`~barsym.eval.scale.run_evaluation` itself gets both from here, and
what went wrong in words (:class:`RunReport`): the CLI prints those lines and
exits 1, a script can assert on them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..eval.scale import EvaluationRun
from ..kb import Rules
from ..sim.options import ExecutionOptions
from . import plancraft
from .execution import execution_record, format_execution, group_executions
from .llm_report import format_memory, format_summary, summarize
from .tables import format_details, format_table


def execution_part(run: EvaluationRun, options: ExecutionOptions) -> tuple[str, dict] | None:
    """With a world: the table of success rates per group, and the record of every task's runs; else None."""
    if options.world is None:
        return None
    rows = group_executions(run.evaluation, run.executions, options.episodes)
    table = format_execution(rows, options.world, options.episodes, options.world_seed)
    return table, execution_record(rows, run.executions, options.world, options.episodes, options.world_seed)


def report_text(
    run: EvaluationRun,
    label: str,
    dataset: str,
    tasks: int,
    *,
    memory: bool = False,
    execution: str | None = None,
    recorded: str | None = None,
    quiet: bool = False,
) -> str:
    """The report; ``memory``: a line on the stage memory, ``execution``: the table of :func:`execution_part`,
    ``recorded``: what was recorded into the memory; ``quiet``: without the per-task differences."""
    evaluation = run.evaluation
    used = evaluation.first_stats().llm_mode  # what the planner ran (deps and cot: vocab), not the option
    mode = f" ({used} mode)" if used is not None else ""
    lines = [f"planner {label}{mode} on {dataset} ({tasks} tasks)", format_table(evaluation), ""]
    lines.append(format_summary(summarize(evaluation)))
    if memory:
        lines.append(format_memory(evaluation))
    if execution is not None:
        lines += ["", execution]
    if recorded is not None:
        lines += ["", recorded]
    details = format_details(evaluation)
    if details and not quiet:
        lines += ["", details]
    return "\n".join(lines) + "\n"


def report_record(run: EvaluationRun, executed: dict | None = None) -> dict:
    """The evaluation as plain data with its summary, and the executions (``execution_part``'s record) if any."""
    report = {**run.evaluation.to_dict(), "summary": summarize(run.evaluation)}
    if executed is not None:
        report["execution"] = executed
    return report


@dataclass
class RunReport:
    """A finished run as shown: the text, the JSON record, and what went wrong (``problems``: exit 1)."""

    text: str
    record: dict
    problems: list[str]
    warnings: list[str] = field(default_factory=list)


def tech_tree_report(
    run: EvaluationRun,
    label: str,
    dataset: str,
    tasks: int,
    executed: tuple[str, dict] | None,
    *,
    memory: bool = False,
    recorded: str | None = None,
    quiet: bool = False,
) -> RunReport:
    """BAR's and DEPS' task sets: :func:`report_text` and :func:`report_record`, with the tasks that failed."""
    evaluation = run.evaluation
    table = executed and executed[0]
    text = report_text(run, label, dataset, tasks, memory=memory, execution=table, recorded=recorded, quiet=quiet)
    failed, broken, down = evaluation.counts()["failed"], evaluation.unexecutable(), evaluation.backend_down()
    problems = [f"{failed} task(s) could not be planned"] if failed else []
    problems += [f"{broken} plan(s) cannot be executed (validator)"] if broken else []
    warnings = [f"the LLM backend failed ({down}); the symbolic decomposer answered in its place"] if down else []
    return RunReport(text, report_record(run, executed and executed[1]), problems, warnings)


def plancraft_report(
    run: EvaluationRun, label: str, dataset: str, tasks: int, rules: Rules, executed: tuple[str, dict] | None
) -> RunReport:
    """Plancraft's tasks: verdicts against the labels, plans replayed from each inventory, lengths."""
    table = plancraft.rows(run.evaluation, rules)
    text = f"planner {label} on {dataset} ({tasks} Plancraft tasks, {rules.name} rules)\n"
    text += plancraft.format_report(table) + "\n" + (f"\n{executed[0]}\n" if executed else "")
    record = {**plancraft.to_dict(table, label), **({"execution": executed[1]} if executed else {})}
    broken = sum(r.possible and not r.executes for r in table)
    failed = sum(r.outcome.error is not None and not r.outcome.error.kind.about_goal for r in table)
    problems = [f"{broken} plan(s) cannot be executed from their inventory (validator)"] if broken else []
    problems += [f"{failed} task(s) could not be planned"] if failed else []
    return RunReport(text, record, problems)
