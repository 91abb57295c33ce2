"""The fixed few-shot prefixes, pinned byte for byte.

The model's prefix cache (``llm.prefix_state``, and llama.cpp's KV cache) keys
on the exact text of the system message and the example turns, so a change
of a single character makes every saved prefix state useless and changes what
the model is shown. The hashes were taken from the prompts as they are; a test
failing here means the prompts changed: if that was meant, update the hash.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from barsym.llm import LLMOptions, ScriptedLLM
from barsym.planner import make_planner
from barsym.planner.registry import graph_for, symbolic_planner
from barsym.reasoning.cot import CotPlanner
from barsym.reasoning.deps import DepsPlanner

ROLES = ["system"] + ["user", "assistant"] * 4


def digest(messages) -> str:
    return hashlib.sha256(json.dumps(list(messages)).encode()).hexdigest()


def test_the_deps_prefix_is_unchanged(kb):
    graph = graph_for(kb)
    planner = DepsPlanner(kb, ScriptedLLM([], LLMOptions(n_ctx=4096)), graph=graph, rounds=5, world="deterministic",
                          symbolic=symbolic_planner(kb, graph=graph))
    assert [m["role"] for m in planner.prefix] == ROLES
    assert digest(planner.prefix) == "df79d87c722e471aa6555c8e6ed4a6161b8d68e90289d149015b810065bcb696"


def test_the_cot_prefix_is_unchanged(kb):
    graph = graph_for(kb)
    planner = CotPlanner(kb, ScriptedLLM([]), graph=graph, symbolic=symbolic_planner(kb, graph=graph))
    assert [m["role"] for m in planner.caller.prefix] == ["system", "user", "assistant"]
    assert digest(planner.caller.prefix) == "89dda67124e4cb15c2d911de87a55c9dc696d78e4a768608d39ab3d4e108b851"


@pytest.mark.parametrize("facts, expected", [
    (True, "8d9b76c33ee740a2e690a917a1e3860a4aac207498906a0ddfe506bdae6c2d22"),
    (False, "30bed833fd013b12716f40cce8648bb3ad254699d7f251b54c37257b400a57e3"),
])
def test_the_bar_prefix_is_unchanged(kb, facts, expected):
    planner = make_planner("bar", kb, backend=ScriptedLLM([]), log=False, facts=facts)
    prefix = planner.decomposer.caller.prefix
    assert len(prefix) == 29 and prefix[0]["role"] == "system"
    assert digest(prefix) == expected
