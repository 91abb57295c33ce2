"""``barsym model``: the shipped adapter's card, and whether it applies on this install."""

from __future__ import annotations

import json

import pytest

from barsym.llm.llamacpp.adapter import SHIPPED, file_sha256, read_card
from cli_run import run


def test_the_card_names_the_base_the_adapter_the_command_and_the_results(capsys):
    code, out, err = run(capsys, "model")
    card = read_card()
    assert code == 0 and not err
    assert card["base"]["sha256"] in out and file_sha256(SHIPPED) in out
    assert card["command"] in out
    for row in card["results"]:
        assert row["what"] in out
    assert "--adapter none" in out


@pytest.mark.llm
def test_the_card_as_json_says_where_and_whether_it_applies(capsys, gguf_path):
    code, out, _ = run(capsys, "model", "--format", "json")
    shown = json.loads(out)
    assert code == 0 and shown["card"] == read_card() and shown["adapter"] == str(SHIPPED)
    assert shown["applied"] is True and shown["model"] == str(gguf_path)
