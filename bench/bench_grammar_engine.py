"""The two grammar engines (barsym's matcher, llguidance) on barsym's reply grammars, through their one interface.

Measured in one run, over SmolLM2's vocabulary (:mod:`barsym.llm.llamacpp.grammar_engine`): time to compile a
grammar; time for one full-vocabulary mask (mean over every state of a reply); time for a reply the way the span
decoder walks it (at each token: the forced text, whether the token is admitted, the state after it -- no model);
and whether the engines agree: the same mask at every state, the same forced text, the reply accepted by both.
Replies: for the graph grammars of :class:`~barsym.reasoning.grammars.reply_grammar.GrammarBuilder` the forced text with the
first admitted character at each choice; for the plan grammar of ``cot``/``deps``/the baselines, the symbolic
planner's plan for the goal (rendered as the model writes it).

Earlier (2026-12-01, before the seam; llguidance 1.9.1): masks 30-65x faster, but inside forced text llguidance
admitted only the canonical tokenization ("craft", not "c", "cr", "cra"), so its masks were not llama.cpp's. The
engine sets llguidance's ``no_forcing``: the "masks same" column checks that they now are.

With ``--runs A.jsonl B.jsonl`` it measures nothing and compares two ``barsym eval --run`` files (one per engine)
task by task instead: plans identical or not, Acc/F1 of each, seconds; with ``--parse A.jsonl B.jsonl`` two
``bench/bench_parse.py --records`` files the same way.

With ``--replay RUN.jsonl`` it replays the first ``--calls N`` model calls of an eval run (prompts and grammars from
the call log) on one in-process model, each call with both engines in turn (the order alternating, so the load of a
shared machine falls on both alike), greedy, ``--max-tokens`` and no deadline: seconds per reply, end to end with
the model, and whether the replies are the same.

Run: PYTHONPATH=src python bench/bench_grammar_engine.py [--goals N]
     PYTHONPATH=src python bench/bench_grammar_engine.py --replay cot.jsonl --calls 8 --threads 1
     PYTHONPATH=src python bench/bench_grammar_engine.py --runs barsym.jsonl llguidance.jsonl
     PYTHONPATH=src python bench/bench_grammar_engine.py --parse barsym-records.jsonl llguidance-records.jsonl
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import string
import sys
import time

import llama_cpp
import numpy as np

from barsym.kb import load_kb
from barsym.llm.llamacpp.embedded import default_model_path
from barsym.llm.llamacpp.grammar_engine import make_engine
from barsym.llm.llamacpp.native import LoadProfile, NativeModel
from barsym.model import Goal
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.grammars.forward_plans import Vocabulary, render_plan
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder

GOALS = ["stone_pickaxe", "iron_ingot", "torch", "furnace", "chest", "iron_pickaxe", "diamond_pickaxe"]
ENGINES = ("barsym", "llguidance")
REPEATS = 5  # warm replies per grammar; their median is reported (the machine is shared)


def first_reply(engine, gbnf: str) -> str:
    """The forced text, then the first admitted printable character at each choice, until the grammar may end."""
    state, text = engine.compile(gbnf).start(), ""
    while not state.accepting and len(text) < 400:
        step = state.forced() or next(c for c in string.printable if state.advance(c) is not None)
        text, state = text + step, state.advance(step)
    return text


def measure(engine, gbnf: str, tokens: list[int], pieces: list[str]) -> dict:
    t0 = time.perf_counter()
    grammar = engine.compile(gbnf)
    compile_s = time.perf_counter() - t0
    replies = []
    for _ in range(1 + REPEATS):  # the first reply after compiling, then again (the grammar's memo warm)
        t0 = time.perf_counter()
        state, ok = grammar.start(), True
        for token in tokens:  # as the span decoder: forced text, is the token admitted, the state after it
            state.forced()
            if not state.allows(token):
                ok = False
                break
            state = state.after(token)
        replies.append(time.perf_counter() - t0)
    states, state = [], grammar.start()  # by text, so that no state has computed its mask yet
    for piece in pieces:
        states.append(state)
        state = state.advance(piece) if state is not None else None
    states = [s for s in states if s is not None]
    masks, t0 = [], time.perf_counter()
    for s in states:
        masks.append(s.mask())
    mask_s = (time.perf_counter() - t0) / max(1, len(states))
    return {
        "compile": compile_s,
        "reply": replies[0],
        "again": statistics.median(replies[1:]),
        "mask": mask_s,
        "ok": ok and state is not None and state.accepting,
        "masks": masks,
        "forced": [s.forced() for s in states],
    }


def _lines(path: str, kind: str | None = None) -> list[dict]:
    with open(path, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [r for r in rows if kind is None or r.get("kind") == kind]


def compare_runs(first: str, second: str) -> int:
    """Two ``barsym eval --run`` files, task by task: the same plan or not; Acc, F1 and seconds of each."""
    a = {t["key"]: t for t in _lines(first, "task")}
    b = {t["key"]: t for t in _lines(second, "task")}
    keys = [k for k in a if k in b]
    differ = [k for k in keys if a[k]["plan"] != b[k]["plan"]]
    for k in differ:
        print(f"differs: {k}")

    def summary(runs: dict) -> str:
        tasks = [runs[k] for k in keys]
        mean = lambda field: sum(t[field] for t in tasks) / len(tasks)  # noqa: E731
        seconds = sum(t["seconds"] for t in tasks)
        llm = sum(t["stats"]["llm_seconds"] for t in tasks)
        evaluations = sum(t["stats"]["evaluations"] for t in tasks)
        return (
            f"Acc {mean('accuracy'):.2f} | F1 {mean('f1'):.2f} | {seconds:.1f} s ({llm:.1f} s in LLM calls) | "
            f"{evaluations} model evaluations"
        )

    print(f"tasks in both: {len(keys)}; plans identical: {len(keys) - len(differ)}/{len(keys)}")
    print(f"{first}: {summary(a)}")
    print(f"{second}: {summary(b)}")
    compare_replies(first, second)
    return 0


CUT = " [cut off at max_tokens]"  # how the call log marks a reply that max_tokens or the deadline ended


def compare_replies(first: str, second: str) -> None:
    """The two runs' replies in the call log (the runs whose command names each file), goal by goal: identical,
    identical up to where one was cut off (cot's 45 s deadline caps a reply by wall time), or different."""
    from barsym.reasoning.calls.call_log import default_log_path

    path = default_log_path()
    if path is None or not path.exists():
        print("no call log: replies not compared")
        return
    with sqlite3.connect(path) as db:
        replies = []
        for run in (first, second):
            rows = db.execute(
                "SELECT c.goal, c.reply FROM calls c JOIN runs r ON c.run_id = r.id WHERE r.command LIKE ? "
                "ORDER BY c.at",
                (f"%--run {run}%",),
            ).fetchall()
            by_goal: dict[str, list[str]] = {}
            for goal, reply in rows:
                by_goal.setdefault(goal, []).append(reply or "")
            replies.append(by_goal)
    counts = {"identical": 0, "identical up to a cut": 0, "different": 0}
    for goal in [g for g in replies[0] if g in replies[1]]:
        for x, y in zip(replies[0][goal], replies[1][goal]):
            if x == y:
                counts["identical"] += 1
                continue
            x_cut, y_cut = x.endswith(CUT), y.endswith(CUT)
            x, y = x.removesuffix(CUT), y.removesuffix(CUT)
            shorter, longer = (x, y) if len(x) <= len(y) else (y, x)
            cut = (x_cut if shorter is x else y_cut) and longer.startswith(shorter)
            counts["identical up to a cut" if cut else "different"] += 1
            if not cut:
                print(f"replies differ: {goal}")
    print("replies (call log): " + ", ".join(f"{v} {k}" for k, v in counts.items()))


def compare_parse(first: str, second: str) -> int:
    """Two ``bench_parse.py --records`` files, plan by plan: the same steps or not; exact, valid and seconds."""
    a = {(r["parser"], r["task"]): r for r in _lines(first)}
    b = {(r["parser"], r["task"]): r for r in _lines(second)}
    keys = [k for k in a if k in b]
    differ = [k for k in keys if a[k]["got"] != b[k]["got"]]
    for k in differ:
        print(f"parsed differently: {k[1]}")
    print(f"plans in both: {len(keys)}; parsed identically: {len(keys) - len(differ)}/{len(keys)}")
    for path, rows in ((first, a), (second, b)):
        exact = sum(rows[k]["exact"] for k in keys)
        valid = sum(rows[k]["valid"] for k in keys)
        seconds = max(rows[k]["seconds"] for k in keys)  # bench_parse's records count seconds cumulatively
        print(f"{path}: exact {exact}/{len(keys)}, valid {valid}/{len(keys)}, {seconds:.1f} s")
    return 0


def replay(run: str, calls: int, threads: int, max_tokens: int) -> int:
    """The run's first ``calls`` calls, each with both engines on one backend (see the module docstring)."""
    from barsym.llm.base import LLMOptions
    from barsym.llm.llamacpp.backend import LlamaCppBackend
    from barsym.llm.llamacpp.span_decoder import SpanDecoder
    from barsym.reasoning.calls.call_log import default_log_path

    with sqlite3.connect(default_log_path()) as db:
        rows = db.execute(
            "SELECT c.goal, p.body, c.messages, g.body FROM calls c JOIN runs r ON c.run_id = r.id "
            "LEFT JOIN texts p ON p.sha = c.prefix_sha JOIN texts g ON g.sha = c.grammar_sha "
            "WHERE r.command LIKE ? ORDER BY c.at LIMIT ?",
            (f"%--run {run}%", calls),
        ).fetchall()
    t0 = time.perf_counter()
    backend = LlamaCppBackend(options=LLMOptions(n_threads=threads, n_ctx=4096))  # $BARSYM_ADAPTER: none for the base
    print(f"{backend.model_name} loaded in {time.perf_counter() - t0:.1f} s; {len(rows)} calls of {run}")
    decoders = {}
    for name in ENGINES:
        t0 = time.perf_counter()
        decoders[name] = SpanDecoder(backend._context, make_engine(name, backend._model))
        print(f"{name}: engine built in {time.perf_counter() - t0:.2f} s")
    print("| goal | reply tokens | seconds barsym / llg | model evaluations barsym / llg | same reply |")
    print("|---|---|---|---|---|")
    totals = dict.fromkeys(ENGINES, 0.0)
    same = 0
    for i, (goal, prefix, messages, grammar) in enumerate(rows):
        head = json.loads(prefix) if prefix else []
        chat = head + json.loads(messages)
        got = {}
        for name in ENGINES if i % 2 == 0 else ENGINES[::-1]:
            backend._spans = decoders[name]
            if head:
                backend.prime(head)
            got[name] = backend.complete(chat, grammar=grammar, max_tokens=max_tokens, temperature=0)
            totals[name] += got[name].elapsed_s
        b, g = got["barsym"], got["llguidance"]
        same += b.text == g.text
        print(
            f"| {goal} | {b.completion_tokens} | {b.elapsed_s:.1f} / {g.elapsed_s:.1f} | {b.evaluations} / "
            f"{g.evaluations} | {b.text == g.text} |"
        )
    n = max(1, len(rows))
    print(
        f"| all {len(rows)} | | {totals['barsym']:.1f} / {totals['llguidance']:.1f} "
        f"({totals['barsym'] / n:.2f} / {totals['llguidance'] / n:.2f} a reply) | | {same}/{len(rows)} |"
    )
    return 0


def walk(runs: list[str], sample: int, mask_every: int) -> int:
    """Every reply of the given eval runs (from the call log), token by token on SmolLM2's vocabulary, through both
    engines with no model: at every state the same forced text, ``accepting`` and ``finished``, the reply's token and
    ``sample`` random tokens admitted alike, and every ``mask_every``-th state the same whole-vocabulary mask."""
    import random

    from barsym.reasoning.calls.call_log import default_log_path

    model = NativeModel(llama_cpp, default_model_path(), LoadProfile("plain", extra_buffers=False))
    engines = {name: make_engine(name, model) for name in ENGINES}
    compiled: dict[str, dict] = {}
    rng = random.Random(0)
    counts = dict.fromkeys(("replies", "distinct", "states", "token checks", "masks", "differences"), 0)
    with sqlite3.connect(default_log_path()) as db:
        for run in runs:
            rows = db.execute(
                "SELECT g.body, c.reply FROM calls c JOIN runs r ON c.run_id = r.id JOIN texts g ON g.sha = c.grammar_sha "
                "WHERE r.command LIKE ? ORDER BY c.at",
                (f"%--run {run}%",),
            ).fetchall()
            seen = set()
            for grammar, reply in rows:
                counts["replies"] += 1
                reply = (reply or "").removesuffix(CUT)
                if (grammar, reply) in seen:
                    continue
                seen.add((grammar, reply))
                counts["distinct"] += 1
                if grammar not in compiled:
                    compiled[grammar] = {name: engines[name].compile(grammar) for name in ENGINES}
                a, b = compiled[grammar]["barsym"].start(), compiled[grammar]["llguidance"].start()
                for i, token in enumerate([*model.tokenize(reply, add_bos=False, special=False), None]):
                    counts["states"] += 1
                    same = a.forced() == b.forced() and a.accepting == b.accepting and a.finished == b.finished
                    probes = [rng.randrange(model.n_vocab) for _ in range(sample)] + (
                        [token] if token is not None else []
                    )
                    counts["token checks"] += len(probes)
                    same = same and all(a.allows(t) == b.allows(t) for t in probes)
                    if i % mask_every == 0:
                        counts["masks"] += 1
                        same = same and bool(np.array_equal(a.mask(), b.mask()))
                    if not same:
                        counts["differences"] += 1
                        print(f"differ: {run} reply {reply[:60]!r} at token {i}")
                        break
                    if token is None:
                        break
                    a, b = a.after(token), b.after(token)
                    if a is None or b is None:
                        if (a is None) != (b is None):
                            counts["differences"] += 1
                        break
    print(", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goals", type=int, default=len(GOALS))
    ap.add_argument("--runs", nargs=2, metavar="RUN.jsonl", help="compare two eval --run files; measure nothing")
    ap.add_argument("--parse", nargs=2, metavar="RECORDS.jsonl", help="compare two bench_parse --records files")
    ap.add_argument("--replay", metavar="RUN.jsonl", help="replay an eval run's calls with both engines")
    ap.add_argument("--calls", type=int, default=8, help="--replay: how many of the run's calls (default 8)")
    ap.add_argument("--threads", type=int, default=1, help="--replay: the model's threads (default 1)")
    ap.add_argument("--max-tokens", type=int, default=640, help="--replay: reply cap (default 640, cot's)")
    ap.add_argument(
        "--walk", nargs="+", metavar="RUN.jsonl", help="walk every reply of these runs through both engines"
    )
    ap.add_argument("--sample", type=int, default=64, help="--walk: random tokens checked at each state (default 64)")
    ap.add_argument("--mask-every", type=int, default=20, help="--walk: a whole mask every N states (default 20)")
    args = ap.parse_args()
    if args.walk:
        return walk(args.walk, args.sample, args.mask_every)
    if args.replay:
        return replay(args.replay, args.calls, args.threads, args.max_tokens)
    if args.runs:
        return compare_runs(*args.runs)
    if args.parse:
        return compare_parse(*args.parse)
    kb = load_kb("1.16.5")
    builder = GrammarBuilder(kb, graph_for(kb))
    plan_grammar = Vocabulary(kb, graph_for(kb)).plan_grammar()
    model = NativeModel(llama_cpp, default_model_path(), LoadProfile("plain", extra_buffers=False))
    engines = {}
    for name in ENGINES:
        t0 = time.perf_counter()
        engines[name] = make_engine(name, model)
        print(f"{name}: engine over {model.n_vocab} tokens built in {time.perf_counter() - t0:.2f} s")
    cases = []
    for item in GOALS[: args.goals]:
        gbnf = builder.for_goal(Goal(item=item)).text
        cases.append((f"graph {item}", gbnf, first_reply(engines["barsym"], gbnf)))
    for item in GOALS[: max(1, args.goals // 2)]:
        cases.append((f"plan {item}", plan_grammar, render_plan(symbolic_planner(kb).plan(Goal(item=item)).plan.steps)))
    print()
    print(
        "| grammar | reply tokens | compile ms barsym / llg | mask ms barsym / llg (x) | reply ms barsym / llg "
        "| reply again (median of 5) ms barsym / llg | masks same | forced same | accepted barsym / llg |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    totals = {name: {"compile": 0.0, "reply": 0.0, "again": 0.0, "mask": 0.0} for name in ENGINES}
    for label, gbnf, reply in cases:
        tokens = model.tokenize(reply, add_bos=False, special=False)
        pieces = [model.piece(t).decode("utf-8") for t in tokens]
        got = {name: measure(engines[name], gbnf, tokens, pieces) for name in ENGINES}
        b, g = got["barsym"], got["llguidance"]
        for name in ENGINES:
            for key in totals[name]:
                totals[name][key] += got[name][key]
        same_masks = len(b["masks"]) == len(g["masks"]) and all(
            np.array_equal(x, y) for x, y in zip(b["masks"], g["masks"])
        )
        print(
            f"| {label} | {len(tokens)} | {b['compile'] * 1e3:.2f} / {g['compile'] * 1e3:.2f} "
            f"| {b['mask'] * 1e3:.1f} / {g['mask'] * 1e3:.3f} (x{b['mask'] / max(g['mask'], 1e-9):.0f}) "
            f"| {b['reply'] * 1e3:.2f} / {g['reply'] * 1e3:.2f} | {b['again'] * 1e3:.2f} / {g['again'] * 1e3:.2f} "
            f"| {same_masks} | {b['forced'] == g['forced']} | {b['ok']} / {g['ok']} |"
        )
    n = len(cases)
    b, g = totals["barsym"], totals["llguidance"]
    print(
        f"| mean of {n} | | {b['compile'] / n * 1e3:.2f} / {g['compile'] / n * 1e3:.2f} "
        f"| {b['mask'] / n * 1e3:.1f} / {g['mask'] / n * 1e3:.3f} | {b['reply'] / n * 1e3:.2f} / "
        f"{g['reply'] / n * 1e3:.2f} | {b['again'] / n * 1e3:.2f} / {g['again'] / n * 1e3:.2f} | | | |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
