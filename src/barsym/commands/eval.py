"""``barsym eval --dataset PATH [--planner NAME] [--format text|json] [-o FILE]``: BAR's table.

Plans every task of a dataset the user names (BAR's tech-tree folder, or a task
list such as DEPS's), prints Acc / F1 / ED per group and overall as in the
paper, then what the run cost: executable-plan rate, LLM calls, tokens,
first-try acceptance and fallback rates, wall time per task; then every task
whose plan differs from the expert plan with the validator's view of both.
Exit status: 0 every task got an executable plan (or has a clear unreachable
reason), 1 some task could not be planned or its plan cannot run (``llm-only``),
2 unusable input (including a model or server that cannot be used).

At scale (``--tasks/--groups/--limit``, ``--workers N``, ``--executor ray``,
``--run FILE.jsonl``) the command only gathers the options into a plain-data
:class:`~barsym.eval.spec.RunSpec`; :func:`~barsym.eval.scale.run_evaluation`
does the rest the same way for every executor, so what is printed does not
depend on where tasks ran. The planner is built here in every case, so a
model or server that cannot be used is exit 2 before any task starts.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..eval import DatasetError
from ..eval.interrupt import TERMINATED, reassert_sigint, resume_hint, terminated_as_exit
from ..eval.options import RunOptions
from ..eval.runfile import RunFileError, check_resumable, repeat_path
from ..eval.scale import run_evaluation, run_header
from ..eval.spec import RunSpec, WorldSpec
from ..eval.workers import ExecutorError
from ..memory import MemoryLockedError, TaskRecorder
from ..memory.options import MemoryOptions
from ..memory.recorder import RecordingPlanner
from ..planner.registry import planner_label
from ..report import repeats
from ..report.run_report import execution_part, plancraft_report, tech_tree_report
from ..sim.options import ExecutionOptions
from ..start_state import StartOptions
from .common import (
    Deprecated,
    UsageError,
    add_format,
    add_output,
    check_writable,
    fail,
    kb_from_args,
    planner_model,
    ran_lines,
    ran_record,
    remembering,
    to_stdout,
    warn,
    write_output,
)
from .llm_options import (
    add_llm_arguments,
    add_planner_arguments,
    build_planner,
    check_dialect,
    check_planner,
    model_settings,
    planner_spec,
)
from .options import add_model, read_model
from .state_options import rules_from_args

HELP = "score a planner on a task set with BAR's metrics"
DESCRIPTION = (
    "Plan every task of a dataset and compare with the expert plans "
    "(AccuracyHard, F1ScoreHard, EditDistanceHard per group)."
)


def add_arguments(p) -> None:
    add_model(p, RunOptions, skip=set(RunOptions.model_fields) - {"dataset"})
    add_planner_arguments(p, "", "name dialect of the task set, e.g. deps for DEPS's old names")
    add_format(
        p,
        "text|json",
        "text: the tables and the per-task differences (default); json: groups, overall and per-task results as JSON",
    )
    add_output(p, "also write the JSON results to FILE")
    p.add_argument("--json", dest="output", type=Path, action=Deprecated, new="-o/--output", help=argparse.SUPPRESS)
    p.add_argument(
        "--quiet",
        action="store_true",
        help="print the tables only, not the per-task differences, and no progress lines on stderr",
    )
    rules = "rule profile: survival (default) or crafting (implied by Plancraft's task file)"
    add_model(p, StartOptions, skip=("start", "inventory", "layer"), helps={"rules": rules})
    add_model(p, RunOptions, "which tasks, and where they run", skip=("dataset",))
    add_llm_arguments(p)
    add_model(p, ExecutionOptions, "execution world", defaults={"world": "no execution"})
    add_model(
        p,
        MemoryOptions,
        "stage memory (BAR module c)",
        helps={"record": "also record into the memory: each plan's decompositions (and with --world, its executions)"},
    )


def run(args: argparse.Namespace) -> int:
    from .progress_line import EvalProgress  # rich, loaded only to run an evaluation

    progress = EvalProgress(quiet=args.quiet)
    with terminated_as_exit():
        try:
            return _run(args, progress)
        except KeyboardInterrupt as exc:  # barsym's Ctrl-C line says how to go on (cli.main prints it)
            exc.hint = resume_hint(getattr(args, "run_file", None))
            raise
        except SystemExit as exc:  # SIGTERM (terminated_as_exit): the same line as Ctrl-C, then exit 143
            if exc.code == TERMINATED:
                progress.close()
                print(f"barsym: terminated; {resume_hint(getattr(args, 'run_file', None))}", file=sys.stderr)
            raise
        except (DatasetError, RunFileError, ExecutorError) as exc:  # one line, exit 2 (barsym.cli)
            raise UsageError(str(exc)) from None
        finally:
            progress.close()


def _run(args: argparse.Namespace, progress) -> int:
    """Everything that can be refused is checked before the model loads; then the run, then the report."""
    check_writable(args.output, "-o")
    name = check_planner(args.planner)
    kb = kb_from_args(args)
    check_dialect(kb, args.dialect)
    scale = read_model(args, RunOptions)
    dataset_path, args.dialect, tasks = scale.load(kb, args.dialect)  # a bundled set names its dialect (deps)
    plancraft = any(t.label_possible is not None for t in tasks)
    implied = next((t.rules for t in tasks if t.rules), None)  # Plancraft's tasks imply the crafting rules
    rules = rules_from_args(kb, args, default=implied)
    execution = read_model(args, ExecutionOptions, world=None)
    chosen = planner_spec(name, kb, args, rules)  # the flags as one typed value; the run file keeps its data
    options = chosen.run_options()
    # never written into a run file, nor into os.environ (Ray's processes would inherit it):
    # handed to the planner here and to each worker as an argument
    api_key = options.pop("api_key", None)
    if scale.parallel and options and "threads" not in args and not model_settings(args).llm_url:
        options["threads"] = scale.threads_per_worker()  # cores shared, not oversubscribed
        chosen = chosen.model_copy(update={"llm": chosen.llm.model_copy(update={"threads": options["threads"]})})
    label = planner_label(name, options)  # how the tables name it, e.g. bar[copy-facts] for a stand-in
    spec = RunSpec(name, options, rules.name, getattr(args, "mc_version", "1.16.5"), WorldSpec.of(execution))
    specs = [spec] + [_repeat_spec(spec, number) for number in range(2, scale.repeats + 1)]
    if scale.run_file is not None:  # a file that cannot be resumed is refused before the model loads
        for number, each in enumerate(specs, start=1):
            header = run_header(each, str(dataset_path.resolve()), args.dialect, len(tasks), args.dataset)
            check_resumable(repeat_path(scale.run_file, number), header)
    if scale.repeats > 1 and (read_model(args, MemoryOptions).path is not None or plancraft):
        raise UsageError("--repeats works with tech-tree task sets without --memory (each run would change the memory)")
    store, locked = _open_memory(args, plancraft, scale.parallel)
    # built here in every case: a model or server that cannot be used is exit 2 before any task runs
    planner = remembering(build_planner(chosen, kb, args, progress), kb, store)
    reassert_sigint()  # a model load may have replaced the SIGINT handler under Python
    recording = None
    if store is not None and args.record:
        planner = recording = RecordingPlanner(planner, TaskRecorder(store, planner.memory))

    def resuming_file(path):
        def resuming(total: int, done: int) -> None:
            if done:
                print(
                    f"barsym: resuming {path}: {done} of {total} task(s) kept, {total - done} to run", file=sys.stderr
                )

        return resuming

    recorded_task = None if recording is None else lambda key: setattr(recording, "task", key)
    repeated = []
    for number, each in enumerate(specs, start=1):  # BAR's protocol: the same tasks again, the next seed
        first = number == 1
        again = planner if first else None
        if not first and not scale.parallel:
            again = build_planner(chosen.with_seed(each.planner_spec().llm.seed), kb, args, progress)
        path = repeat_path(scale.run_file, number)
        hooks = progress.hooks(on_task=recorded_task if first else None, on_start=resuming_file(path))
        repeated.append(
            run_evaluation(
                each,
                tasks,
                kb,
                name=label,
                dataset=str(dataset_path.resolve()),
                dialect=args.dialect,
                executor=scale.executor,
                workers=scale.workers,
                ray_address=scale.ray_address,
                run_path=path,
                planner=None if scale.parallel else again,
                **hooks,
                on_warning=warn,
                api_key=api_key,
                dataset_name=args.dataset,
            )
        )
    outcome = repeated[0]
    progress.close()
    executed = execution_part(outcome, execution)
    if plancraft:
        report = plancraft_report(outcome, name, args.dataset, len(tasks), rules, executed)
    else:
        recorded = None if recording is None else recording.recorder.credit(executed and executed[1])
        report = tech_tree_report(
            outcome,
            label,
            args.dataset,
            len(tasks),
            executed,
            memory=store is not None,
            recorded=recorded,
            quiet=args.quiet,
        )
    ran = ran_record(label, planner_model(chosen), rules.name, None)  # each task has its own start
    report.record.update({"model": ran["model"], "rules": ran["rules"]})
    report.text += "\n".join(ran_lines(ran)) + "\n"
    if len(repeated) > 1:
        seeds = [each.planner_spec().llm.seed if each.options else None for each in specs]
        data = repeats.summary([r.evaluation for r in repeated], seeds)
        report.record["repeats"] = data
        report.text += "\n" + repeats.text(data)
        for number, again in enumerate(repeated[1:], start=2):
            failed = again.evaluation.counts()["failed"]
            if failed:
                report.problems.append(f"repeat {number}: {failed} task(s) could not be planned")
    return _write_report(args, report, None if recording is None else recording.recorder, locked)


def _repeat_spec(spec: RunSpec, number: int) -> RunSpec:
    """Repeat ``number``'s spec: the model's seed moved on by ``number - 1`` (a planner without a model: the same)."""
    if not spec.options:
        return spec
    options = {**spec.options, "seed": spec.planner_spec().llm.seed + number - 1}
    return RunSpec(spec.planner, options, spec.rules, spec.mc_version, spec.world, spec.backend)


def _open_memory(args: argparse.Namespace, plancraft: bool, parallel: bool):
    """(the ``--memory`` store or None, why nothing will be recorded or None), opened before the model loads.

    A bad file is refused at once; a memory another process holds locked is not a
    reason to lose the run: it goes on without the memory, and with ``--record``
    the last line says that nothing was recorded.
    """
    options = read_model(args, MemoryOptions)
    try:
        store = options.open()
    except MemoryLockedError as exc:
        if args.record:
            return None, str(exc)
        warn(f"{exc}; evaluating without the memory")
        return None, None
    if store is not None and plancraft:
        raise UsageError("--memory works with tech-tree task sets (BAR's, DEPS's), not Plancraft's")
    if store is not None and parallel:
        raise UsageError(
            "--memory needs a serial run (one process answers from and records into the "
            "memory); drop --workers/--executor ray"
        )
    return store, None


def _write_report(args: argparse.Namespace, report, recorder, locked: str | None = None) -> int:
    """The tables (stdout), the JSON results (``--format json``, ``-o``), then what went wrong (stderr)."""
    json_out = args.format == "json" or (args.output is not None and to_stdout(args.output))
    if not json_out:  # the text report goes to stdout unless the JSON results go there (--format json, -o -)
        sys.stdout.write(report.text)
    if args.output is not None or args.format == "json":
        write_output(args.output, json.dumps(report.record, indent=2) + "\n")
    if locked is not None:
        return fail(f"{locked}; no plan recorded (the results above and any -o/--run file are complete)")
    if recorder is not None and recorder.failure is not None:  # after every result is written
        missed = f"{recorder.missed} plan(s) not recorded"
        return fail(f"{recorder.failure}; {missed} (the results above and any -o/--run file are complete)")
    for line in report.problems:
        print(f"barsym: {line}", file=sys.stderr)
    for line in report.warnings:
        warn(line)
    return 1 if report.problems else 0
