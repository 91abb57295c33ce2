"""``barsym execute FILE... [--world NAME] [--runs N] [--world-seed S] [--budget TICKS] [--format json]``: run plans.

Each plan is executed ``--runs`` times in the chosen world (stochastic by
default) and summarised: success rate with a 95 % Wilson interval, failures
counted by step and code, median and 90th-percentile ticks of the successful
runs, and the failure of a typical failed run in words (DEPS' descriptor).
Exit status: 0 when every plan ran (whatever its success rate), 2 unusable
input (a file that is not a plan, bad options), as ``validate``.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..memory.options import MemoryOptions
from ..memory.recorder import credit_runs
from ..sim.execution import summary_line
from ..sim.options import ExecutionOptions
from .common import UsageError, add_format, kb_from_args, warn
from .options import add_model, read_model
from .plan_files import PlanFiles, add_plan_file_arguments
from .state_options import add_state_arguments, rules_from_args, start_from_args

HELP = "run plans many times in an execution world: success rate, ticks, failures"
DESCRIPTION = (
    "Execute BAR JSON Lines plans in the deterministic or stochastic world and report "
    "success rates (95 % Wilson interval), failures by step and code, ticks of "
    "successful runs and a typical failure in words."
)


def add_arguments(p) -> None:
    add_plan_file_arguments(p, goal=False)
    add_format(
        p, "text|json", "text: a summary per plan (default); json: one array with a record per plan", json_alias=True
    )
    add_model(p, ExecutionOptions, "execution world", deprecated={"--seed": "world_seed"})
    add_state_arguments(p)
    add_model(
        p,
        MemoryOptions,
        "stage memory (BAR module c)",
        helps={
            "memory": "the stage memory to record into (default $BARSYM_MEMORY if set)",
            "record": "record each plan's executions, for the plan in memory with the same steps",
        },
    )


def run(args: argparse.Namespace) -> int:
    kb = kb_from_args(args)
    start = start_from_args(kb, args)
    rules = rules_from_args(kb, args)
    options = read_model(args, ExecutionOptions)
    world = options.make_world(kb, rules)
    if getattr(args, "memory", None) is not None and not args.record:
        raise UsageError("execute plans nothing, so --memory only records: add --record")
    store = read_model(args, MemoryOptions).open() if args.record else None
    records: list[dict] = []
    runs = successes = credited = 0
    files = PlanFiles(
        args.files,
        lambda name, why: records.append({"file": name, "world": options.world, "error": why}),
        args.format != "json",
    )
    line = None
    if sys.stderr.isatty():  # on a terminal: runs played, at once and as they go (rich only then)
        from .progress_line import runs_progress

        line = runs_progress(len(args.files) * options.episodes)
    try:
        for path, plan in files:
            execution = options.execute(plan, world, start, on_episode=line.update if line else None)
            runs += execution.runs
            successes += execution.successes
            records.append(execution.to_dict())
            if store is not None and credit_runs(
                store, plan, options.world, execution.seed, execution.runs, execution.successes
            ):
                credited += 1
            elif store is not None:
                warn(
                    f"{path}: no plan in the memory has these steps (record it with barsym plan --record first); "
                    "its runs are not recorded"
                )
            if args.format != "json":
                if line:
                    line.clear()
                sys.stdout.write(execution.to_text())
    finally:
        if line:
            line.close()
    if args.format == "json":
        print(json.dumps(records, indent=2))
    else:
        print(summary_line(len(args.files), len(files.unusable), runs, successes, options.world, options.world_seed))
    if store is not None:
        print(
            f"recorded the runs of {credited} of {len(args.files) - len(files.unusable)} plan(s) into {store.path}",
            file=sys.stderr,
        )
        store.close()
    return 2 if files.unusable else 0
