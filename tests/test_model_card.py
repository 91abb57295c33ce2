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


def test_a_card_of_two_stages_names_each_stages_data_and_command_and_adds_them_up():
    from barsym.commands.model import render_card

    def stage(recipe: str, command: str, steps: int, seconds: float) -> dict:
        training = {"steps": steps, "accumulate": 4, "train_seconds": seconds, "lora_rank": 16}
        return {"data": {"recipe": recipe}, "command": command, "training": training}

    first = stage("distill --data-only one.jsonl", "distill --data one.jsonl --steps 660", 660, 7815.3)
    card = {**stage("distill --data-only two.jsonl", "distill --data two.jsonl --warm-start a.ckpt", 280, 3000.0)}
    card["stages"] = [first]
    text = render_card(card)
    lines = text.splitlines()
    assert "stage 1 of 2, data: distill --data-only one.jsonl" in lines
    assert (
        "stage 2 of 2, command (from the stage before's checkpoint): distill --data two.jsonl --warm-start a.ckpt"
        in lines
    )
    assert lines.index("stage 1 of 2, data: distill --data-only one.jsonl") < lines.index(
        "stage 2 of 2, data: distill --data-only two.jsonl"
    )
    assert "in all: 940 steps, 10815 s of training" in lines
    assert "stage " not in render_card(first)  # one stage: no numbering
    card["training"]["warm_start"] = {"file": "shipped.gguf", "adapter_sha256": "a994274a03a480516cd8"}
    assert (
        "stage 2 of 2, command (from the stage before's adapter file, sha256 a994274a03a4): "
        "distill --data two.jsonl --warm-start a.ckpt" in render_card(card).splitlines()
    )


def test_the_card_says_at_which_commit_its_data_recipe_rebuilds_the_same_examples(capsys):
    from barsym.commands.model import render_card

    card = read_card()
    data = card["data"]
    assert len(data["commit"]) == 40
    stages = len(card.get("stages") or []) + 1
    numbered = f"stage {stages} of {stages}, " if stages > 1 else ""  # the shipped adapter's stage comes last
    line = f"{numbered}data: {data['recipe']} (run at barsym commit {data['commit']}: sha256 {data['sha256']})"
    assert line in render_card(card).splitlines()
    code, out, _ = run(capsys, "model")
    assert code == 0 and line in out.splitlines()
