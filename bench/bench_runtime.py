"""Benchmark: how barsym runs the embedded model, measured in fresh processes, in one run.

    python bench/bench_runtime.py [--rounds 5] [--threads 2] [--item diamond_pickaxe] [--json FILE]

Two comparisons, each side a new Python process per round, sides alternated so
load on this shared machine falls on both alike:

1. **Load profiles** (:mod:`barsym.llm.llamacpp.runtime_check`): the model loaded with
   llama.cpp's extra buffer types on, off, and with one-token micro-batches;
   each process loads the model, evaluates a 600-token prompt in one batch and
   decodes 100 tokens greedily. Shows the seconds of each part, the ratio to
   "extra buffers on", and whether the greedy text is the same for all three
   (the kernels differ, so it need not be).
2. **`barsym plan ITEM` against a bare 100-token completion**: the whole
   planning command (imports, knowledge base, runtime check remembered, saved
   prefix state, every LLM call, validation) against a process that only loads
   the model and writes 100 tokens. Issue 19's target: at most 2x.
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
PROFILES = ("extra-buffers", "plain", "one-token-batches")

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import llama_cpp
from barsym.llm.llamacpp.embedded import default_model_path
from barsym.llm.llamacpp.native import NativeContext, NativeModel
from barsym.llm.llamacpp.runtime_check import PROFILES
profile = PROFILES[sys.argv[1]]
model = NativeModel(llama_cpp, default_model_path(), profile)
context = NativeContext(model, n_ctx=1024, n_threads=int(sys.argv[2]), ubatch=profile.ubatch)
t1 = time.perf_counter()
prompt = model.tokenize("Gather wood, craft planks and sticks, then a table and a pickaxe. " * 40, True, False)[:600]
if sys.argv[3] == "prompt":
    context.evaluate(prompt, first_output=len(prompt) - 1)
else:
    context.evaluate(prompt[:8], first_output=7)
t2 = time.perf_counter()
out = []
with context.sampler(None, 0.0, 0) as sampler:
    for _ in range(100):
        token = sampler.sample()
        out.append(token)
        context.evaluate([token], first_output=0)
t3 = time.perf_counter()
print(json.dumps({"load": t1 - t0, "prompt": t2 - t1, "decode": t3 - t2, "total": t3 - t0,
                  "text": model.detokenize(out)}))
"""


def child(profile: str, threads: int, part: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, profile, str(threads), part], env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        return {"failed": f"exit {done.returncode}: {done.stderr.strip()[-300:]}"}
    result = json.loads(done.stdout)
    result["wall"] = time.perf_counter() - started
    return result


def plan_once(cache: Path, item: str, threads: int) -> float:
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO / "src"),
        "BARSYM_CACHE_DIR": str(cache),
        "BARSYM_LOG_DB": str(cache / "logs.db"),
    }
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "barsym.cli", "plan", item, "--threads", str(threads)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"barsym plan failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--item", default="diamond_pickaxe")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    report: dict = {"threads": args.threads, "rounds": args.rounds, "load_average_start": os.getloadavg()[0]}

    runs: dict[str, list[dict]] = {name: [] for name in PROFILES}
    for round_ in range(args.rounds):
        for name in PROFILES if round_ % 2 == 0 else PROFILES[::-1]:
            runs[name].append(child(name, args.threads, "prompt"))
    profiles = {}
    for name, results in runs.items():
        good = [r for r in results if "failed" not in r]
        if not good:
            profiles[name] = {"failed": results[0]["failed"]}
            continue
        profiles[name] = {
            part: round(statistics.median(r[part] for r in good), 3) for part in ("load", "prompt", "decode", "total")
        }
        profiles[name]["texts"] = sorted({r["text"] for r in good})
    report["profiles"] = profiles

    with tempfile.TemporaryDirectory(prefix="barsym-runtime-") as tmp:
        cache = Path(tmp)
        plan_once(cache, args.item, args.threads)  # warm: runtime check, kb cache, prefix state
        plan_times, bare_times = [], []
        for round_ in range(args.rounds):
            for side in ("plan", "bare") if round_ % 2 == 0 else ("bare", "plan"):
                if side == "plan":
                    plan_times.append(plan_once(cache, args.item, args.threads))
                else:
                    bare_times.append(child("plain", args.threads, "bare")["wall"])
    report["plan_s"] = [round(t, 3) for t in plan_times]
    report["bare_s"] = [round(t, 3) for t in bare_times]
    report["plan_over_bare"] = round(statistics.median(plan_times) / statistics.median(bare_times), 2)
    report["load_average_end"] = os.getloadavg()[0]
    print_report(report, args.item)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def print_report(r: dict, item: str) -> None:
    print(
        f"load profiles, fresh process each, {r['threads']} threads, {r['rounds']} rounds "
        f"(load average {r['load_average_start']:.2f} -> {r['load_average_end']:.2f})"
    )
    base = r["profiles"].get("extra-buffers", {})
    print("| profile | load s | 600-token prompt s | 100 tokens s | total s | total / extra-buffers |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for name, p in r["profiles"].items():
        if "failed" in p:
            print(f"| {name} | failed: {p['failed']} | | | | |")
            continue
        ratio = f"{p['total'] / base['total']:.2f}x" if base.get("total") else "-"
        print(f"| {name} | {p['load']:.3f} | {p['prompt']:.3f} | {p['decode']:.3f} | {p['total']:.3f} | {ratio} |")
    texts = {t for p in r["profiles"].values() for t in p.get("texts", [])}
    print(
        f"greedy text of the 100 tokens: {'identical across profiles' if len(texts) == 1 else f'{len(texts)} different texts'}"
    )
    print(f"barsym plan {item} (fresh process, warm caches) vs a bare 100-token completion (fresh process):")
    print(f"  plan {r['plan_s']}  bare {r['bare_s']}  median ratio {r['plan_over_bare']:.2f}x (target <= 2x)")


if __name__ == "__main__":
    sys.exit(main())
