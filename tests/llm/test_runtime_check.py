"""The child-process check of how llama.cpp will run the model, and the fallback on a crash.

The CPU here may have no AMX, so the crash is simulated: ``BARSYM_PROBE_FAULT=NAME``
makes the check's child process for that profile kill itself with SIGSEGV (before
it loads the model, so the simulation costs no load), a real signal death of a real
child. The parent must survive it, fall back with one line, remember the verdict,
and refuse with one line when every profile dies. One ``barsym plan`` run shows the
fallback end to end (the child that passes, the fallback's own load, the warning,
the saved verdicts, the same answers as the usual profile): each model load here
costs minutes on a loaded 2-core machine (issue 36 allows 9 per test run).
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


def _choose(gguf_path, folder, library="0.3.36", system="test system", threads=2):
    return choose_profile(gguf_path, model_identity(gguf_path), library, system, threads, folder=folder)


@pytest.mark.llm
def test_a_crash_in_the_check_falls_back_with_one_line_and_is_remembered(real_backend, fresh, monkeypatch, capsys):
    """``barsym plan`` (in this process, a model of its own: another thread count) whose first profile's check
    dies of SIGSEGV: the command plans, says so in one line, and its backend runs the one-token-batch profile,
    giving the same greedy grammar answer as the session's model with the usual profile."""
    from barsym.llm import LLMError
    from barsym.reasoning.calls import backends
    from cli_run import run

    monkeypatch.setenv(FAULT_ENV, "plain")
    monkeypatch.setenv("BARSYM_CACHE_DIR", str(fresh))
    monkeypatch.setattr(backends, "_backends", {})  # not the session's backend: a new load, checked first
    code, out, err = run(capsys, "plan", "stick", "--threads", "1")
    assert code == 0, err
    (line,) = [line for line in err.splitlines() if "crashed" in line]
    assert line.startswith("barsym: warning: llama.cpp crashed (SIGSEGV)")
    assert "extra buffer types off" in line and "micro-batches of 1" in line
    assert "craft" in out and "stick" in out
    (backend,) = backends._backends.values()
    try:
        assert (backend.runtime.profile.name, backend.runtime.source) == ("one-token-batches", "probed")
        folder = fresh / backends.STATE_DIR
        saved = sorted(p.name for p in folder.glob("runtime-*.json"))
        assert len(saved) == 2 and all((folder / name).stat().st_mode & 0o777 == 0o600 for name in saved)

        question = [{"role": "user", "content": "Which pickaxe mines iron?"}]
        grammar = 'root ::= ("wooden" | "stone" | "iron") "_pickaxe"'
        expected = real_backend.complete(question, grammar=grammar, max_tokens=8).text
        assert backend.complete(question, grammar=grammar, max_tokens=8).text == expected
        backend.close()  # (the finally closes it if an assertion fails before)
        with pytest.raises(LLMError, match="closed"):
            backend.complete(question)
    finally:
        backend.close()

    monkeypatch.setattr(runtime_check, "_memo", {})  # a new process: the verdicts come from the files
    checked = []

    def crashes_again(model, profile, threads):  # what the child says with FAULT_ENV=plain, without a child
        checked.append(profile.name)
        return "llama.cpp crashed (SIGSEGV) evaluating a batch"

    monkeypatch.setattr(runtime_check, "_probe", crashes_again)
    with pytest.warns(RuntimeFallbackWarning) as caught:
        again = _choose(backend.model_path, folder, backend.library, backend.system, 1)
    assert (again.profile.name, again.source) == ("one-token-batches", "remembered")
    assert checked == ["plain"]  # a remembered crash is checked again (a fact only skips work); the pass is taken
    (message,) = [str(w.message) for w in caught]
    assert "crashed (SIGSEGV)" in message and "micro-batches of 1" in message and "\n" not in message


@pytest.mark.llm
def test_every_profile_crashing_is_one_line_not_a_dead_process(gguf_path, fresh, monkeypatch):
    monkeypatch.setenv(FAULT_ENV, "plain,one-token-batches")
    with pytest.raises(BackendUnavailableError) as info:
        _choose(gguf_path, None)
    message = str(info.value)
    assert message.count("crashed (SIGSEGV)") == 2 and "--planner symbolic" in message and "\n" not in message
