"""Issue 53, item 4: no piece of a key reaches the call log, a run file, stdout or stderr, however it is echoed.

A loopback server echoes the ``--api-key`` back in its replies and error bodies: raw, JSON-escaped (``\\/``
too), URL-encoded or in base64 (inside a longer encoded text), whole or cut at any point that leaves 8
characters or more, and with its error bodies padded so the 300-character excerpt barsym quotes is cut
inside the key. For random keys, ``barsym eval --run`` (and ``-o``), ``barsym plan --format json`` and
``barsym logs`` then run against it, and no 8-character piece of the key, nor of its encoded spelling
(in base64, the characters that encode the key's bytes alone), is in anything barsym wrote or printed
(the call log's SQLite files read as bytes).
"""

from __future__ import annotations

import base64
import json
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from barsym.redact import HIDDEN, PIECE, hide_secrets
from cli_run import run
from loopback import ChatStub

pytestmark = pytest.mark.hostile

KEY_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_/+=.~"
ENCODINGS = ("raw", "json", "json-slash", "url", "base64")


def encoded(key: str, how: str, before: str = "") -> str:
    """``key`` as a server might echo it (``before``: the text base64 encodes in front of it)."""
    if how == "raw":
        return key
    if how == "json":
        return json.dumps(key)[1:-1]
    if how == "json-slash":  # some encoders escape "/" (the sk-proj-A\/b)
        return json.dumps(key)[1:-1].replace("/", "\\/")
    if how == "url":
        return urllib.parse.quote(key, safe="")
    if how == "base64":
        return base64.b64encode(f"{before}{key} was refused".encode()).decode()
    raise AssertionError(how)


def key_part(key: str, how: str, spelled: str, before: str = "") -> str:
    """The part of ``spelled`` that is the key's alone (in base64: the characters whose bits are all the key's)."""
    if how != "base64":
        return spelled
    offset, length = len(before.encode()), len(key.encode())
    return spelled[-(-8 * offset // 6) : (8 * (offset + length) - 6) // 6 + 1]


def pieces(text: str) -> set[str]:
    return {text[i : i + PIECE] for i in range(len(text) - PIECE + 1)}


keys = st.text(KEY_CHARS, min_size=12, max_size=64).map(lambda body: "sk-" + body)


@st.composite
def echoes(draw):
    """A key, how the server spells it, and the part of that spelling it sends (at least 8 characters)."""
    key = draw(keys)
    how = draw(st.sampled_from(ENCODINGS))
    before = draw(st.text("abc ", max_size=5))
    spelled = encoded(key, how, before)
    start = draw(st.integers(0, len(spelled) - PIECE))
    stop = draw(st.integers(start + PIECE, len(spelled)))
    return key, key_part(key, how, spelled, before), spelled[start:stop], draw(st.integers(240, 320))


def _server(sent: str, pad: int) -> ChatStub:
    """Odd calls: a reply quoting the echo; even ones: HTTP 500 whose body puts it across the 300th character."""

    def answer(n: int, messages: list) -> tuple[int, bytes]:
        if n % 2:
            reply = {"choices": [{"message": {"role": "assistant", "content": f"craft 1 stick {sent}"}}]}
            return 200, json.dumps(reply).encode()
        return 500, json.dumps({"error": "x" * pad + f" invalid key {sent} for this server"}).encode()

    return ChatStub(status=answer)


def _written(folder: Path) -> str:
    """Every file under ``folder`` (the run file, -o, the call log and its -wal/-shm), as text."""
    return "\n".join(p.read_bytes().decode("latin-1") for p in sorted(folder.rglob("*")) if p.is_file())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(echo=echoes())
def test_no_piece_of_a_key_is_written_or_printed(echo, tmp_path_factory, monkeypatch, capsys):
    key, own, sent, pad = echo
    folder = tmp_path_factory.mktemp("secrets")
    monkeypatch.setenv("BARSYM_LOG_DB", str(folder / "logs.db"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stub = _server(sent, pad)
    shown = []
    try:
        common = ["--llm-url", stub.url, "--api-key", key]
        argv = ["eval", "--dataset", "bar", "--limit", "1", "--planner", "llm-only", *common]
        shown.append(run(capsys, *argv, "--run", folder / "run.jsonl", "-o", folder / "eval.json"))
        shown.append(run(capsys, "plan", "stick", "--planner", "bar", *common, "--format", "json"))
    finally:
        stub.close()
    shown.append(run(capsys, "logs", "--limit", "20"))
    assert stub.posts >= 2  # the server was asked, and echoed it in a reply and in an error body
    everything = "\n".join(out + err for _, out, err in shown) + _written(folder)
    assert not [p for p in pieces(key) | pieces(own) if p in everything]
    assert everything.count(HIDDEN) >= 3  # the echo did reach the log, the run file and the output: hidden there


@settings(max_examples=300, deadline=None)
@given(key=keys, how=st.sampled_from(ENCODINGS), data=st.data())
def test_hide_secrets_leaves_no_piece_of_any_spelling(key, how, data):
    """The same property over the hiding itself, many more keys: the echo anywhere in a text, cut anywhere."""
    from barsym import redact

    before = data.draw(st.text("abc ", max_size=5))
    spelled = encoded(key, how, before)
    start = data.draw(st.integers(0, len(spelled) - PIECE))
    stop = data.draw(st.integers(start + PIECE, len(spelled)))
    text = data.draw(st.text("xyz .:\n", max_size=40)) + spelled[start:stop] + data.draw(st.text("xyz .:", max_size=40))
    hidden = redact.hide_secrets(text, (key,))
    assert not [p for p in pieces(key) | pieces(key_part(key, how, spelled, before)) if p in hidden]
    for quoted in (json.dumps(text), json.dumps({"problem": text})):  # JSON stays JSON with pieces hidden
        json.loads(hide_secrets(quoted, (key,)))
