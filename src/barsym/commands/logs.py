"""``barsym logs [--limit N] [--full] [--run N] [--command TEXT] [--format text|json]``: the last LLM calls.

Shows what the model was asked, under which grammar, what it replied, the
verifier's verdict, what the call cost and which model answered (its files'
SHA-256) -- newest last, like ``llm logs``; ``--run N`` keeps one run's calls,
``--command TEXT`` those of the runs whose command line contains TEXT (every
process writes into the one log).
The log is ``$BARSYM_LOG_DB`` or ``logs.db`` in barsym's cache folder
(:mod:`barsym.reasoning.calls.call_log`). Exit status: 0 (also when nothing has been
logged yet), 2 for bad options, a file that is not a barsym call log, or
damaged call records (the readable ones are still shown; the others are
named in one line).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from dataclasses import asdict

from ..reasoning.calls.call_log import LogQuery
from .common import add_format, fail
from .options import add_model, read_model

HELP = "show the last LLM calls: prompt, grammar, reply, verdict, time, model"
DESCRIPTION = (
    "Show the last LLM calls barsym made (every planner, the step scorer and repairer, parse), from the call log "
    "($BARSYM_LOG_DB, else logs.db in the cache folder)."
)


def add_arguments(p) -> None:
    add_model(p, LogQuery)
    add_format(
        p,
        "text|json",
        "text: each call's messages, reply, verdict and cost (default); json: one array of the calls",
        json_alias=True,
    )


def run(args: argparse.Namespace) -> int:
    from ..reasoning.calls.call_log import CallLog, LogError, damaged_summary, default_log_path

    query = read_model(args, LogQuery)
    path = default_log_path()
    if path is None:
        print("barsym: LLM call logging is off (BARSYM_LOG_DB=off)", file=sys.stderr)
        return 0
    if path.is_dir():
        return fail(f"the call log {path} is a folder; set BARSYM_LOG_DB to a file")
    if path.exists() and not path.is_file():  # /dev/zero, a FIFO: not "nothing logged yet"
        return fail(f"the call log {path} is not a regular file; set BARSYM_LOG_DB to a file")
    try:
        with contextlib.closing(CallLog(path, create=False)) as log:
            records, damaged = log.readable(query.limit or None, query.run_number, query.command_text)
    except FileNotFoundError:  # nothing logged yet: not an error (and the file is not made)
        records, damaged = [], []
    except (LogError, OSError) as exc:
        return fail(" ".join(str(exc).split()))
    if args.format == "json":
        sys.stdout.write(json.dumps([asdict(r) for r in records], indent=2) + "\n")
    else:
        if not records and not damaged:
            chosen = query.run_number is not None or query.command_text is not None
            what = "no LLM call of that run or command" if chosen else "no LLM calls logged yet"
            print(f"barsym: {what} ({path})", file=sys.stderr)
        for record in records:
            sys.stdout.write(record.to_text(query.full))
    if damaged:  # the readable calls are shown; the damaged ones are named in one line
        return fail(" ".join(f"{path}: {damaged_summary(damaged)}".split()))
    return 0
