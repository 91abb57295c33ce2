"""Issue 53, items 2 and 3: the shipped adapter is its card's file, and remembered facts only ever skip work.

The sha256 check reads the expected digest from the card, so these tests build their own damaged copies
of the adapter (noise after its first MiB at the same size, cut short, random bytes, gone) beside a copy
of the card and point barsym at them; a small file stands in for the base GGUF where no model is
loaded. Then each kind of fact the state folder keeps (``sha256``, ``adapter-check``, ``runtime``) is
forged -- zeros, another value, the wrong type, damaged JSON, a fact made for other files -- and the
work it would have skipped is shown to run, with the true answer. The few tests against the real GGUF
(marked ``llm``) use the session's model, and one load for a damaged ``--adapter``.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import pytest

from barsym.llm import ModelLoadError
from barsym.llm.llamacpp import adapter
from barsym.llm.llamacpp.adapter import ADAPTER_ENV, check_shipped, fits_base, read_card, resolve_adapter
from barsym.llm.llamacpp.remembered import _path, remember
from cli_run import one_line, run

pytestmark = pytest.mark.hostile

MIB = 1 << 20


def _damaged(data: bytes, how: str) -> bytes:
    if how == "noise-after-first-mib":  # the case: same size, same first MiB
        noise = hashlib.sha256(b"noise").digest() * ((len(data) - MIB) // 32 + 1)
        return data[:MIB] + noise[: len(data) - MIB]
    if how == "cut-short":
        return data[: len(data) // 2]
    if how == "random":
        return hashlib.sha512(b"x").digest() * (len(data) // 64) + b"\0" * (len(data) % 64)
    raise AssertionError(how)


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """A copy of the shipped adapter and its card (the real card, its base made a small stand-in file)."""
    monkeypatch.delenv(ADAPTER_ENV, raising=False)
    folder = tmp_path / "taught"
    folder.mkdir()
    shipped, card_path = folder / adapter.SHIPPED.name, folder / "card.json"
    shutil.copy(adapter.SHIPPED, shipped)
    base = tmp_path / "base.gguf"
    base.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    card = read_card()
    card["base"] = {
        **card["base"],
        "bytes": base.stat().st_size,
        "sha256": hashlib.sha256(base.read_bytes()).hexdigest(),
    }
    card_path.write_text(json.dumps(card))
    monkeypatch.setattr(adapter, "SHIPPED", shipped)
    monkeypatch.setattr(adapter, "CARD", card_path)
    return base, shipped, card


def test_the_expected_digest_is_the_cards(installed):
    base, shipped, card = installed
    assert check_shipped() == card["adapter"]["sha256"] == hashlib.sha256(shipped.read_bytes()).hexdigest()
    assert resolve_adapter(None, base) == shipped


@pytest.mark.parametrize("how", ["noise-after-first-mib", "cut-short", "random", "gone"])
@pytest.mark.parametrize("chosen", [None, "explicit"])
def test_a_damaged_shipped_adapter_is_one_line_naming_it(installed, how, chosen):
    base, shipped, _ = installed
    if how == "gone":
        shipped.unlink()
    else:
        data = shipped.read_bytes()
        shipped.write_bytes(_damaged(data, how))
        if how == "noise-after-first-mib":
            assert len(shipped.read_bytes()) == len(data) and shipped.read_bytes()[:MIB] == data[:MIB]
    if chosen == "explicit" and how == "gone":
        return  # a missing --adapter PATH is "no such file" (tests/llm/test_adapter.py)
    with pytest.raises(ModelLoadError) as refused:
        resolve_adapter(None if chosen is None else str(shipped), base)
    message = str(refused.value)
    assert "\n" not in message and str(shipped) in message and "reinstall barsym" in message
    assert "--adapter none" in message  # the way on without it


def test_barsym_model_says_when_the_adapter_is_not_its_cards(installed, capsys):
    _, shipped, _ = installed
    assert run(capsys, "model")[0] == 0
    shipped.write_bytes(_damaged(shipped.read_bytes(), "noise-after-first-mib"))
    code, out, err = run(capsys, "model")
    assert code == 2 and one_line(err) and str(shipped) in err and "reinstall barsym" in err


def test_a_card_without_a_digest_does_not_vouch_for_the_file(installed):
    base, _, card = installed
    adapter.CARD.write_text(json.dumps({**card, "adapter": {"file": "x"}}))
    with pytest.raises(ModelLoadError, match="names no SHA-256"):
        resolve_adapter(None, base)


@pytest.mark.llm  # the packaged GGUF is the card's base (no model is loaded)
def test_plan_with_a_damaged_shipped_adapter_stops_before_the_model_loads(gguf_path, tmp_path, monkeypatch, capsys):
    """The real packaged base (its digest is the real card's); the adapter a copy with noise after 1 MiB."""
    from barsym.reasoning.calls import backends

    monkeypatch.delenv(ADAPTER_ENV, raising=False)
    monkeypatch.setenv("BARSYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(backends, "_backends", {})  # a new backend, not the session's
    damaged = tmp_path / adapter.SHIPPED.name
    damaged.write_bytes(_damaged(adapter.SHIPPED.read_bytes(), "noise-after-first-mib"))
    monkeypatch.setattr(adapter, "SHIPPED", damaged)
    loads = []
    monkeypatch.setattr("barsym.llm.llamacpp.backend.LlamaCppBackend._load", lambda self, path: loads.append(path))
    code, out, err = run(capsys, "plan", "stick", "--threads", "1")
    assert code == 2 and one_line(err) and out == "" and loads == []
    assert str(damaged) in err and "reinstall barsym" in err and "--adapter " not in err.split(";")[0]


# ---- remembered facts: forged, damaged, foreign -------------------------------------------------------------------


def _forge(folder: Path, kind: str, parts: tuple[str, ...], content: str) -> Path:
    folder.mkdir(mode=0o700, exist_ok=True)
    path = _path(folder, kind, parts)
    path.write_text(content)
    path.chmod(0o600)
    return path


def _forgeries(parts: list[str], key: str, lies: list) -> list[str]:
    """Each way a fact is forged or damaged: a lie in the value, a value of the wrong type, damaged JSON,
    and the true-looking fact made for other parts (a foreign file copied to this name)."""
    out = [json.dumps({key: lie, "parts": parts}) for lie in lies]
    out += ['{"' + key + '": ', "[]", json.dumps({key: lies[0], "parts": [*parts[:-1], "another file"]})]
    return out


def test_a_forged_base_digest_never_turns_the_adapter_off(tmp_path, monkeypatch):
    """The issue's case: the remembered SHA-256 of the base set to zeros ran the model bare, labelled shipped."""
    from barsym.llm.llamacpp.prefix_state import model_identity

    base = tmp_path / "base.gguf"
    base.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    card = {"base": {"bytes": base.stat().st_size, "sha256": hashlib.sha256(base.read_bytes()).hexdigest()}}
    folder = tmp_path / "state"
    remember(folder, "sha256", {"sha256": card["base"]["sha256"]}, model_identity(base))  # the true fact, then lies
    reads = []
    real = adapter.file_sha256
    monkeypatch.setattr(adapter, "file_sha256", lambda path: reads.append(path) or real(path))
    lies = ["0" * 64, "f" * 64, 7, None, ["x"]]
    for forged in _forgeries([model_identity(base)], "sha256", lies):
        _forge(folder, "sha256", (model_identity(base),), forged)
        assert fits_base(base, card, folder) is True, forged  # recomputed: still the card's base
    assert len(reads) == len(lies) + 3  # every forged fact was ignored and the file read again
    assert fits_base(base, card, folder) is True and len(reads) == len(lies) + 3  # the truth, re-remembered, saves it


def test_a_forged_base_digest_is_never_printed_as_the_models(tmp_path, monkeypatch):
    """What every output names the GGUF by (:func:`barsym.llm.provenance.files_record`) is the file's digest,
    whatever the state folder says of it: a fact is taken only when it is the card's base, for that file."""
    from barsym.llm.llamacpp.prefix_state import model_identity
    from barsym.llm.provenance import files_record, record_text

    model = tmp_path / "own.gguf"
    model.write_bytes(b"GGUF" + b"own model" * 100)
    truth = hashlib.sha256(model.read_bytes()).hexdigest()
    folder = tmp_path / "state"
    for lie in ("0" * 64, read_card()["base"]["sha256"][:-1] + "0", 7):
        _forge(
            folder, "sha256", (model_identity(model),), json.dumps({"sha256": lie, "parts": [model_identity(model)]})
        )
        record = files_record(model, None, folder)
        assert record["gguf_sha256"] == truth and truth[:12] in record_text(record), lie


def test_a_forged_adapter_check_only_makes_the_check_run():
    from barsym.llm.llamacpp.adapter_loading import ADAPTER_MIN_CHANGE, _passed

    assert _passed({"change": 0.25}) and _passed({"change": ADAPTER_MIN_CHANGE})
    for forged in (
        {"change": 0.0},
        {"change": "1"},
        {"change": math.nan},
        {"change": math.inf},
        {},
        None,
        {"change": True},
    ):
        assert not _passed(forged), forged  # the adapter is still applied, and checked again


def test_a_forged_runtime_verdict_never_changes_how_the_model_runs(tmp_path, monkeypatch):
    """A remembered crash would move the model to the one-token profile or refuse it: only a pass is taken."""
    from barsym.llm.llamacpp import runtime_check

    probed = []
    monkeypatch.setattr(runtime_check, "_probe", lambda model, profile, threads: probed.append(profile.name) or "")
    folder = tmp_path / "state"
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    lies = ["llama.cpp crashed (SIGSEGV) evaluating a batch", "the model file does not load", 3, None]
    for i in range(len(lies) + 3):
        key = ("1", f"model-{i}", "0.3.36", "cpu", "avx2", "plain")
        forged = _forgeries(list(key), "problem", lies)[i]
        _forge(folder, "runtime", key, forged)
        verdict = runtime_check.choose_profile(model, f"model-{i}", "0.3.36", "cpu", 1, folder, frozenset({"avx2"}))
        assert verdict.profile.name == "plain" and verdict.source == "probed", forged
    assert probed == ["plain"] * (len(lies) + 3)
    # a remembered pass is the one fact used: it saves the child process
    key = ("1", "model-pass", "0.3.36", "cpu", "avx2", "plain")
    _forge(folder, "runtime", key, json.dumps({"profile": "plain", "problem": "", "parts": list(key)}))
    verdict = runtime_check.choose_profile(model, "model-pass", "0.3.36", "cpu", 1, folder, frozenset({"avx2"}))
    assert verdict.source == "remembered" and len(probed) == len(lies) + 3


# ---- the real model: what runs is what is recorded ----------------------------------------------------------------


@pytest.mark.llm
def test_plans_and_run_headers_record_the_adapter_as_loaded(real_backend, capsys, tmp_path):
    """One record (:mod:`barsym.llm.provenance`) in every output: the files' digests and that the adapter is on."""
    from barsym.eval.run_model import model_record
    from barsym.llm.provenance import backend_record, record_text

    card = read_card()
    expected = {
        "gguf": real_backend.model_path.name,
        "gguf_sha256": card["base"]["sha256"],
        "adapter": adapter.SHIPPED.name,
        "adapter_sha256": card["adapter"]["sha256"],
        "adapter_applied": True,
    }
    assert real_backend.adapter_applied is True
    assert {k: v for k, v in backend_record(real_backend).items() if k in expected} == expected
    code, out, err = run(capsys, "plan", "stick", "--threads", "2", "--format", "json")  # the session's backend
    assert code == 0, err
    assert {k: v for k, v in json.loads(out)["model"].items() if k in expected} == expected
    assert {k: v for k, v in model_record("bar", {"threads": 2}).items() if k in expected} == expected
    assert "not applied" not in record_text(backend_record(real_backend))


@pytest.mark.llm
def test_an_adapter_whose_numbers_are_not_finite_stops_in_one_line(gguf_path, tmp_path, capsys, monkeypatch):
    """One load: the shipped adapter with NaN (float16 0x7e00) written after its first MiB, given as --adapter."""
    from barsym.reasoning.calls import backends

    monkeypatch.setenv("BARSYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(backends, "_backends", {})
    data = bytearray(adapter.SHIPPED.read_bytes())
    data[MIB : len(data) - 4096] = b"\x00\x7e" * ((len(data) - 4096 - MIB) // 2)
    nan = tmp_path / "nan.gguf"
    nan.write_bytes(bytes(data))
    code, out, err = run(capsys, "plan", "stick", "--threads", "1", "--adapter", nan)
    assert code == 2 and one_line(err) and out == ""
    assert "not finite (NaN)" in err and str(nan) in err


def test_a_backend_that_did_not_apply_its_adapter_is_recorded_so(tmp_path):
    """The backend's word is the record's: an adapter chosen but not on the model reads "not applied"."""
    from barsym.llm.provenance import backend_record, record_text

    model, lora = tmp_path / "m.gguf", tmp_path / "lora.gguf"
    model.write_bytes(b"GGUF model")
    lora.write_bytes(b"GGUF lora")

    class Loaded:
        model_path, adapter_path, state_dir = model, lora, None
        adapter_applied = False

    record = backend_record(Loaded())
    assert record["adapter"] == "lora.gguf" and record["adapter_applied"] is False
    assert record["adapter_sha256"] == hashlib.sha256(b"GGUF lora").hexdigest()
    assert record_text(record).endswith(", not applied")
    Loaded.adapter_applied = True
    assert backend_record(Loaded())["adapter_applied"] is True and "applied" not in record_text(
        backend_record(Loaded())
    )
