"""OpenAI-compatible backend against a real ``python -m llama_cpp.server``.

The session fixture ``llama_server`` (tests/conftest.py, shared with the
planner tests) starts the server on a free 127.0.0.1 port with the packaged
SmolLM2 GGUF, waits a bounded time for ``/v1/models`` to answer, and always
terminates the process (kill after a grace period).  The server's own log
goes to a temp file and is shown if startup fails.
"""

from __future__ import annotations

import pytest

from barsym.llm import LLMOptions, OpenAIHTTPBackend
from barsym.llm.grammar import gbnf_word_choice
from barsym.steps import read_step, step_rules

pytestmark = pytest.mark.llm

ITEMS = ["oak_log", "oak_planks", "stick", "crafting_table", "wooden_pickaxe", "cobblestone"]


def test_grammar_constrained_request_to_real_server(llama_server):
    # a generous bound, not a timing check: on a loaded 2-core machine a cold grammar request can take minutes
    backend = OpenAIHTTPBackend(llama_server, timeout=600, options=LLMOptions(max_tokens=150))
    grammar = "\n".join(
        [
            "root ::= step",
            *step_rules("step", ("mine", "craft")),
            f"item ::= {gbnf_word_choice(ITEMS)}",
            'toolname ::= "wooden_pickaxe"',
        ]
    )
    messages = [
        {
            "role": "system",
            "content": "Reply with the step that makes the goal, e.g. 'craft 4 stick' or 'mine 1 oak_log'.",
        },
        {"role": "user", "content": "Goal: 1 crafting_table"},
    ]
    reply = backend.complete(messages, grammar=grammar)
    assert reply.finish_reason == "stop", reply.text
    step = read_step(reply.text)
    assert step is not None and (step.item is None or step.item in ITEMS), reply.text
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    # Same request again, twice: greedy decoding on the server is reproducible. (The first repeat
    # evaluates only the prompt's last token, from the server's prefix cache: a token decoded alone
    # gets logits up to ~0.3 apart from the same token in a batch, measured, which can turn a
    # near-tie; the two repeats are evaluated alike.)
    again = backend.complete(messages, grammar=grammar).text
    assert read_step(again) is not None, again
    assert backend.complete(messages, grammar=grammar).text == again
