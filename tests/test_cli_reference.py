"""docs/cli.md is what the parsers generate: the reference cannot go stale."""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

from barsym.cli import build_parser

TOOL = Path(__file__).resolve().parents[1] / "tools" / "gen_cli_reference.py"


def _tool():
    spec = importlib.util.spec_from_file_location("gen_cli_reference", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOOL_MODULE = _tool()
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
