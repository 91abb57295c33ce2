"""Saved few-shot prefix states: keyed files, checked on load, ignored with a warning when bad.

The store is tested with made-up payloads (no model); the real-GGUF tests at the
end save a primed prefix and load it into an emptied KV cache, as a new process
would, and check the replies are the same. They use the session's model (loaded
once per run, tests/conftest.py) with a store in the test's own folder: what a
new process brings is an empty cache, not a new copy of the weights.
"""

from __future__ import annotations

import os

import pytest

from barsym.llm.llamacpp.prefix_state import PrefixKey, PrefixStateStore, PrefixStateWarning, StateCheck, model_identity

TOKENS = [1, 5, 9, 200, 49151]
KEY = PrefixKey.for_prompt("model-a|100|1|abc", "prefix text", TOKENS, "0.3.36", "n_batch=512", "AVX2 = 1")
CHECK = StateCheck((3, 1), (12.5, 11.0))


def test_a_saved_state_loads_back(tmp_path):
    store = PrefixStateStore(tmp_path)
    path = store.save(KEY, TOKENS, b"kv-bytes" * 100, CHECK)
    assert path is not None and path.parent == tmp_path
    assert store.load(KEY, TOKENS) == (b"kv-bytes" * 100, CHECK)
    assert path.stat().st_mode & 0o777 == 0o600


def test_no_file_is_a_quiet_miss(tmp_path, recwarn):
    assert PrefixStateStore(tmp_path / "absent").load(KEY, TOKENS) is None
    assert not recwarn.list


@pytest.mark.parametrize("change", ["model", "prompt", "library", "settings", "system"])
def test_another_model_prompt_library_or_cpu_is_another_file(tmp_path, change):
    store = PrefixStateStore(tmp_path)
    store.save(KEY, TOKENS, b"old", CHECK)
    fields = {
        "model": "model-b|100|1|abc",
        "prompt": "other",
        "library": "0.3.37",
        "settings": "n_batch=256",
        "system": "AVX2 = 1 | AMX_INT8 = 1",
    }
    other = PrefixKey(**{**KEY.__dict__, change: fields[change]})
    assert store.path_for(other) != store.path_for(KEY)
    assert store.load(other, TOKENS) is None  # a miss: the caller evaluates and saves anew


@pytest.mark.parametrize("damage", ["flip", "truncate", "garbage", "tokens"])
def test_a_damaged_file_is_ignored_with_a_warning(tmp_path, damage):
    store = PrefixStateStore(tmp_path)
    path = store.save(KEY, TOKENS, bytes(range(256)) * 8, CHECK)
    blob = bytearray(path.read_bytes())
    if damage == "flip":
        blob[-100] ^= 0xFF
    elif damage == "truncate":
        del blob[-10:]
    elif damage == "garbage":
        blob = bytearray(b"not a state at all")
    path.write_bytes(bytes(blob))
    tokens = TOKENS[:-1] + [7] if damage == "tokens" else TOKENS
    with pytest.warns(PrefixStateWarning, match="ignoring the saved prompt state"):
        assert store.load(KEY, tokens) is None


def test_only_the_newest_states_are_kept(tmp_path):
    store = PrefixStateStore(tmp_path, keep=2)
    for n in range(4):
        store.save(PrefixKey.for_prompt("m", f"prompt {n}", TOKENS, "v", "s"), TOKENS, b"x", CHECK)
    assert len(list(tmp_path.glob("prefix-*.kvstate"))) == 2


def test_a_replaced_model_file_has_another_identity(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + b"a" * 100)
    before = model_identity(model)
    model.write_bytes(b"GGUF" + b"b" * 100)  # same size, new bytes and time
    os.utime(model, ns=(1, 1))
    assert model_identity(model) != before
    same = model_identity(model)
    assert model_identity(model) == same


def test_an_unwritable_folder_is_skipped(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert PrefixStateStore(blocker / "sub").save(KEY, TOKENS, b"x", CHECK) is None


# ----------------------------------------------------------------- with the real model

PREFIX = [
    {"role": "system", "content": "Answer with one Minecraft item name. " * 8},
    {"role": "user", "content": "Tool to mine stone?"},
    {"role": "assistant", "content": "wooden_pickaxe"},
]
QUESTION = PREFIX + [{"role": "user", "content": "Tool to mine iron?"}]
GRAMMAR = 'root ::= ("wooden" | "stone" | "iron") "_pickaxe"'


@pytest.fixture
def in_folder(real_backend, tmp_path, monkeypatch):
    """The session's model keeping its prefix states in ``tmp_path``."""
    monkeypatch.setattr(real_backend, "state_dir", tmp_path)
    monkeypatch.setattr(real_backend, "store", PrefixStateStore(tmp_path))
    return real_backend


def new_process(backend):
    """What a new process starts with: the KV cache empty, nothing primed (the store on disk stays)."""
    backend._context.truncate(0)
    assert backend._context.pinned == 0 and not backend._context.tokens
    return backend


@pytest.mark.llm
def test_a_new_process_loads_the_prefix_and_answers_the_same(in_folder, tmp_path):
    first = in_folder
    primed = first.prime(PREFIX)
    assert primed.source == "evaluated" and primed.saved
    assert first.prime(PREFIX).source == "memory"
    reply = first.complete(QUESTION, grammar=GRAMMAR)
    second = new_process(in_folder)
    assert second.prime(PREFIX).source == "disk"
    again = second.complete(QUESTION, grammar=GRAMMAR)
    assert again.cached_prompt_tokens == primed.tokens  # only the question was evaluated
    assert again.text == reply.text
    (state,) = tmp_path.glob("prefix-*.kvstate")
    state.write_bytes(state.read_bytes()[:-50])  # a torn write
    third = new_process(in_folder)
    with pytest.warns(PrefixStateWarning):
        assert third.prime(PREFIX).source == "evaluated"  # and saved again, whole
    assert third.complete(QUESTION, grammar=GRAMMAR).text == reply.text
    assert new_process(in_folder).prime(PREFIX).source == "disk"
    assert (tmp_path.stat().st_mode & 0o777, state.stat().st_mode & 0o777) == (0o700, 0o600)


def _rewrite_payload(path, change):
    """Change the KV bytes of a saved state and recompute its SHA-256, as a forger would."""
    import hashlib
    import json
    import struct

    from barsym.llm.llamacpp.prefix_state import MAGIC

    blob = path.read_bytes()
    at = len(MAGIC)
    (size,) = struct.unpack_from("<Q", blob, at)
    header = json.loads(blob[at + 8 : at + 8 + size])
    body = bytearray(blob[at + 8 + size :])
    change(body, 4 * header["tokens"])
    header["sha256"] = hashlib.sha256(bytes(body)).hexdigest()
    new = json.dumps(header).encode()
    path.write_bytes(MAGIC + struct.pack("<Q", len(new)) + new + bytes(body))


def _noise(body, start):
    import random

    rng = random.Random(7)
    for i in range(start + 64, len(body) // 3, 7):  # K and V cells of the early layers
        body[i] = rng.randrange(256)


def _nans(body, start):
    import struct

    nan = struct.pack("<e", float("nan"))  # f16 NaN, the KV cache's cell type
    for i in range(start + 64, start + 64 + 2 * 4096, 2):
        body[i : i + 2] = nan


@pytest.mark.llm
@pytest.mark.parametrize("change", [_noise, _nans], ids=["noise", "nan"])
def test_a_forged_state_is_discarded_and_rebuilt(in_folder, tmp_path, change):
    first = in_folder
    first.prime(PREFIX)
    reply = first.complete(QUESTION, grammar=GRAMMAR)
    (state,) = tmp_path.glob("prefix-*.kvstate")
    _rewrite_payload(state, change)
    second = new_process(in_folder)
    with pytest.warns(PrefixStateWarning, match="discarding the saved prompt state"):
        assert second.prime(PREFIX).source == "evaluated"
    assert second.complete(QUESTION, grammar=GRAMMAR).text == reply.text
    third = new_process(in_folder)
    assert third.prime(PREFIX).source == "disk"  # the rebuilt file is whole again


@pytest.mark.llm
def test_the_primed_prefix_ends_with_the_questions_opening_and_gives_the_same_logits(in_folder):
    """The user turn's opening (``<|im_start|>user\\n``) is evaluated with the prefix, once: each call then
    evaluates only its question's own text, and the logits are those of the question evaluated whole."""
    import numpy as np

    from barsym.llm.llamacpp.backend_spans import CHECK_TOLERANCE

    backend = new_process(in_folder)
    prefix_only = backend._prompt.render(PREFIX, generation_prompt=False)
    primed = backend.prime(PREFIX)
    assert primed.tokens == len(prefix_only) + 3
    opening = backend._context.tokens[len(prefix_only) : primed.tokens]
    assert backend._model.detokenize(opening, special=True) == "<|im_start|>user\n"
    question = backend._prompt.render(QUESTION)
    assert question[: primed.tokens] == backend._context.tokens[: primed.tokens]
    backend._context.truncate(primed.tokens)
    after_pin = backend._context.evaluate(question[primed.tokens :], first_output=len(question) - primed.tokens - 1)
    backend._context.truncate(len(prefix_only))
    whole = backend._context.evaluate(question[len(prefix_only) :], first_output=len(question) - len(prefix_only) - 1)
    # the same numbers (bitwise on the 2-core AVX2 machine; other kernels may round batch shapes
    # apart, by less than a loaded state's check allows), so the same greedy token
    assert float(np.max(np.abs(after_pin[-1] - whole[-1]))) < CHECK_TOLERANCE
    assert int(after_pin[-1].argmax()) == int(whole[-1].argmax())
    new_process(in_folder)
