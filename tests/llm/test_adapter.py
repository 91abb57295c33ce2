"""The shipped LoRA adapter: applied by default on the embedded model, checked to change what it says.

A real GGUF and the real adapter file through llama-cpp-python (few loads: the session's taught and
bare models, tests/conftest.py, and one load for each way an adapter is refused, which happens while
loading); which file applies where is tested without a model.
"""

from __future__ import annotations

import shutil

import pytest

from barsym.llm import LlamaCppBackend, ModelLoadError, ModelNotFoundError
from barsym.llm.llamacpp.adapter import ADAPTER_ENV, SHIPPED, file_sha256, read_card, resolve_adapter

pytestmark = pytest.mark.llm  # the real GGUF (the card's test reads files only, and is cheap either way)


def test_the_wheel_carries_the_adapter_and_its_card():
    card = read_card()
    assert card is not None and SHIPPED.is_file()
    assert card["adapter"]["sha256"] == file_sha256(SHIPPED)
    assert card["adapter"]["bytes"] == SHIPPED.stat().st_size <= 16_000_000
    assert card["command"].startswith("barsym distill ") and "--out" in card["command"]
    assert card["base"]["file"].endswith(".gguf") and len(card["base"]["sha256"]) == 64


def test_the_adapter_applies_to_its_base_only(gguf_path, tmp_path, monkeypatch):
    monkeypatch.delenv(ADAPTER_ENV, raising=False)
    assert resolve_adapter(None, gguf_path) == SHIPPED
    assert resolve_adapter("none", gguf_path) is None and resolve_adapter("NONE", gguf_path) is None
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF" + b"\0" * 64)
    assert resolve_adapter(None, other) is None  # another model runs bare by default
    mine = tmp_path / "mine.gguf"
    mine.write_bytes(b"GGUF")
    assert resolve_adapter(str(mine), other) == mine.resolve()
    monkeypatch.setenv(ADAPTER_ENV, "none")
    assert resolve_adapter(None, gguf_path) is None
    with pytest.raises(ModelNotFoundError, match="--adapter .*no such file.*--adapter none"):
        resolve_adapter(str(tmp_path / "missing.gguf"), gguf_path)


def test_the_default_backend_runs_the_taught_model(real_backend, bare_backend, gguf_path):
    """The session's model is the default (shipped adapter) and its bare one the base alone (no load here):
    their greedy answers differ."""
    messages = [{"role": "user", "content": "Goal: 1 stone_pickaxe. Can it be mined?"}]
    grammar = 'root ::= "yes" | "no"'
    taught = real_backend  # made as `barsym` makes it, BARSYM_ADAPTER unset (tests/conftest.py)
    assert taught.adapter_path == SHIPPED
    assert taught.model_name.endswith("+" + SHIPPED.name)
    assert taught.model_metadata("barsym.step_score_method") == read_card()["score_method"]
    with_adapter = taught.continuation_logprobs(messages, ["yes", "no"])
    assert taught.complete(messages, grammar=grammar, max_tokens=2).model == taught.model_name
    base = bare_backend  # LlamaCppBackend(gguf_path, adapter="none")
    assert base.adapter_path is None and base.model_name == gguf_path.name
    without = base.continuation_logprobs(messages, ["yes", "no"])
    assert with_adapter != pytest.approx(without, abs=1e-3)


def test_a_file_that_is_not_an_adapter_is_one_line(gguf_path):
    """One load: the base GGUF given as an adapter."""
    with pytest.raises(ModelLoadError, match=r"--adapter .*cannot apply it") as caught:
        LlamaCppBackend(gguf_path, adapter=str(gguf_path))
    assert "\n" not in str(caught.value)


def test_an_adapter_that_is_silently_not_applied_is_refused(session_backend, gguf_path, monkeypatch, tmp_path):
    """One load: llama.cpp 'sets' the adapter but nothing changes -- the check must catch it, even in a
    state folder that remembers the check passing for the shipped file (a pass is for those files only)."""
    import llama_cpp

    (passed,) = session_backend.state_dir.glob("adapter-check-*.json")  # the session's load remembered it
    state = tmp_path / "state"
    state.mkdir()
    shutil.copy(passed, state / passed.name)
    monkeypatch.setattr(llama_cpp, "llama_set_adapters_lora", lambda ctx, adapters, n, scales: 0)
    copy = tmp_path / "adapter.gguf"
    shutil.copy(SHIPPED, copy)
    with pytest.raises(ModelLoadError, match="does not change the model's output"):
        LlamaCppBackend(gguf_path, adapter=str(copy), state_dir=state)
    assert list(state.glob("adapter-check-*.json")) == [state / passed.name]  # a failure is not remembered
