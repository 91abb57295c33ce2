"""Are ``bar``'s plans on BAR's 53 tasks the same with llama.cpp's extra buffer types on and off?

    python bench/compare_profiles.py [--limit N] [--threads 2] [--no-facts]

Issue 19 asks whether "same command, same plan" holds across the ways llama.cpp
can run the model. barsym runs it without extra buffer types on every CPU
(:mod:`barsym.llm.llamacpp.runtime_check`); this runs the planner once with each load
profile (one process each, the profile forced by name) and lists the tasks
whose plans or model replies differ. On an AMX CPU the "extra-buffers" side is
the crashing path, so run it on a machine without AMX.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def dump(profile: str, out: Path, limit: int | None, threads: int, facts: bool) -> None:
    from barsym.eval import load_dataset
    from barsym.kb import load_kb
    from barsym.llm import LlamaCppBackend, LLMOptions
    from barsym.llm.llamacpp import runtime_check
    from barsym.planner import PlanningError, make_planner

    runtime_check.profiles_for = lambda flags: [runtime_check.PROFILES[profile]]  # force the profile
    kb = load_kb()
    tasks = load_dataset(REPO.parent / "shared" / "datasets" / "bar_tech_tree", kb)[:limit]
    backend = LlamaCppBackend(None, options=LLMOptions(n_threads=threads, n_ctx=2048))
    assert backend.runtime.profile.name == profile
    replies: list[str] = []
    original = backend.complete

    def complete(messages, **kw):
        reply = original(messages, **kw)
        replies.append(reply.text)
        return reply

    backend.complete = complete
    planner = make_planner("bar", kb, backend=backend, facts=facts, log=False)
    result = {}
    for task in tasks:
        first = len(replies)
        try:
            plan = [str(step) for step in planner.plan(task.goal).plan]
        except PlanningError as exc:
            plan = [f"error: {exc}"]
        result[task.name] = {"plan": plan, "replies": replies[first:]}
    out.write_text(json.dumps(result))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-facts", action="store_true")
    parser.add_argument("--dump", nargs=2, metavar=("PROFILE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        dump(args.dump[0], Path(args.dump[1]), args.limit, args.threads, not args.no_facts)
        return 0
    sides = {}
    with tempfile.TemporaryDirectory() as tmp:
        for profile in ("extra-buffers", "plain"):
            out = Path(tmp) / f"{profile}.json"
            cmd = [sys.executable, __file__, "--dump", profile, str(out), "--threads", str(args.threads)]
            cmd += (["--limit", str(args.limit)] if args.limit else []) + (["--no-facts"] if args.no_facts else [])
            subprocess.run(cmd, check=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
            sides[profile] = json.loads(out.read_text())
    a, b = sides["extra-buffers"], sides["plain"]
    plans = [t for t in a if a[t]["plan"] != b[t]["plan"]]
    replies = [t for t in a if a[t]["replies"] != b[t]["replies"]]
    calls = sum(len(v["replies"]) for v in a.values())
    print(
        f"bar on {len(a)} BAR tasks ({'no facts' if args.no_facts else 'facts'}), extra buffer types on vs off: "
        f"{len(a) - len(plans)}/{len(a)} plans identical, {len(a) - len(replies)}/{len(a)} tasks with identical "
        f"replies ({calls} model calls)"
    )
    for task in plans:
        print(f"  plan differs: {task}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
