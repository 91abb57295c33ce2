"""Benchmark: barsym's symbolic planner against Plancraft's own optimal planner on Plancraft's tasks.

    PYTHONPATH=src .venv/bin/python bench/bench_plancraft.py [TASKS.json] [--python BENCH_PYTHON]
        [--limit N] [--json FILE] [--oracle-only] [--oracle-results FILE]

Plancraft runs in its own environment (``--python``, default
/work/bench-plancraft-venv/bin/python; bench/README.md says how to make it), as a
subprocess running bench/plancraft_oracle.py; barsym never imports plancraft.
barsym plans the same tasks in this process. Both sides time planning alone
(time.perf_counter per task): not imports, not recipe or knowledge-base loading.

Prints the task count, each side's total and median seconds, the ratio of the
totals (target: barsym >= 100x faster), and one line per task where the two
disagree on the verdict (possible / impossible) or on the plan length, counted
as Plancraft counts it: one action per craft or smelt.

Exit status: 0 done (also when the barsym side is still pending, which is said
on the first line), 2 the benchmark environment or barsym cannot be used.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ORACLE = REPO / "bench" / "plancraft_oracle.py"
DEFAULT_TASKS = REPO.parent / "shared" / "datasets" / "plancraft" / "train.json"
DEFAULT_BENCH_PYTHON = Path("/work/bench-plancraft-venv/bin/python")
TARGET_RATIO = 100.0
SETUP_HINT = (
    "python3 -m venv /work/bench-plancraft-venv && /work/bench-plancraft-venv/bin/pip install --no-deps "
    f"-r {REPO / 'bench' / 'plancraft-requirements.txt'} (see bench/README.md)"
)


# ---- the barsym side: the one place to wire barsym's Plancraft support --------------------
#
# Contract: ``barsym_side(tasks_path, tasks, planner)`` does every untimed preparation (knowledge
# base, task loading, planner construction), then plans each task and returns, per task id, an
# Answer. ``steps`` lists the item of each craft or smelt action in order, one entry per action
# (Plancraft's unit: crafting 8 sticks is 2 actions, smelting 3 iron ingots is 3), or None when
# barsym finds the task impossible; ``seconds`` covers planning only. It raises BarsymPending
# with a one-line reason while barsym cannot read Plancraft tasks yet.
#
# Expected final API (being built): ``barsym.eval.load_dataset(path, kb)`` reads Plancraft's
# train.json (start inventories included), a ``crafting`` rule profile (no mining, grid always at
# hand, smelting without furnace or fuel), and ``barsym.eval.evaluate`` plans each task from its
# start inventory, timing ``planner.plan`` alone. The body below goes through evaluate() so that
# whatever it does with the start inventory is what gets measured; only the marked lines should
# need to change (how the crafting rules are chosen, how a Task maps to a Plancraft id, and how
# a plan's steps turn into actions if barsym reports them differently).

BARSYM_RULES = "crafting"  # Plancraft's task file implies it; barsym eval chooses it the same way


class BenchError(RuntimeError):
    """The benchmark cannot run (no benchmark environment, barsym not importable): exit 2."""


class BarsymPending(RuntimeError):
    """barsym cannot plan Plancraft tasks yet; the message says why, in one line."""


@dataclass
class Answer:
    possible: bool
    steps: list[str] | None
    seconds: float

    @property
    def length(self) -> int | None:
        return None if self.steps is None else len(self.steps)


def barsym_side(tasks_path: Path, tasks: list[dict], planner: str) -> dict[str, Answer]:
    sys.path.insert(0, str(REPO / "src"))
    try:
        from barsym.eval import DatasetError, evaluate, load_dataset
        from barsym.kb import Rules, load_kb
        from barsym.planner import make_planner
        from barsym.report.plancraft import action_items
    except ImportError as exc:
        raise BenchError(
            f"cannot import barsym ({exc}); run with barsym's venv and PYTHONPATH={REPO / 'src'}"
        ) from None

    kb = load_kb()
    rules = Rules(kb, BARSYM_RULES)
    try:
        loaded = load_dataset(tasks_path, kb)
    except DatasetError as exc:
        raise BarsymPending(f"barsym.eval.load_dataset does not read Plancraft tasks yet ({exc})") from None
    by_id = {_plancraft_id(t): t for t in loaded}
    missing = [t["id"] for t in tasks if t["id"] not in by_id]
    if missing:
        raise BarsymPending(
            f"barsym's tasks have no id {missing[0]} (and {len(missing) - 1} more): "
            "map Task -> Plancraft id in _plancraft_id"
        )
    chosen = make_planner(planner, kb, rules=rules)
    graph = getattr(chosen, "graph", None)
    if graph is not None:
        _ = graph.costs  # the crafting graph settles its costs on first use (~50 ms): paid before timing
    if hasattr(chosen, "prepare"):
        chosen.prepare()  # the search's recipe index, as Plancraft builds its recipe graph at import
    import gc

    gc.freeze()  # as `barsym eval` does: the knowledge base is not rescanned by every full collection
    evaluation = evaluate([by_id[t["id"]] for t in tasks], chosen, kb, name=planner, rules=rules)

    answers = {}
    for task, outcome in zip(tasks, evaluation.outcomes):
        if outcome.result is None:
            answers[task["id"]] = Answer(False, None, outcome.seconds)
        else:
            answers[task["id"]] = Answer(True, action_items(rules, outcome.result), outcome.seconds)
    return answers


def _plancraft_id(task) -> str:
    return task.name


# ---- the Plancraft side ---------------------------------------------------------------------


def run_oracle(
    python: Path, tasks_path: Path, limit: int | None, verbose: bool, hash_seed: str
) -> tuple[list[dict], dict]:
    if not (python.is_file() and os.access(python, os.X_OK)):
        raise BenchError(f"no benchmark python at {python}; create it with: {SETUP_HINT}")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "oracle.jsonl"
        command = [str(python), str(ORACLE), str(tasks_path), "-o", str(out)]
        command += ["--limit", str(limit)] if limit is not None else []
        command += [] if verbose else ["--progress", "0"]
        env = dict(os.environ)
        if hash_seed == "random":
            env.pop("PYTHONHASHSEED", None)
        else:
            env["PYTHONHASHSEED"] = hash_seed
        done = subprocess.run(command, stderr=None if verbose else subprocess.PIPE, text=True, env=env)
        if done.returncode != 0:
            detail = (done.stderr or "").strip().splitlines()
            raise BenchError(f"the oracle failed (exit {done.returncode}): {detail[-1] if detail else 'no message'}")
        return read_oracle(out)


def read_oracle(path: Path) -> tuple[list[dict], dict]:
    records, summary = [], {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            if "summary" in record:
                summary = record["summary"]
            else:
                records.append(record)
    return records, summary


# ---- comparison and report ------------------------------------------------------------------


def _verdict(possible: bool) -> str:
    return "possible" if possible else "impossible"


def _length(steps) -> str:
    return "-" if steps is None else str(len(steps))


def label_agreement(oracle: list[dict], labels: dict[str, dict]) -> dict:
    """How the oracle's answers match train.json's labels (impossible, optimal_path_length)."""
    possible = [r for r in oracle if not labels[r["id"]].get("impossible")]
    impossible = [r for r in oracle if labels[r["id"]].get("impossible")]
    same_length = sum(
        r["path"] is not None and len(r["path"]) == labels[r["id"]].get("optimal_path_length") for r in possible
    )
    return {
        "labelled_possible": len(possible),
        "solved_of_possible": sum(r["possible"] for r in possible),
        "same_length_as_label": same_length,
        "labelled_impossible": len(impossible),
        "solved_of_impossible": sum(r["possible"] for r in impossible),
        "timed_out": sum(bool(r.get("timed_out")) for r in oracle),
    }


def compare(oracle: list[dict], barsym: dict[str, Answer], labels: dict[str, dict]) -> list[dict]:
    differences = []
    for record in oracle:
        ours = barsym[record["id"]]
        same_verdict = record["possible"] == ours.possible
        same_length = record["path"] is None or ours.steps is None or len(record["path"]) == len(ours.steps)
        if same_verdict and same_length:
            continue
        label = labels.get(record["id"], {})
        length = None if record["path"] is None else len(record["path"])
        differences.append(
            {
                "id": record["id"],
                "target": record["target"],
                "plancraft": {
                    "possible": record["possible"],
                    "length": length,
                    "path": record["path"],
                    "timed_out": record.get("timed_out", False),
                },
                "barsym": {"possible": ours.possible, "length": ours.length, "steps": ours.steps},
                "label": {
                    "impossible": label.get("impossible"),
                    "optimal_path_length": label.get("optimal_path_length"),
                },
            }
        )
    return differences


def difference_line(d: dict) -> str:
    p, b, label = d["plancraft"], d["barsym"], d["label"]
    timed_out = " (timed out)" if p["timed_out"] else ""
    if label["impossible"]:
        labelled = "impossible"
    elif label["optimal_path_length"] is not None:
        labelled = f"possible, length {label['optimal_path_length']:g}"
    else:
        labelled = "possible"
    return (
        f"{d['id']} {d['target']}: plancraft {_verdict(p['possible'])}{timed_out} {_length(p['path'])}, "
        f"barsym {_verdict(b['possible'])} {_length(b['steps'])} (train.json: {labelled})"
    )


def seconds_line(name: str, seconds: list[float]) -> str:
    median = statistics.median(seconds) if seconds else 0.0
    return f"{name}: total {sum(seconds):.4f} s, median {median * 1e3:.3f} ms/task, max {max(seconds, default=0):.3f} s"


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except BenchError as exc:
        print(f"bench_plancraft: {exc}", file=sys.stderr)
        return 2


def run(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="?", type=Path, default=DEFAULT_TASKS, help=f"default {DEFAULT_TASKS}")
    parser.add_argument(
        "--python",
        type=Path,
        default=DEFAULT_BENCH_PYTHON,
        help=f"the benchmark environment's python, with plancraft (default {DEFAULT_BENCH_PYTHON})",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--planner", default="symbolic", help="barsym planner (default symbolic)")
    parser.add_argument("--oracle-only", action="store_true", help="run Plancraft's planner alone")
    parser.add_argument(
        "--oracle-results",
        type=Path,
        metavar="FILE",
        help="reuse a saved plancraft_oracle.py output instead of running it",
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the numbers and every difference")
    parser.add_argument(
        "--hash-seed",
        default="0",
        metavar="SEED",
        help="PYTHONHASHSEED for the oracle, whose search order and times depend on it "
        "(default 0; 'random' for Python's default)",
    )
    parser.add_argument("--verbose", action="store_true", help="show the oracle's progress lines")
    args = parser.parse_args(argv)

    try:
        labels = {t["id"]: t for t in json.loads(args.tasks.read_text(encoding="utf-8"))}
    except (OSError, ValueError, TypeError, KeyError) as exc:
        print(f"bench_plancraft: cannot read Plancraft tasks from {args.tasks} ({exc})", file=sys.stderr)
        return 2
    chosen = list(labels.values())[: args.limit] if args.limit is not None else list(labels.values())

    # barsym's untimed setup first: a pending barsym side is known before the oracle runs
    barsym: dict[str, Answer] | None = None
    pending = None
    if not args.oracle_only:
        try:
            barsym = barsym_side(args.tasks, chosen, args.planner)
        except BarsymPending as exc:
            pending = str(exc)
            print(f"barsym side pending: {pending}; running the oracle side alone (--oracle-only)")

    if args.oracle_results:
        oracle, summary = read_oracle(args.oracle_results)
        wanted = {t["id"] for t in chosen}
        oracle = [r for r in oracle if r["id"] in wanted]
        source = f"saved results {args.oracle_results}"
    else:
        oracle, summary = run_oracle(args.python, args.tasks, args.limit, args.verbose, args.hash_seed)
        source = f"{args.python}, PYTHONHASHSEED={summary.get('pythonhashseed', '?')}"
    oracle_seconds = [r["seconds"] for r in oracle]
    agreement = label_agreement(oracle, labels)

    print(f"{len(oracle)} Plancraft tasks from {args.tasks}")
    print(seconds_line(f"plancraft {summary.get('plancraft', '?')} optimal_planner ({source})", oracle_seconds))
    print(
        f"  solves {sum(r['possible'] for r in oracle)}; of {agreement['labelled_possible']} labelled possible "
        f"{agreement['solved_of_possible']} solved, {agreement['same_length_as_label']} at the labelled length; "
        f"of {agreement['labelled_impossible']} labelled impossible {agreement['solved_of_impossible']} solved; "
        f"{agreement['timed_out']} timed out"
    )
    report: dict = {
        "tasks": len(oracle),
        "plancraft": {
            "total_seconds": sum(oracle_seconds),
            "median_seconds": statistics.median(oracle_seconds) if oracle else 0.0,
            "summary": summary,
            "labels": agreement,
        },
    }

    if barsym is not None:
        ours = [barsym[r["id"]] for r in oracle]
        ours_seconds = [a.seconds for a in ours]
        print(seconds_line(f"barsym {args.planner}", ours_seconds))
        total = sum(ours_seconds)
        ratio = sum(oracle_seconds) / total if total > 0 else math.inf
        print(
            f"ratio (plancraft / barsym): {ratio:.1f}x -- target >= {TARGET_RATIO:g}x: "
            f"{'met' if ratio >= TARGET_RATIO else 'NOT met'}"
        )
        differences = compare(oracle, barsym, labels)
        verdicts = sum(d["plancraft"]["possible"] != d["barsym"]["possible"] for d in differences)
        print(
            f"differences: {len(differences)} task(s) ({verdicts} verdict, {len(differences) - verdicts} length only)"
        )
        for d in differences:
            print("  " + difference_line(d))
        report.update(
            barsym={
                "planner": args.planner,
                "total_seconds": total,
                "median_seconds": statistics.median(ours_seconds) if ours else 0.0,
                "possible": sum(a.possible for a in ours),
            },
            ratio=ratio,
            differences=differences,
        )
    else:
        report["barsym"] = {"pending": pending} if pending else None

    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
