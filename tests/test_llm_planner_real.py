"""The LLM planners with the real embedded SmolLM2-135M: few, small plans (2 threads).

What is checked is what must hold whatever the model answers: the ``bar`` plan
is accepted by the validator, every step says where it came from, the counters
add up, the prompt prefix is served from the KV cache, greedy decoding with a
seed gives the same plan twice, and the same loop works through a real
``llama_cpp.server``. The model's quality is measured by bench/bench_llm.py
and ``barsym eval``, not asserted here. About 30 s on 2 cores.
"""

from __future__ import annotations

import json

import pytest

from barsym.cli import main
from barsym.llm import OpenAIHTTPBackend
from barsym.model import Goal
from barsym.planner import make_planner
from barsym.planner.registry import graph_for
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder

pytestmark = pytest.mark.llm

PROVENANCE = {"llm", "llm-after-feedback", "symbolic-fallback", "context", "graph"}


@pytest.fixture
def backend(real_backend):
    """The session's real model (loaded once per run, tests/conftest.py), its KV cache empty."""
    return real_backend


def provenance(result) -> set[str]:
    return {p for i in range(len(result.plan)) for p in result.provenance(i)}


def test_llama_cpp_accepts_every_grammar_the_planner_builds(backend, kb):
    builder = GrammarBuilder(kb, graph_for(kb))
    grammars = [builder.vocab()] + [
        builder.for_goal(Goal(item=i, count=3)).text
        for i in ("stone_pickaxe", "iron_ingot", "torch", "planks", "charcoal")
    ]
    for grammar in grammars:  # a grammar llama.cpp rejects would crash the process, not raise
        backend._check_grammar(grammar)


def test_bar_plan_with_the_embedded_model(backend, kb, validator):
    planner = make_planner("bar", kb, backend=backend, llm_mode="graph")
    result = planner.plan(Goal(item="wooden_pickaxe"))
    assert validator.validate(result.plan, goal=Goal(item="wooden_pickaxe")).valid
    assert provenance(result) <= PROVENANCE and provenance(result) & {"llm", "llm-after-feedback", "graph"}
    stats = result.stats.to_dict()
    assert stats["llm_calls"] >= 1 and stats["completion_tokens"] > 0
    answered = stats["accepted_first_try"] + stats["accepted_after_feedback"] + stats["fallbacks"]
    assert answered + stats["context_answers"] + stats["graph_forced"] == stats["goals"]
    # the few-shot prefix is evaluated once; later calls find it in the KV cache
    calls = stats["llm_calls"]
    assert calls >= 2
    after_first = stats["prompt_tokens"] * (calls - 1) / calls  # prompts are about equally long
    assert stats["cached_prompt_tokens"] > 0.8 * after_first


def test_same_plan_twice_with_greedy_decoding_and_a_seed(capsys, session_backend):
    """Both runs use the session's model: ``plan --threads 2`` is its settings (tests/conftest.py)."""
    outputs = []
    for _ in range(2):
        code = main(["plan", "stick", "--threads", "2", "--seed", "7", "--format", "json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        outputs.append(json.loads(out))
    first, second = outputs
    assert first["planner"] == "bar" and first["verdict"] == "valid"
    assert first["steps"] == second["steps"] and first["tree"] == second["tree"]
    assert first["stats"]["llm_calls"] == second["stats"]["llm_calls"] > 0
    # what ran, named by the files (issue 56): the session's model with the shipped adapter, by their SHA-256
    from barsym.llm.llamacpp.adapter import SHIPPED, file_sha256

    model = first["model"]
    assert model["gguf"] == session_backend.model_path.name and len(model["gguf_sha256"]) == 64
    if session_backend.adapter_path is not None:
        assert (model["adapter"], model["adapter_sha256"]) == (SHIPPED.name, file_sha256(SHIPPED))
    assert first["rules"] == "survival" and first["start"] == {"layer": 0, "inventory": {}}


def test_bar_through_a_real_llama_cpp_server(capsys, llama_server, kb):
    code = main(
        ["plan", "stick", "--llm-url", llama_server, "--llm-mode", "graph", "--format", "json", "--llm-timeout", "300"]
    )  # a cold server evaluates the ~1100-token prefix first: slow under load
    out, err = capsys.readouterr()
    assert code == 0, err
    data = json.loads(out)
    assert data["verdict"] == "valid" and data["planner"] == "bar"
    assert {p for step in data["steps"] for p in step["provenance"]} <= PROVENANCE
    assert data["stats"]["llm_calls"] >= 1 and data["stats"]["backend_errors"] == 0, data["stats"]["problems"]


def test_the_server_plans_as_the_in_process_model(bare_backend, llama_server, kb):
    """The same GGUF (no adapter) in-process and through ``llama_cpp.server``: the same plan for 2 sticks.

    The call is one whose reply repeats a count (``craft 2 stick: 2 planks``): llama-cpp-python's server
    penalises a repeated token unless asked not to, and with its default (1.1) it answered ``4 bamboo``.
    """
    goal = Goal(item="stick", count=2)
    served = OpenAIHTTPBackend(llama_server, timeout=600)
    local = bare_backend  # the session's LlamaCppBackend(gguf_path, adapter="none"), 1 thread (tests/conftest.py)
    here, there = (make_planner("bar", kb, backend=b, llm_mode="graph", log=False).plan(goal) for b in (local, served))
    assert here.stats.llm.llm_calls == there.stats.llm.llm_calls == 1
    assert [str(s) for s in here.plan.steps] == [str(s) for s in there.plan.steps]
    assert not any(s.item == "bamboo" for s in there.plan.steps), [str(s) for s in there.plan.steps]
