"""docs/cli.md is what the parsers generate: the reference cannot go stale."""

from __future__ import annotations

import difflib

from tool_modules import tool

from barsym.cli import build_parser

TOOL_MODULE = tool("gen_cli_reference")
render, DOC = TOOL_MODULE.render, TOOL_MODULE.DOC


def test_the_cli_reference_matches_the_parsers():
    expected = render(build_parser())
    actual = DOC.read_text(encoding="utf-8") if DOC.is_file() else ""
    diff = "".join(
        difflib.unified_diff(actual.splitlines(True), expected.splitlines(True), "docs/cli.md", "the parsers", n=1)
    )
    assert actual == expected, (
        f"docs/cli.md is stale; regenerate it with `PYTHONPATH=src python tools/gen_cli_reference.py`:\n{diff[:3000]}"
    )


def test_every_command_and_option_is_in_it():
    text = render(build_parser())
    for command in ("barsym plan", "barsym eval", "barsym memory show", "barsym completion"):
        assert f"## `{command}`" in text
    for option in ("--llm-seed N", "--world-seed S", "--repair-rounds N", "--deps-rounds N", "-o, --output FILE"):
        assert f"`{option}`" in text
    assert "--json" not in text.replace("--format json", "")  # deprecated spellings live in cli-flags.md
