"""docs/modules.md is what the modules' docstrings say: the map cannot go stale."""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "gen_module_map.py"


def _tool():
    spec = importlib.util.spec_from_file_location("gen_module_map", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_module_map_matches_the_docstrings():
    tool = _tool()
    expected = tool.render()
    actual = tool.DOC.read_text(encoding="utf-8") if tool.DOC.is_file() else ""
    diff = "".join(
        difflib.unified_diff(actual.splitlines(True), expected.splitlines(True), "docs/modules.md", "now", n=0)
    )
    assert actual == expected, (
        f"docs/modules.md is stale; regenerate it with `python tools/gen_module_map.py`:\n{diff[:3000]}"
    )


def test_every_module_says_what_it_is_for():
    text = _tool().render()
    assert "(no docstring)" not in text
    assert "| `rules.py` |" in text and "## `barsym.kb`" in text
