"""``barsym eval --workers N`` against a serial run: same results, and how much faster.

Runs ``barsym eval`` twice in fresh processes on the same task set, once
serially (the model on every core) and once with ``--workers N`` (each worker
its own model on cores/N threads), each into its own ``--run`` file, then
compares the files task by task: the plan, the validator's verdict, the
scores and the LLM counters must be identical; only times (and the few
counters that say how the prefix was made ready) may differ. Prints both wall
times and their ratio. One run, as measured; the machine's load is not
controlled, so run it under ``flock /tmp/barsym-bench.lock`` on a shared box.

    python bench/bench_workers.py [--planner bar] [--workers 2] [--dataset PATH] [--out DIR] [--limit N]
                                  [--world stochastic] [--executor local|ray]

With ``--executor ray`` the second run goes through ``--executor ray`` (a local
Ray started by eval with ``num_cpus`` = workers) instead of the process pool.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATASET = HERE.parent.parent / "shared" / "datasets" / "bar_tech_tree"
#: fields of a record that measure time or cache state, not what the planner decided
TIMING = {
    "seconds",
    "llm_seconds",
    "prime_seconds",
    "prefix",
    "prefix_seconds",
    "cached_prompt_tokens",
    "evaluated_prompt_tokens",
    "prefix_state",
    "primed",
    "priming",
}


def run(argv: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "barsym.cli", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    if done.returncode not in (0, 1):
        sys.exit(f"barsym {' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()[-300:]}")
    return time.perf_counter() - started


def records(path: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]
    return {r["key"]: r for r in rows}


def decided(record: dict) -> dict:
    """A record without its times: what must be the same wherever the task ran."""
    out = {k: v for k, v in record.items() if k not in TIMING}
    out["stats"] = {k: v for k, v in (record.get("stats") or {}).items() if k not in TIMING}
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--planner", default="bar")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--dataset", type=Path, default=DATASET)
    p.add_argument("--limit", type=int)
    p.add_argument("--out", type=Path, default=Path("bench-workers"))
    p.add_argument("--world", help="also execute every plan in this world (both runs; --runs 50)")
    p.add_argument("--serial-threads", type=int, help="--threads of the serial run (default: all cores)")
    p.add_argument(
        "--executor",
        default="local",
        choices=["local", "ray"],
        help="how the second run spreads its tasks (eval's --executor)",
    )
    p.add_argument("--tag", default="", help="suffix of the run files' names")
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    serial = args.out / f"{args.planner}-serial{args.tag}.jsonl"
    parallel = args.out / f"{args.planner}-{'workers' if args.executor == 'local' else 'ray'}{args.tag}.jsonl"
    for path in (serial, parallel):
        path.unlink(missing_ok=True)
    common = ["eval", "--dataset", str(args.dataset), "--planner", args.planner, "--quiet"]
    if args.limit:
        common += ["--limit", str(args.limit)]
    if args.world:
        common += ["--world", args.world, "--runs", "50"]
    print(f"{os.cpu_count()} cores; planner {args.planner}; {args.dataset}")
    threads = ["--threads", str(args.serial_threads)] if args.serial_threads else []
    load = os.getloadavg()[0]
    t_serial = run(common + threads + ["--run", str(serial)])
    print(
        f"serial{' --threads ' + str(args.serial_threads) if threads else ''}: {t_serial:8.1f} s   "
        f"(1-min load average {load:.2f} before, {os.getloadavg()[0]:.2f} after)"
    )
    load = os.getloadavg()[0]
    spread = ["--workers", str(args.workers)] + (["--executor", "ray"] if args.executor == "ray" else [])
    t_parallel = run(common + spread + ["--run", str(parallel)])
    print(
        f"{' '.join(spread)}: {t_parallel:8.1f} s   ({t_parallel / t_serial:.2f}x serial; "
        f"1-min load average {load:.2f} before, {os.getloadavg()[0]:.2f} after)"
    )
    a, b = records(serial), records(parallel)
    differing = [k for k in a if k not in b or decided(a[k]) != decided(b[k])]
    missing = sorted(set(a) ^ set(b))
    print(
        f"tasks: {len(a)} serial, {len(b)} with {args.executor} workers; identical (plans, verdicts, scores, LLM counters): "
        f"{len(a) - len(differing)}/{len(a)}" + (f"; missing: {missing}" if missing else "")
    )
    for key in differing[:5]:
        x, y = decided(a[key]), decided(b.get(key, {}))
        fields = sorted(f for f in set(x) | set(y) if x.get(f) != y.get(f))
        if "stats" in fields:
            fields += [
                f"stats.{s}"
                for s in sorted(set(x["stats"]) | set(y.get("stats", {})))
                if x["stats"].get(s) != y.get("stats", {}).get(s)
            ]
        print(f"  differs: {key}: {', '.join(fields)}")
    calls = sum((r.get("stats") or {}).get("llm_calls", 0) for r in a.values())
    print(f"LLM calls: {calls} in each run")
    # Why the ratio is what it is: per task, a worker's model has cores/N threads, the serial one all
    # of them. N workers can at best divide the work by N, each at its own (slower) pace per task.
    per_serial = sum(r["seconds"] for r in a.values()) / max(1, len(a))
    per_worker = sum(r["seconds"] for r in b.values()) / max(1, len(b))
    bound = per_worker / args.workers / per_serial if per_serial else float("nan")
    print(
        f"seconds per task: {per_serial:.2f} serial, {per_worker:.2f} in a worker "
        f"({per_serial and per_worker / per_serial:.2f}x); so at best {bound:.2f}x serial with {args.workers} "
        f"workers, before process start-up and the last tasks' imbalance"
    )
    return 0 if not differing and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
