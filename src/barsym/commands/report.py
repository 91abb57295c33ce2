"""``barsym report RUN... -o report.html``: one self-contained HTML report of evaluation runs.

Reads the files ``barsym eval --run FILE`` writes (finished, resumed or still
being written: a cut-off last line is left out) and writes one HTML file with
tables and inline SVG charts, comparing the runs' planners. Exit status 0, or
2 for a file that is not a run file or an output that cannot be written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..eval.runfile import RunFileError
from ..report.html_report import load_runs, render
from .common import add_output, check_writable, fail, to_stdout, warn, write_output

HELP = "an HTML report (tables, charts) of eval runs"
DESCRIPTION = "Compare the runs 'barsym eval --run FILE' wrote in one self-contained HTML file."


def add_arguments(p) -> None:
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run files written by barsym eval --run")
    add_output(p, "the HTML file to write (default report.html)", default=Path("report.html"))


def run(args: argparse.Namespace) -> int:
    check_writable(args.output, "-o")
    warnings: list[str] = []
    try:
        runs = load_runs(args.runs, warnings)
    except RunFileError as exc:
        return fail(str(exc))
    for line in warnings:  # one line per damaged record; the report is written from the others
        warn(line)
    existed = not to_stdout(args.output) and args.output.is_file()
    write_output(args.output, render(runs))
    if existed:  # a report made earlier is gone: one line, so that nobody wonders where it went
        print(f"barsym: overwrote {args.output} (it held an earlier report or another file)", file=sys.stderr)
    where = args.output if to_stdout(args.output) else args.output.resolve()  # -o or not: say where it went
    print(
        f"wrote {where} ({len(runs)} run(s), {sum(len(r.records) for r in runs)} task records)",
        file=sys.stderr if to_stdout(args.output) else sys.stdout,
    )  # -o -: stdout is the page alone
    return 0
