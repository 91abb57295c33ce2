"""``barsym parse`` with the real embedded SmolLM2-135M on one sentence: what holds whatever the model answers.

The count is read from the words and fixed by the grammar, the name is one the
grammar offered, and the verdict is printed. How often the model is right is
measured by bench/bench_parse.py, not asserted here.
"""

from __future__ import annotations

import json

import pytest

from barsym.planner.registry import graph_for
from barsym.reasoning.prose.parser import ProseParser
from cli_run import run

pytestmark = pytest.mark.llm


def test_parse_one_sentence_with_the_real_model(capsys, tmp_path, gguf_path, session_backend, kb):
    """``--model GGUF --threads 2``: the session's model answers (tests/conftest.py), not a new load."""
    path = tmp_path / "plan.txt"
    path.write_text("Chop three logs.")
    code, out, err = run(capsys, "parse", path, "--model", gguf_path, "--threads", "2", "--format", "json")
    assert code in (0, 1), err
    data = json.loads(out)
    assert data["parsed_by"] == "model" and data["calls"] == 1 and len(data["steps"]) == 1
    candidates = ProseParser(kb, graph_for(kb), backend=None).clause("chop three logs").candidates
    verb, count, item = data["steps"][0]["step"].split()[:3]
    assert count == "3" and item in candidates and verb in ("mine", "craft", "smelt", "kill")
    assert data["model"]["gguf"] == session_backend.model_path.name and len(data["model"]["gguf_sha256"]) == 64
    assert data["seconds"] > 0  # parse says how long it took (issue 56)
