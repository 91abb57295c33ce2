"""Benchmark: the start of a light command in a fresh process, this tree against a base commit, in one run.

    python bench/bench_start.py [--base 17e6549 | --base-tree DIR] [--runs 10] [--markdown FILE]

Times ``barsym plan stick --planner symbolic`` and ``barsym validate examples/diamond_pickaxe.jsonl``,
each a new ``python -m barsym.cli`` process, on the base commit's code (a temporary ``git worktree``,
run through ``PYTHONPATH``) and on this tree's, alternating old and new so that the shared machine's load
falls on both; reports the medians, the ratio new / old (issue 36's target: half or less), the CPU of
the symbolic plan against issue 54's absolute target (0.2 s of user + system CPU) and the barsym modules
each side loads (counted in one more run). Each side has its own cache folder (the knowledge base's),
warmed by one untimed run, which also writes each tree's bytecode: the children run without
``PYTHONDONTWRITEBYTECODE``, as an installed barsym (whose .pyc files pip writes) does, so compiling
barsym's sources is not counted. The work itself (one short plan, one plan checked) takes milliseconds:
what is measured is the start -- imports and the parser.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASE = "17e6549"  # main before issue 36
TARGET_CPU = 0.2  # issue 54: barsym plan stick --planner symbolic, user + system CPU of a fresh process
COMMANDS = {
    "plan --planner symbolic": ["plan", "stick", "--planner", "symbolic"],
    "validate": ["validate", "examples/diamond_pickaxe.jsonl"],
}
COUNT = (
    "import json, sys; from barsym.cli import main; main(sys.argv[2:]); mods = set(sys.modules); "
    "json.dump({'barsym': sum(m == 'barsym' or m.startswith('barsym.') for m in mods), 'all': len(mods), "
    "'numpy': 'numpy' in mods}, open(sys.argv[1], 'w'))"
)


def environment(tree: Path, cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "BARSYM_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode as installed: the warm run writes it, the timed runs read it
    return env


def run_once(tree: Path, cache: Path, argv: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of the child: what the load of a shared machine inflates
    least)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "barsym.cli", *argv], cwd=tree, env=environment(tree, cache), capture_output=True
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"barsym {' '.join(argv)} failed in {tree}: {done.stderr.decode()[-400:]}")
    return seconds, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def modules(tree: Path, cache: Path, argv: list[str], out: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", COUNT, str(out), *argv], cwd=tree, env=environment(tree, cache), capture_output=True
    )
    if done.returncode != 0:
        raise SystemExit(
            f"counting the modules of barsym {' '.join(argv)} failed in {tree}: {done.stderr.decode()[-400:]}"
        )
    return json.loads(out.read_text())


def measure(base: Path, tmp: Path, runs: int) -> dict:
    sides = {"old": (base, tmp / "old-cache"), "new": (REPO, tmp / "new-cache")}
    load = [os.getloadavg()[0]]
    report: dict = {}
    for label, argv in COMMANDS.items():
        times: dict[str, list[float]] = {"old": [], "new": []}
        cpu: dict[str, list[float]] = {"old": [], "new": []}
        for tree, cache in sides.values():
            run_once(tree, cache, argv)  # warm: the knowledge base's cache, the file system's
        for i in range(runs):
            for name in ("old", "new") if i % 2 == 0 else ("new", "old"):
                seconds, used = run_once(*sides[name], argv)
                times[name].append(seconds)
                cpu[name].append(used)
        med = {name: statistics.median(values) for name, values in times.items()}
        med_cpu = {name: statistics.median(values) for name, values in cpu.items()}
        report[label] = {
            "seconds": {name: [round(t, 3) for t in values] for name, values in times.items()},
            "median": {name: round(v, 3) for name, v in med.items()},
            "ratio_new_over_old": round(med["new"] / med["old"], 2),
            "cpu_seconds": {name: [round(t, 3) for t in values] for name, values in cpu.items()},
            "cpu_median": {name: round(v, 3) for name, v in med_cpu.items()},
            "cpu_ratio_new_over_old": round(med_cpu["new"] / med_cpu["old"], 2),
            "modules": {name: modules(*sides[name], argv, tmp / f"{name}.json") for name in sides},
        }
        load.append(os.getloadavg()[0])
    return {"runs": runs, "load_average": [round(x, 2) for x in load], "commands": report}


def markdown(r: dict, base: str) -> str:
    lines = [
        f"Fresh-process start of two light commands, this tree against {base}, alternating, "
        f"{r['runs']} runs each (`python bench/bench_start.py`); load average "
        f"{' / '.join(f'{x:.2f}' for x in r['load_average'])} over the run (2 shared cores).",
        "",
        "| command | wall old | wall new | wall new / old | CPU old | CPU new | CPU new / old "
        "| barsym modules old -> new | all modules old -> new | numpy old -> new |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, c in r["commands"].items():
        m = c["modules"]
        lines.append(
            f"| `barsym {' '.join(COMMANDS[label])}` | {c['median']['old']:.3f} s | {c['median']['new']:.3f} s "
            f"| {c['ratio_new_over_old']:.2f} | {c['cpu_median']['old']:.3f} s | {c['cpu_median']['new']:.3f} s "
            f"| **{c['cpu_ratio_new_over_old']:.2f}** | {m['old']['barsym']} -> {m['new']['barsym']} "
            f"| {m['old']['all']} -> {m['new']['all']} | {m['old']['numpy']} -> {m['new']['numpy']} |"
        )
    lines += ["", "Every run, wall and CPU seconds:", ""]
    for label, c in r["commands"].items():
        lines.append(f"- `{label}` wall: old {c['seconds']['old']}, new {c['seconds']['new']}")
        lines.append(f"- `{label}` CPU: old {c['cpu_seconds']['old']}, new {c['cpu_seconds']['new']}")
    for what, key in (("wall", "ratio_new_over_old"), ("CPU", "cpu_ratio_new_over_old")):
        met = all(c[key] <= 0.5 for c in r["commands"].values())
        if base == BASE:  # issue 36's target is a ratio to the code before it
            lines.append(f"\nTarget (issue 36: half the time or less), {what} time: {'met' if met else 'NOT met'}.")
    plan = r["commands"]["plan --planner symbolic"]["cpu_median"]["new"]
    lines.append(
        f"\nTarget (issue 54: `plan stick --planner symbolic` <= {TARGET_CPU} s of CPU): {plan:.3f} s, "
        f"{'met' if plan <= TARGET_CPU else 'NOT met'}."
    )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default=BASE, help=f"commit to compare with (default {BASE})")
    parser.add_argument("--base-tree", type=Path, help="an existing checkout of the base code instead")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="barsym-start-") as tmp:
        base = args.base_tree or Path(tmp) / "base"
        if args.base_tree is None:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "add", "--detach", str(base), args.base],
                check=True,
                capture_output=True,
            )
        try:
            report = measure(base, Path(tmp), args.runs)
        finally:
            if args.base_tree is None:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False)
    text = markdown(report, str(args.base_tree or args.base))
    print(text, end="")
    if args.markdown:
        args.markdown.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
