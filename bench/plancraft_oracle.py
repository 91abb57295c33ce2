"""Run Plancraft's own optimal planner on Plancraft tasks and write one JSON line per task.

    /work/bench-plancraft-venv/bin/python bench/plancraft_oracle.py TASKS.json [--limit N] [-o FILE]

Run it with the interpreter of the benchmark environment that has the ``plancraft``
package (0.4.9) installed, never with barsym's: this script does not import barsym,
and barsym does not depend on plancraft. See bench/README.md for the setup.

Each task line is ``{"id", "target", "possible", "path", "seconds", "timed_out"}``:
``path`` lists the item each craft or smelt action makes, in order (``[]`` when the
target is already held, ``null`` when no plan was found), ``seconds`` is the time
spent inside ``optimal_planner`` alone (time.perf_counter; imports and Plancraft's
recipe loading happen once, before the first task), and ``timed_out`` says that
the search hit its wall-clock limit (Plancraft returns no plan then, even when it
had found one). The last line is ``{"summary": {...}}`` with the totals.

Plancraft's search order follows Python's string hashing (it walks a set of
ancestor items), so its times, and which of several equally short paths it
returns, change with PYTHONHASHSEED; verdicts and path lengths do not (checked
on train.json over several seeds). Set PYTHONHASHSEED for repeatable times:
bench_plancraft.py runs this script with PYTHONHASHSEED=0 unless told otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", type=Path, help="Plancraft task file (e.g. train.json)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    parser.add_argument("--id", dest="ids", action="append", default=None, help="only this task id (repeatable)")
    parser.add_argument("-o", "--output", type=Path, default=None, help="write JSON Lines here (default: stdout)")
    parser.add_argument("--max-steps", type=int, default=40, help="Plancraft's step limit (default 40)")
    parser.add_argument("--timeout", type=float, default=30.0, help="Plancraft's search limit in seconds (default 30)")
    parser.add_argument(
        "--progress",
        type=int,
        default=50,
        metavar="N",
        help="a progress line on stderr every N tasks (0: none; slow tasks are always shown)",
    )
    return parser.parse_args(argv)


def load_tasks(path: Path, limit: int | None, ids: list[str] | None) -> list[dict]:
    tasks = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(tasks, list):
        raise SystemExit(f"{path}: expected a list of Plancraft tasks")
    if ids:
        wanted = set(ids)
        tasks = [t for t in tasks if t.get("id") in wanted]
    if limit is not None:
        tasks = tasks[:limit]
    return tasks


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tasks = load_tasks(args.tasks, args.limit, args.ids)

    try:
        # Importing the planner module loads Plancraft's recipes and builds its recipe graph.
        from plancraft.environment import planner as plancraft_planner
    except ImportError as exc:
        print(
            f"plancraft_oracle: cannot import plancraft ({exc}); run this with the benchmark "
            "environment's python (see bench/README.md)",
            file=sys.stderr,
        )
        return 2
    try:
        from importlib.metadata import version

        plancraft_version = version("plancraft")
    except Exception:  # noqa: BLE001 - the version is informative only
        plancraft_version = "?"

    out = open(args.output, "w", encoding="utf-8") if args.output else sys.stdout
    total = 0.0
    solved = timeouts = 0
    try:
        for number, task in enumerate(tasks, start=1):
            inventory = {item: int(n) for item, n in task["inventory"].items()}
            start = time.perf_counter()
            plan = plancraft_planner.optimal_planner(
                target=task["target"],
                inventory=inventory,
                steps=[],
                best_steps=None,
                max_steps=args.max_steps,
                timeout=args.timeout,
            )
            seconds = time.perf_counter() - start
            total += seconds
            possible = plan is not None
            # optimal_planner swallows its own TimeoutError and returns None
            timed_out = not possible and seconds >= args.timeout
            solved += possible
            timeouts += timed_out
            record = {
                "id": task.get("id"),
                "target": task["target"],
                "possible": possible,
                "path": [recipe.result.item for recipe, _inventory in plan] if possible else None,
                "seconds": round(seconds, 6),
                "timed_out": timed_out,
            }
            out.write(json.dumps(record) + "\n")
            out.flush()
            if seconds > 5 or (args.progress and (number % args.progress == 0 or number == len(tasks))):
                print(
                    f"[{number}/{len(tasks)}] {record['id']} {task['target']}: "
                    f"{'solved' if possible else 'timed out' if timed_out else 'no plan'} in {seconds:.3f} s; "
                    f"so far {solved} solved, {timeouts} timeouts, {total:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
        summary = {
            "tasks": len(tasks),
            "possible": solved,
            "timed_out": timeouts,
            "total_seconds": round(total, 6),
            "plancraft": plancraft_version,
            "max_steps": args.max_steps,
            "timeout": args.timeout,
            "pythonhashseed": os.environ.get("PYTHONHASHSEED", "random"),
        }
        out.write(json.dumps({"summary": summary}) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
