"""Benchmark: loading the knowledge-base cache, JSON (barsym's format now) against pickle (the old one).

    PYTHONPATH=src python bench/bench_kb_cache.py [--fresh 7] [--warm 30]

The pickle cache ran any code a planted file held, so it became checked JSON
(:mod:`barsym.kb.cache`); the cache exists for speed, so this measures what
the change costs, both formats written from the same knowledge base:

* fresh start: a new Python process reads the cache file and rebuilds the
  knowledge base, as a CLI start does (barsym.kb imported before the clock;
  the data fingerprint is inside the time for both, as the old load named
  the pickle by it and the new one checks the header against it);
* warm start: the same load again in one process (file in the page cache,
  decoders built), the median of ``--warm`` loads.

Prints the medians and the ratio JSON / pickle. The pickle is made here only
to compare; barsym never reads one.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from barsym.kb import build_knowledge_base, default_data_dir  # noqa: E402
from barsym.kb import cache as kb_cache  # noqa: E402

_FRESH = """
import json, pickle, sys, time
from pathlib import Path
from barsym.kb import cache as kb_cache, default_data_dir
kind, path = sys.argv[1], Path(sys.argv[2])
t0 = time.perf_counter()
stamp = kb_cache.fingerprint("1.16.5", default_data_dir())  # both: load_kb named the pickle by it too
if kind == "json":
    kb = kb_cache.read(path, stamp)
else:
    with path.open("rb") as handle:
        kb = pickle.load(handle)
print(json.dumps(time.perf_counter() - t0))
"""


def _load_json(path: Path):
    return kb_cache.read(path, kb_cache.fingerprint("1.16.5", default_data_dir()))


def _load_pickle(path: Path):
    kb_cache.fingerprint("1.16.5", default_data_dir())  # the old load_kb named the file by it as well
    with path.open("rb") as handle:
        return pickle.load(handle)


def fresh(kind: str, path: Path, runs: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    samples = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, "-c", _FRESH, kind, str(path)], capture_output=True, text=True, check=True, env=env
        )
        samples.append(json.loads(out.stdout))
    return statistics.median(samples)


def warm(load, path: Path, runs: int) -> float:
    load(path)
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        load(path)
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fresh", type=int, default=7, help="fresh processes per format (default 7)")
    parser.add_argument("--warm", type=int, default=30, help="in-process loads per format (default 30)")
    args = parser.parse_args()
    kb = build_knowledge_base("1.16.5", default_data_dir())
    with tempfile.TemporaryDirectory() as folder:
        json_path, pickle_path = Path(folder) / "kb.json", Path(folder) / "kb.pickle"
        kb_cache.write(json_path, kb, kb_cache.fingerprint("1.16.5", default_data_dir()))
        pickle_path.write_bytes(pickle.dumps(kb, protocol=pickle.HIGHEST_PROTOCOL))
        assert _load_json(json_path) == kb  # the same knowledge base either way
        sizes = json_path.stat().st_size, pickle_path.stat().st_size
        rows = [
            (
                "fresh start (new process)",
                fresh("json", json_path, args.fresh),
                fresh("pickle", pickle_path, args.fresh),
            ),
            (
                "warm start (same process)",
                warm(_load_json, json_path, args.warm),
                warm(_load_pickle, pickle_path, args.warm),
            ),
        ]
    print(f"knowledge-base cache load, median; JSON {sizes[0] / 1e6:.2f} MB, pickle {sizes[1] / 1e6:.2f} MB")
    print(f"{'':28} {'JSON (now)':>12} {'pickle (was)':>13} {'ratio':>7}")
    for name, new, old in rows:
        print(f"{name:28} {new * 1000:9.1f} ms {old * 1000:10.1f} ms {new / old:6.2f}x")


if __name__ == "__main__":
    main()
