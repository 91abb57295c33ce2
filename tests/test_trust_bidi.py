"""Issue 20: bidirectional controls in replies, plans and names are shown escaped, like ESC.

U+202E (right-to-left override) and its kin reorder what a terminal shows: a
reply ``craft 1 \u202ekcits`` reads on screen as something else than what the
plan holds. Everything barsym prints goes through ``escape_controls``.
"""

from __future__ import annotations

import json

import pytest

from barsym.reasoning.calls.call_log import CallLog
from barsym.redact import escape_controls
from cli_run import run

BIDI = [
    "\u061c",
    "\u200e",
    "\u200f",
    "\u202a",
    "\u202b",
    "\u202c",
    "\u202d",
    "\u202e",
    "\u2066",
    "\u2067",
    "\u2068",
    "\u2069",
]


@pytest.mark.parametrize("char", BIDI, ids=[f"U+{ord(c):04X}" for c in BIDI])
def test_every_bidi_control_is_escaped(char):
    assert escape_controls(f"oak{char}planks") == f"oak\\u{ord(char):04x}planks"


def test_ordinary_text_is_unchanged():
    text = "craft 4 stick \u2192 日本 é \u05d0 \u0627"  # letters of right-to-left scripts are letters, not controls
    assert escape_controls(text) == text


def test_a_name_with_an_override_is_echoed_escaped(tmp_path, capsys):
    plan = tmp_path / "plan.jsonl"
    plan.write_text(json.dumps({"type": "craft", "obj_name": "stick\u202eevil", "obj_num": 1}) + "\n")
    code, out, err = run(capsys, "validate", plan)
    assert "\u202e" not in out + err and "\\u202e" in out + err


def test_a_reply_with_an_override_is_shown_escaped_by_barsym_logs(tmp_path, monkeypatch, capsys):
    path = tmp_path / "logs.db"
    log = CallLog(path)
    log.start_run("barsym plan stick", "bar", "4 stick", None)
    log.record(
        goal="4 stick",
        attempt=1,
        messages=[{"role": "user", "content": "Goal: 4 \u2066stick\u2069"}],
        prefix=0,
        grammar="root ::= x",
        reply="craft 4 \u202ekcits",
        verdict="refused",
        problems=[],
        seconds=0.1,
        temperature=0.0,
    )
    log.close()
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    code, out, err = run(capsys, "logs")
    assert code == 0, err
    assert "craft 4 \\u202ekcits" in out and "\\u2066stick\\u2069" in out
    assert not any(c in out for c in BIDI)
