"""The child-process check of how llama.cpp will run the model, and the fallback on a crash.

The CPU here may have no AMX, so the crash is simulated where it would happen:
``BARSYM_PROBE_FAULT=NAME`` makes the check's child process for that profile
kill itself with SIGSEGV right before its first batch, a real signal death of
a real child. The parent must survive it, fall back with one line, remember
the verdict, and refuse with one line when every profile dies.
"""

from __future__ import annotations

import pytest

from barsym.llm.base import BackendUnavailableError
from barsym.llm.llamacpp import runtime_check
from barsym.llm.llamacpp.prefix_state import model_identity
from barsym.llm.llamacpp.runtime_check import (
    FAULT_ENV,
    PROFILES,
    RuntimeFallbackWarning,
    choose_profile,
    cpu_flags,
    has_amx,
    profiles_for,
)

XEON_AMX = "processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse2 avx2 avx512f amx_bf16 amx_tile amx_int8\n"
EPYC = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx2 fma f16c\n"


def test_cpu_features_are_read_as_the_kernel_lists_them():
    assert has_amx(cpu_flags(XEON_AMX)) and not has_amx(cpu_flags(EPYC))
    assert cpu_flags("no flags line") == frozenset()
    here = cpu_flags()  # this machine, read the way the backend reads it
    assert isinstance(here, frozenset) and (not here or "fpu" in here or "Features" not in here)


def test_extra_buffer_types_are_never_the_first_choice():
    """Measured (bench/bench_runtime.py): they bring the embedded Q4_1 model nothing, and on AMX CPUs they
    hold the AMX-packed weights whose kernels crash. So every CPU starts without them."""
    for info in (XEON_AMX, EPYC):
        order = [p.name for p in profiles_for(cpu_flags(info))]
        assert order == ["plain", "one-token-batches"]
        assert not PROFILES[order[0]].extra_buffers


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    monkeypatch.setattr(runtime_check, "_memo", {})
    return tmp_path


def _choose(gguf_path, folder):
    return choose_profile(gguf_path, model_identity(gguf_path), "0.3.36", "test system", 2, folder=folder)


@pytest.mark.llm
def test_a_crash_in_the_check_falls_back_with_one_line_and_is_remembered(gguf_path, fresh, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "plain")
    with pytest.warns(RuntimeFallbackWarning) as caught:
        verdict = _choose(gguf_path, fresh)
    assert verdict.profile.name == "one-token-batches" and verdict.source == "probed"
    (line,) = [str(w.message) for w in caught]
    assert "crashed (SIGSEGV)" in line and "extra buffer types off" in line and "micro-batches of 1" in line
    assert "\n" not in line
    saved = sorted(p.name for p in fresh.glob("runtime-*.json"))
    assert len(saved) == 2 and all((fresh / name).stat().st_mode & 0o777 == 0o600 for name in saved)

    monkeypatch.setattr(runtime_check, "_memo", {})  # a new process: the verdicts come from the files
    monkeypatch.setattr(runtime_check, "_probe", lambda *a: pytest.fail("checked again"))
    with pytest.warns(RuntimeFallbackWarning):
        again = _choose(gguf_path, fresh)
    assert (again.profile.name, again.source) == ("one-token-batches", "remembered")


@pytest.mark.llm
def test_every_profile_crashing_is_one_line_not_a_dead_process(gguf_path, fresh, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "plain,one-token-batches")
    with pytest.raises(BackendUnavailableError) as info:
        _choose(gguf_path, None)
    message = str(info.value)
    assert message.count("crashed (SIGSEGV)") == 2 and "--planner symbolic" in message and "\n" not in message


@pytest.mark.llm
def test_the_fallback_profile_really_runs_the_model(gguf_path, fresh, monkeypatch):
    """The one-token-batch profile gives a working backend and the same greedy grammar answer."""
    from barsym.llm import LlamaCppBackend, LLMOptions

    question = [{"role": "user", "content": "Which pickaxe mines iron?"}]
    grammar = 'root ::= ("wooden" | "stone" | "iron") "_pickaxe"'
    opts = LLMOptions(n_threads=2, n_ctx=256, max_tokens=8)
    with LlamaCppBackend(gguf_path, options=opts) as normal:
        expected = normal.complete(question, grammar=grammar).text
    monkeypatch.setattr(runtime_check, "_memo", {})
    monkeypatch.setenv(FAULT_ENV, "plain")
    with pytest.warns(RuntimeFallbackWarning):
        backend = LlamaCppBackend(gguf_path, options=opts)
    with backend:
        assert backend.runtime.profile.name == "one-token-batches"
        assert backend.complete(question, grammar=grammar).text == expected


@pytest.mark.llm
def test_the_plan_command_survives_a_simulated_crash(gguf_path, tmp_path):
    import os
    import subprocess
    import sys

    env = {**os.environ, FAULT_ENV: "plain", "BARSYM_CACHE_DIR": str(tmp_path), "BARSYM_LOG_DB": str(tmp_path / "l.db")}
    done = subprocess.run(
        # one thread: two llama.cpp threads on a shared 2-core machine spin for each other (600 s were not enough)
        [sys.executable, "-m", "barsym.cli", "plan", "stick", "--threads", "1"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "crashed" in line]
    assert len(warnings) == 1 and warnings[0].startswith("barsym: warning: llama.cpp crashed (SIGSEGV)")
    assert "craft" in done.stdout and "stick" in done.stdout
