"""Benchmark: knowledge-base load (cold and warm) and validator throughput.

    python bench/bench_validate.py [--dataset ../shared/datasets/bar_tech_tree] [--repeat 200]

Cold = building from minecraft-data and data/recipes with no cache; warm =
loading the on-disk cache in a fresh Python process (what a CLI start pays).
Each is measured in its own subprocess so no in-process memo hides the cost.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_LOAD = """
import json, time
t0 = time.perf_counter()
from barsym.kb import load_kb
t1 = time.perf_counter()
kb = load_kb(use_cache={use_cache})
t2 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "load": t2 - t1}}))
"""


def _time_load(use_cache: bool, cache_dir: str, runs: int) -> dict:
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", _LOAD.format(use_cache=use_cache)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "BARSYM_CACHE_DIR": cache_dir},
        )
        samples.append(json.loads(out.stdout))
    return {key: statistics.median(s[key] for s in samples) for key in samples[0]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, default=REPO.parent / "shared" / "datasets" / "bar_tech_tree")
    parser.add_argument("--repeat", type=int, default=200, help="passes over the 53 plans")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per load timing")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as cache:
        cold = _time_load(False, cache, args.runs)
        _time_load(True, cache, 1)  # fill the cache
        warm = _time_load(True, cache, args.runs)
    print(f"kb cold load : {cold['load'] * 1000:7.1f} ms  (import {cold['import'] * 1000:.1f} ms)")
    print(
        f"kb warm load : {warm['load'] * 1000:7.1f} ms  (import {warm['import'] * 1000:.1f} ms)  "
        f"cold/warm = {cold['load'] / warm['load']:.0f}x"
    )

    from barsym.bar_io import read_plan
    from barsym.kb import load_kb
    from barsym.validation import Validator

    files = sorted(args.dataset.glob("*/*.jsonl"))
    if not files:
        print(f"no plans under {args.dataset}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    plans = [read_plan(f) for f in files]
    validator = Validator(load_kb())
    first = [validator.validate(p) for p in plans]
    once = time.perf_counter() - t0
    steps = sum(len(p) for p in plans)
    t0 = time.perf_counter()
    for _ in range(args.repeat):
        for plan in plans:
            validator.validate(plan)
    elapsed = time.perf_counter() - t0
    verdicts = {v: sum(r.verdict.value == v for r in first) for v in ("valid", "valid with waste", "invalid")}
    print(f"first pass   : {len(plans)} plans, {steps} steps read+validated in {once * 1000:.1f} ms; {verdicts}")
    print(
        f"throughput   : {steps * args.repeat / elapsed:,.0f} steps/s "
        f"({args.repeat} x {len(plans)} plans, {elapsed:.2f} s; target >= 20,000)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
