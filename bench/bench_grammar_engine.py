"""The two grammar engines (barsym's matcher, llguidance) on barsym's reply grammars, through their one interface.

Measured in one run, over SmolLM2's vocabulary (:mod:`barsym.llm.llamacpp.grammar_engine`): time to compile a
grammar; time for one full-vocabulary mask (mean over every state of a reply); time for a reply the way the span
decoder walks it (at each token: the forced text, whether the token is admitted, the state after it -- no model);
and whether the engines agree: the same mask at every state, the same forced text, the reply accepted by both.
Replies: for the graph grammars of :class:`~barsym.reasoning.reply_grammar.GrammarBuilder` the forced text with the
first admitted character at each choice; for the plan grammar of ``cot``/``deps``/the baselines, the symbolic
planner's plan for the goal (rendered as the model writes it).

Earlier (2026-12-01, before the seam; llguidance 1.9.1): masks 30-65x faster, but inside forced text llguidance
admitted only the canonical tokenization ("craft", not "c", "cr", "cra"), so its masks were not llama.cpp's. The
engine sets llguidance's ``no_forcing``: the "masks same" column checks that they now are.

Run: PYTHONPATH=src python bench/bench_grammar_engine.py [--goals N]
"""

from __future__ import annotations

import argparse
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
from barsym.reasoning.forward_plans import Vocabulary, render_plan
from barsym.reasoning.reply_grammar import GrammarBuilder

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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--goals", type=int, default=len(GOALS))
    args = ap.parse_args()
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
