"""What barsym's grammar matcher costs a reply, on barsym's reply grammars over SmolLM2's vocabulary.

:mod:`barsym.llm.llamacpp.token_grammar` is asked, at each token of a reply, for the forced text, whether the token is
admitted and the state after it -- the work :class:`~barsym.llm.llamacpp.span_decoder.SpanDecoder` asks of it, with
no model. Measured per grammar: time to compile it; time for that reply the first time after compiling and again with
the grammar's memo warm (median of 5; an eval asks the same plan grammar for every task); time for one full-vocabulary
mask (mean over every state of the reply), which the span decoder never needs (it checks the model's top few
tokens) but a full-vocabulary sampler would. Replies: for the graph grammars of
:class:`~barsym.reasoning.grammars.reply_grammar.GrammarBuilder` the forced text with the first admitted character at
each choice; for the plan grammar of ``cot``/``deps``/the baselines, the symbolic planner's plan for the goal.

Until 2026-12-07 this script compared the matcher with llguidance, then removed (docs/results/grammar-engine.md).

Run: PYTHONPATH=src python bench/bench_token_grammar.py [--goals N]
"""

from __future__ import annotations

import argparse
import statistics
import string
import sys
import time

import llama_cpp

from barsym.kb import load_kb
from barsym.llm.llamacpp.embedded import default_model_path
from barsym.llm.llamacpp.native import LoadProfile, NativeModel
from barsym.llm.llamacpp.token_grammar import TokenMatcher
from barsym.model import Goal
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.grammars.forward_plans import Vocabulary, render_plan
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder

GOALS = ["stone_pickaxe", "iron_ingot", "torch", "furnace", "chest", "iron_pickaxe", "diamond_pickaxe"]
REPEATS = 5  # warm replies per grammar; their median is reported (the machine is shared)


def first_reply(matcher: TokenMatcher, gbnf: str) -> str:
    """The forced text, then the first admitted printable character at each choice, until the grammar may end."""
    state, text = matcher.compile(gbnf).start(), ""
    while not state.accepting and len(text) < 400:
        step = state.forced() or next(c for c in string.printable if state.advance(c) is not None)
        text, state = text + step, state.advance(step)
    return text


def measure(matcher: TokenMatcher, gbnf: str, tokens: list[int], pieces: list[str]) -> dict:
    t0 = time.perf_counter()
    grammar = matcher.compile(gbnf)
    compile_s = time.perf_counter() - t0
    replies, ok = [], True
    for _ in range(1 + REPEATS):  # the first reply after compiling, then again (the grammar's memo warm)
        t0 = time.perf_counter()
        state = grammar.start()
        for token in tokens:  # as the span decoder: forced text, is the token admitted, the state after it
            state.forced()
            if not state.allows(token):
                ok = False
                break
            state = state.after(token)
        replies.append(time.perf_counter() - t0)
        ok = ok and state is not None and state.accepting
    states, walked = [], grammar.start()
    for piece in pieces:
        states.append(walked)
        walked = walked.advance(piece) if walked is not None else None
    states = [s for s in states if s is not None]
    t0 = time.perf_counter()
    for s in states:
        s.mask()
    mask_s = (time.perf_counter() - t0) / max(1, len(states))
    return {
        "compile": compile_s,
        "reply": replies[0],
        "again": statistics.median(replies[1:]),
        "mask": mask_s,
        "ok": ok,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--goals", type=int, default=len(GOALS), help=f"graph grammars of the first N of {len(GOALS)} goals"
    )
    args = ap.parse_args()
    kb = load_kb("1.16.5")
    builder = GrammarBuilder(kb, graph_for(kb))
    plan_grammar = Vocabulary(kb, graph_for(kb)).plan_grammar()
    model = NativeModel(llama_cpp, default_model_path(), LoadProfile("plain", extra_buffers=False))
    t0 = time.perf_counter()
    matcher = TokenMatcher(model)
    print(f"matcher over {model.n_vocab} tokens built in {time.perf_counter() - t0:.3f} s")
    cases = []
    for item in GOALS[: args.goals]:
        gbnf = builder.for_goal(Goal(item=item)).text
        cases.append((f"graph {item}", gbnf, first_reply(matcher, gbnf)))
    for item in GOALS[: max(1, args.goals // 2)]:
        cases.append((f"plan {item}", plan_grammar, render_plan(symbolic_planner(kb).plan(Goal(item=item)).plan.steps)))
    print("\n| grammar | reply tokens | compile ms | reply ms | reply again ms (median of 5) | mask ms | accepted |")
    print("|---|---|---|---|---|---|---|")
    totals = dict.fromkeys(("compile", "reply", "again", "mask"), 0.0)
    for label, gbnf, reply in cases:
        tokens = model.tokenize(reply, add_bos=False, special=False)
        pieces = [model.piece(t).decode("utf-8") for t in tokens]
        got = measure(TokenMatcher(model), gbnf, tokens, pieces)  # a fresh matcher: nothing memoised yet
        for key in totals:
            totals[key] += got[key]
        print(
            f"| {label} | {len(tokens)} | {got['compile'] * 1e3:.2f} | {got['reply'] * 1e3:.2f} "
            f"| {got['again'] * 1e3:.2f} | {got['mask'] * 1e3:.1f} | {got['ok']} |"
        )
    n = len(cases)
    print(
        f"| mean of {n} | | {totals['compile'] / n * 1e3:.2f} | {totals['reply'] / n * 1e3:.2f} "
        f"| {totals['again'] / n * 1e3:.2f} | {totals['mask'] / n * 1e3:.1f} | |"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
