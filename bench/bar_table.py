"""BAR's whole table in one command: every method on BAR's 53 tasks, rows = methods, columns = the five groups.

Each row is one ``barsym eval --dataset bar`` run with its own ``--run`` file under ``--runs DIR``, so the
command is resumable: run it again and every finished task is read back from its run file instead of
being planned again (an interrupted row goes on where it stopped). The rows:

- the methods of BAR's table that barsym has: ``symbolic`` (no model), ``bar``, ``bar-sc``, ``deps``,
  ``cot``, ``reverse-chain``, ``self-refine``, ``tot``, ``plan-and-solve``;
- BAR's module (b) ablation: state consistency's anchors by step scoring at ``t`` 3, 5 (BAR's) and 7, and
  by a sliding window of ``k`` 2 and 3 (``--planner bar-sc --anchors ... --t/--k``); since ``bar``'s
  verifier lets no failing plan through, the same five again on plans that can fail (``b-free*``:
  ``llm-only`` with the vocabulary grammar and no facts, then ``--consistency`` as ``bar-sc`` runs it);
- BAR's module (c): ``bar`` answering from a stage memory, beside ``bar`` without one. The memory (a fresh
  file per variant under the runs folder) is written first by a warm-up pass over the same tasks that
  records every plan and credits it with its executions in the stochastic world (:data:`WARM_UP`): an
  entry answers only once its plan has run ``DEFAULT_MIN_RUNS`` times, and ``eval`` credits the runs
  when a pass ends, so a single recording pass never answers from its own memory.

A *variant* is a set of options given to every model row unchanged (``--variant NAME=OPTIONS``): the
embedded model (``model=--threads 1``), a stand-in (``copy-facts=--llm-stand-in copy-facts``), a server
(``server=--llm-url http://127.0.0.1:8000``), a taught model (``taught=--adapter A.gguf``). Rows of all
variants go into the same tables, labelled ``method [variant]``. ``symbolic`` takes no model and runs once.

Columns: stone, iron, gold, diamond, redstone (BAR's groups) and their mean; one table each for Acc, F1 and
ED (lower is better). ``--repeat ROW=N`` runs a row with ``eval --repeats N`` (BAR's protocol is 10) and
its cells show mean ± sd over the runs. ``--with`` and ``--repeat`` name a row (every variant's) or
``ROW.VARIANT`` (that variant's only), so one command can say exactly how each row was run.
``--html FILE`` also writes ``barsym report`` over every run file.

A row's files under ``--runs`` are ``NAME.jsonl.gz`` (its run file, compressed as ``eval --run`` keeps a
``.gz`` name), ``NAME.json.gz`` (``eval -o``'s summary, compressed once written) and ``NAME.txt`` (what eval
printed); a plain ``NAME.jsonl``/``NAME.json`` left by an older run is read and resumed as it is.

BAR's reported numbers are not typed in from memory: :data:`PAPER` is empty until someone copies them
from the paper's main results table, and the markdown says so; rows of :data:`PAPER` print beside ours.

    PYTHONPATH=src python bench/bar_table.py --runs docs/results/runs/bar-table \\
        --variant copy-facts=--llm-stand-in=copy-facts --out docs/results/bar-table.md
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import json
import shlex
import statistics
import sys
import time
from pathlib import Path

GROUPS = ("stone", "iron", "gold", "diamond", "redstone")
METRICS = (
    ("accuracy", "Acc", "higher is better"),
    ("f1", "F1", "higher is better"),
    ("edit_distance", "ED", "lower is better"),
)

#: module (b)'s input where plans can fail: no graph check of the replies, no facts in the prompts
FREE = ["--llm-mode", "vocab", "--no-facts"]
#: state consistency as ``bar-sc`` runs it (both scores, the model's repairer with the symbolic fallback)
REPAIR = ["--consistency", "--scores", "both", "--repairer", "llm", "--anchors", "step-scoring"]
WINDOW = ["--consistency", "--scores", "both", "--repairer", "llm", "--anchors", "sliding-window"]

#: row key -> (label, planner, extra eval options, part of the table)
ROWS: dict[str, tuple[str, str, list[str], str]] = {
    "symbolic": ("symbolic", "symbolic", [], "methods"),
    "bar": ("bar", "bar", [], "methods"),
    "bar-sc": ("bar-sc", "bar-sc", [], "methods"),
    "deps": ("deps", "deps", [], "methods"),
    "cot": ("cot", "cot", [], "methods"),
    "reverse-chain": ("reverse-chain", "reverse-chain", [], "methods"),
    "self-refine": ("self-refine", "self-refine", [], "methods"),
    "tot": ("tot", "tot", [], "methods"),
    "plan-and-solve": ("plan-and-solve", "plan-and-solve", [], "methods"),
    "b-step-t3": ("bar-sc, step scoring t=3", "bar-sc", ["--anchors", "step-scoring", "--t", "3"], "module (b)"),
    "b-step-t5": ("bar-sc, step scoring t=5", "bar-sc", ["--anchors", "step-scoring", "--t", "5"], "module (b)"),
    "b-step-t7": ("bar-sc, step scoring t=7", "bar-sc", ["--anchors", "step-scoring", "--t", "7"], "module (b)"),
    "b-window-k2": ("bar-sc, sliding window k=2", "bar-sc", ["--anchors", "sliding-window", "--k", "2"], "module (b)"),
    "b-window-k3": ("bar-sc, sliding window k=3", "bar-sc", ["--anchors", "sliding-window", "--k", "3"], "module (b)"),
    # the same ablation where plans fail: BAR's decomposer without the graph's check and facts (free generation
    # over the game's vocabulary, the paper's setting), then state consistency as bar-sc runs it
    "b-free": ("llm-only, free (vocab grammar, no facts)", "llm-only", FREE, "module (b)"),
    "b-free-t3": ("llm-only, free + step scoring t=3", "llm-only", [*FREE, *REPAIR, "--t", "3"], "module (b)"),
    "b-free-t5": ("llm-only, free + step scoring t=5", "llm-only", [*FREE, *REPAIR, "--t", "5"], "module (b)"),
    "b-free-t7": ("llm-only, free + step scoring t=7", "llm-only", [*FREE, *REPAIR, "--t", "7"], "module (b)"),
    "b-free-k2": ("llm-only, free + sliding window k=2", "llm-only", [*FREE, *WINDOW, "--k", "2"], "module (b)"),
    "b-free-k3": ("llm-only, free + sliding window k=3", "llm-only", [*FREE, *WINDOW, "--k", "3"], "module (b)"),
    "c-no-memory": ("bar without memory", "bar", [], "module (c)"),
    "c-memory": ("bar with stage memory", "bar", [], "module (c)"),
}
METHODS = [k for k, row in ROWS.items() if row[3] == "methods"]
MEMORY_ROW = "c-memory"
#: the warm-up pass before the memory row: record every plan, then run each 5 times (the memory's
#: DEFAULT_MIN_RUNS) in the stochastic world, whose results credit the plans' entries with success rates
WARM_UP = ["--record", "--world", "stochastic", "--runs", "5"]

#: BAR's reported numbers, method -> metric -> group (and "mean") -> value, from the paper's main table.
#: Empty on purpose: they are to be copied from the paper, not recalled. Keys are this file's row keys.
PAPER: dict[str, dict[str, dict[str, float]]] = {}
PAPER_SOURCE = "BAR (Du et al., ACL Findings 2025), main results table"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=Path, required=True, help="folder of the rows' run files (kept: reruns resume)")
    p.add_argument("--out", type=Path, help="the markdown table (default: print it)")
    p.add_argument("--rows", default=",".join(METHODS), help=f"row keys, comma-separated; all: {', '.join(ROWS)}")
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=OPTIONS",
        help="options for every model row, e.g. copy-facts='--llm-stand-in copy-facts' (default model='')",
    )
    p.add_argument(
        "--repeat",
        action="append",
        default=[],
        metavar="ROW[.VARIANT]=N",
        help="run ROW with eval --repeats N (in VARIANT only, when one is named)",
    )
    p.add_argument(
        "--with",
        dest="row_options",
        action="append",
        default=[],
        metavar="ROW[.VARIANT]=OPTIONS",
        help="options for one row only (in VARIANT only, when one is named), e.g. tot='--tot-breadth 2 --tot-beam 1'",
    )
    p.add_argument("--dataset", default="bar", help="the task set (default bar: BAR's 53)")
    p.add_argument("--limit", type=int, help="only the first N tasks of each row (a quick look)")
    p.add_argument("--html", type=Path, help="also write barsym report over every run file")
    p.add_argument(
        "--no-run", action="store_true", help="run nothing: the table from the rows' JSON results already written"
    )
    args = p.parse_args(argv)
    args.rows = [r.strip() for r in args.rows.split(",") if r.strip()]
    if args.rows == ["all"]:
        args.rows = list(ROWS)
    unknown = [r for r in args.rows if r not in ROWS]
    if unknown:
        p.error(f"unknown row(s) {', '.join(unknown)}; known: {', '.join(ROWS)}")
    variants = {}
    for text in args.variant or ["model="]:
        name, sep, options = text.partition("=")
        if not sep or not name.strip():
            p.error(f"--variant wants NAME=OPTIONS, got {text!r}")
        variants[name.strip()] = shlex.split(options)
    args.variants = variants
    args.extra = {}
    for text in args.row_options:
        target, sep, options = text.partition("=")
        row, variant = target.partition(".")[::2]
        if not sep or row not in ROWS or (variant and variant not in variants):
            p.error(f"--with wants ROW[.VARIANT]=OPTIONS with a known row and variant, got {text!r}")
        args.extra[(row, variant or None)] = shlex.split(options)
    args.repeats = {}
    for text in args.repeat:
        target, _, n = text.partition("=")
        row, variant = target.partition(".")[::2]
        if row not in ROWS or (variant and variant not in variants) or not n.isdigit() or int(n) < 1:
            p.error(f"--repeat wants ROW[.VARIANT]=N with a known row and variant and N >= 1, got {text!r}")
        args.repeats[(row, variant or None)] = int(n)
    args.argv = list(argv)
    return args


def for_row(table: dict, key: str, variant: str):
    """What ``--with``/``--repeat`` gave row ``key`` in ``variant``: the variant's own entry, else the row's."""
    return table.get((key, variant), table.get((key, None)))


def base_name(run: Path) -> Path:
    """A row's files without their suffix: ``runs/NAME`` of ``runs/NAME.jsonl.gz`` or ``runs/NAME.jsonl``."""
    return run.with_name(run.name.removesuffix(".gz").removesuffix(".jsonl"))


def row_files(base: Path) -> tuple[Path, Path, Path]:
    """(run file, summary, log) of a row: the compressed names unless plain files are there already."""
    run = base.with_name(base.name + ".jsonl")
    out = base.with_name(base.name + ".json")
    return (
        run if run.is_file() else run.with_name(run.name + ".gz"),
        out if out.is_file() else out.with_name(out.name + ".gz"),
        base.with_name(base.name + ".txt"),
    )


def plain(out: Path) -> Path:
    """Where ``eval -o`` writes a summary that is kept compressed (it writes plain JSON)."""
    return out.with_name(out.name.removesuffix(".gz"))


def compress(out: Path) -> None:
    """``eval -o``'s summary compressed to ``out`` once written (``out`` ends in ``.gz``)."""
    written = plain(out)
    if out != written and written.is_file():
        out.write_bytes(gzip.compress(written.read_bytes(), mtime=0))
        written.unlink()


def read_json(path: Path) -> dict:
    """A summary, compressed or not."""
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


def memory_file(run: Path) -> Path:
    """The memory row's stage memory, beside its run file."""
    return base_name(run).with_name(base_name(run).name + ".memory.db")


def warm_up(args, key: str, variant: str, options: list[str], run: Path) -> int:
    """The memory row's warm-up pass (its own run file ``*.warm-up.jsonl.gz``, resumable like any row); its exit."""
    base = base_name(run)
    warm, out, log = row_files(base.with_name(base.name + ".warm-up"))
    if out.is_file():
        return 0
    argv = [*eval_argv(args, key, variant, options, warm, plain(out), memory=memory_file(run)), *WARM_UP]
    print(f"bar_table: {base.name} (warm-up): barsym {' '.join(argv)}", file=sys.stderr, flush=True)
    code = run_row(argv, log)[0]
    compress(out)
    return code


def eval_argv(
    args, key: str, variant: str, options: list[str], run: Path, out: Path, memory: Path | None = None
) -> list[str]:
    label, planner, extra, part = ROWS[key]
    argv = ["eval", "--dataset", args.dataset, "--planner", planner, *extra, "--quiet", "--run", run, "-o", out]
    if planner != "symbolic":
        argv += options
    argv += for_row(args.extra, key, variant) or []
    if key == MEMORY_ROW:
        argv += ["--memory", memory or memory_file(run)]
    if for_row(args.repeats, key, variant):
        argv += ["--repeats", str(for_row(args.repeats, key, variant))]
    if args.limit:
        argv += ["--limit", str(args.limit)]
    return [str(a) for a in argv]


def shown_options(args, key: str, variant: str, options: list[str]) -> str:
    """The options that make a row what it is (not its files), as the per-row table shows them."""
    label, planner, extra, _ = ROWS[key]
    shown = ["--planner", planner, *extra, *([] if planner == "symbolic" else options)]
    shown += for_row(args.extra, key, variant) or []
    if for_row(args.repeats, key, variant):
        shown += ["--repeats", str(for_row(args.repeats, key, variant))]
    if key == MEMORY_ROW:
        shown += ["--memory", "M", "(M written by a warm-up pass with", *WARM_UP, ")"]
    return " ".join(shown)


def run_row(argv: list[str], log: Path) -> tuple[int, float]:
    """``barsym ARGV`` in this process (one model load for every row), its printed report kept in ``log``."""
    from barsym.cli import main

    started = time.perf_counter()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(argv)
    log.write_text(printed.getvalue(), encoding="utf-8")
    return code, time.perf_counter() - started


def model_of(run: Path) -> str:
    """What answered in a row, as its run file's header records it: when the run started and the model
    (the adapter's SHA-256 where the header has it; run files before 2026-12-06 say only that the wheel's
    adapter of that day ran). "–" without a run file (a stand-in row keeps only its results)."""
    from barsym.eval.runfile import RunFileError, read_run

    if not run.is_file():
        return "–"
    try:
        head = read_run(run)[0]
    except RunFileError:
        return "–"
    started = str(head.get("started") or "")
    model, day = head.get("model") or {}, f"{started[:10]} {started[11:16]} UTC" if len(started) >= 16 else started
    if not model:
        what = "no model"
    elif model.get("stand_in"):
        what = f"stand-in {model['stand_in']}"
    elif model.get("server"):
        what = "a server"
    elif model.get("adapter") == "none":
        what = "base model"
    elif model.get("adapter_sha256"):
        what = f"adapter {model['adapter_sha256'][:12]}"
    else:
        what = "the adapter shipped then"
    return f"{day}, {what}" if day else what


def from_run_file(run: Path) -> dict | None:
    """A row's groups as ``eval -o`` writes them, scored from the records of a run file cut short (the rows
    still running or stopped part-way; their next call resumes them). None without a record."""
    from barsym.metrics import GroupScore, TaskScore

    if not run.is_file():
        return None
    groups: dict[str, GroupScore] = {}
    valid = 0
    from barsym.eval.runfile import RunFileError, read_run

    try:
        _, records, _ = read_run(run)
    except RunFileError:
        return None
    for record in records:
        if "score" not in record:
            continue
        s = record["score"]
        score = TaskScore(tuple(s["accuracy"]), tuple(s["f1"]), s["edit_distance"], s["longest"])
        groups.setdefault(record["group"], GroupScore()).add(score)
        valid += record.get("verdict") == "valid"
    if not groups:
        return None
    tasks = sum(g.tasks for g in groups.values())
    return {"groups": {n: g.to_dict() for n, g in groups.items()}, "overall": {"tasks": tasks, "valid": valid}}


def cells(record: dict, metric: str) -> dict[str, str]:
    """A row's cells for one metric: the five groups and their mean; mean ± sd where the row was repeated."""
    repeated = record.get("repeats")
    out: dict[str, str] = {}
    values: dict[str, float] = {}
    for group in GROUPS:
        if repeated and group in repeated["groups"]:
            spread = repeated["groups"][group][metric]
            values[group] = spread["mean"]
            out[group] = f"{spread['mean']:.2f} ± {spread['sd']:.2f}"
        elif group in record.get("groups", {}) and metric in record["groups"][group]:
            values[group] = float(record["groups"][group][metric])
            out[group] = f"{values[group]:.2f}"
        else:
            out[group] = "–"
    out["mean"] = f"{statistics.fmean(values.values()):.2f}" if len(values) == len(GROUPS) else "–"
    return out


def table(rows: list[tuple[str, str, dict]], metric: str, title: str, note: str) -> list[str]:
    lines = [f"### {title} ({note})", "", "| part | method | " + " | ".join(GROUPS) + " | mean |"]
    lines.append("| --- | --- |" + " ---: |" * (len(GROUPS) + 1))
    for part, label, record in rows:
        c = cells(record, metric)
        lines.append(f"| {part} | {label} | " + " | ".join(c[g] for g in (*GROUPS, "mean")) + " |")
    for key, numbers in PAPER.items():
        if metric in numbers:
            paper = numbers[metric]
            shown = [f"{paper[g]:.2f}" if g in paper else "–" for g in (*GROUPS, "mean")]
            lines.append(f"| paper | {ROWS[key][0]} | " + " | ".join(shown) + " |")
    return lines + [""]


def markdown(args, rows, notes: list[str]) -> str:
    lines = [
        "# BAR's table: every method on BAR's 53 tasks",
        "",
        f"Made by `bench/bar_table.py` (`{shlex.join(args.argv) or 'defaults'}`); each row is one",
        f"`barsym eval --dataset {args.dataset}` run whose run file is under `{args.runs}` (rerunning resumes them).",
        "Columns are BAR's five groups and the mean of the five. Variants: "
        + "; ".join(
            f"`{name}` = `{' '.join(opts) or '(the embedded model, defaults)'}`" for name, opts in args.variants.items()
        )
        + ".",
        "",
        f"The paper's own numbers: {'beside ours, rows `paper`' if PAPER else 'not filled in'} -- {PAPER_SOURCE}."
        + ("" if PAPER else " `PAPER` in bench/bar_table.py is empty until they are copied from the paper."),
        "",
    ]
    for metric, short, note in METRICS:
        lines += table(rows, metric, short, note)
    lines += [
        "### Per row",
        "",
        "`model`: what the row's run file says answered, and when it started (a `taught` row ran the",
        "adapter the wheel shipped then: [taught-model.md](taught-model.md) and",
        "[knows-the-game.md](knows-the-game.md) list them).",
        "",
        "| row | exit | tasks | valid plans | seconds | model | eval options |",
        "| --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    lines += notes
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    text, worst, runs = build(args)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.html is not None and runs:
        from barsym.cli import main as barsym

        barsym(["report", *map(str, runs), "-o", str(args.html)])
    return 2 if worst == 2 else 0


def build(args: argparse.Namespace) -> tuple[str, int, list[Path]]:
    """(the markdown, the worst exit of a row, the run files of its rows); with ``--no-run`` nothing is run
    and the markdown is made from the run files alone (``tools/doc_numbers.py`` checks the page that way)."""
    if not args.no_run:
        args.runs.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, dict]] = []
    notes: list[str] = []
    missing: list[str] = []  # with --no-run: the rows no run file holds
    runs: list[Path] = []
    worst = 0
    for key in args.rows:
        label, planner, _, part = ROWS[key]
        for variant, options in args.variants.items():
            if planner == "symbolic" and any(r[1] == label for r in rows):
                continue  # no model: one row whatever the variant
            name = key if planner == "symbolic" else f"{key}.{variant}"
            run, out, log = row_files(args.runs / name)
            argv = eval_argv(args, key, variant, options, run, plain(out))
            if args.no_run:
                code, seconds = (0 if out.is_file() else 2), 0.0
                partial = None if out.is_file() else from_run_file(run)
                if partial is not None:  # a row cut short: what its run file holds so far
                    shown = label if planner == "symbolic" else f"{label} [{variant}]"
                    shown += " (run file cut short)"
                    rows.append((part, shown, partial))
                    runs.append(run)
                    notes.append(
                        f"| {shown} | – | {partial['overall']['tasks']} | {partial['overall']['valid']} | – | "
                        f"{model_of(run)} | "
                        f"`{shown_options(args, key, variant, options)}` (run file cut short; rerun to resume) |"
                    )
                    continue
            else:
                code = warm_up(args, key, variant, options, run) if key == MEMORY_ROW else 0
                if code != 2:
                    print(f"bar_table: {name}: barsym {' '.join(argv)}", file=sys.stderr, flush=True)
                    code, seconds = run_row(argv, log)
                    compress(out)
                else:
                    seconds = 0.0
            shown = label if planner == "symbolic" else f"{label} [{variant}]"
            if args.no_run and not out.is_file():
                missing.append(shown)  # listed in one line: with many variants most pairs are never run
                continue
            worst = max(worst, code)
            if code == 2 or not out.is_file():
                ran = "not run" if args.no_run else str(code)
                notes.append(
                    f"| {shown} | {ran} | – | – | {seconds:.0f} | – | `{shown_options(args, key, variant, options)}` |"
                )
                continue
            record = read_json(out)
            rows.append((part, shown, record))
            runs.append(run)
            overall = record.get("overall", {})
            notes.append(
                f"| {shown} | {code} | {overall.get('tasks', '–')} | {overall.get('valid', '–')} | {seconds:.0f} | "
                f"{model_of(run)} | `{shown_options(args, key, variant, options)}` |"
            )
    full = max((record.get("overall", {}).get("tasks", 0) for _, _, record in rows), default=0)
    rows = [  # a row on fewer tasks than the others says so (a --limit run, a run file cut short)
        (
            part,
            shown if record["overall"]["tasks"] == full else f"{shown} ({record['overall']['tasks']} of {full} tasks)",
            record,
        )
        for part, shown, record in rows
    ]
    if missing:
        notes += ["", f"Not run (no run file under `{args.runs}`): " + ", ".join(missing) + "."]
    return markdown(args, rows, notes), worst, runs


if __name__ == "__main__":
    sys.exit(main())
