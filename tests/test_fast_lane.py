"""``./scripts/test --fast``: the developers' quick lane, without the real model and Ray (issue 35, item 10).

The script is run for real, in a copy of the repository's layout whose
``.venv/bin/python`` is a stand-in that writes down its arguments: what pytest
would be asked is read back, with and without ``--fast``, and nothing is
installed or tested. The markers the lane relies on are checked too: every
test that starts Ray carries ``ray``, every one that asks for the real model's
fixtures carries ``llm``.
"""

from __future__ import annotations

import ast
import os
import shutil
import stat
import subprocess

from testdata import REPO

LLM_FIXTURES = {
    "gguf_path",
    "session_backend",
    "real_backend",
    "bare_backend",
    "smol",
    "server_problem",
    "llama_server",
}


def _lane(tmp_path, *argv) -> list[str]:
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "test", tmp_path / "scripts" / "test")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > "$CALLS"\necho "--" >> "$CALLS"\n')
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    calls = tmp_path / "calls"
    env = {**os.environ, "CALLS": str(calls), "BARSYM_NO_APT": "1"}
    done = subprocess.run(
        ["bash", str(tmp_path / "scripts" / "test"), *argv], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return calls.read_text().splitlines()[:-1]  # the last call: pytest's


def test_fast_leaves_out_the_llm_and_ray_tests_and_passes_the_rest_on(tmp_path):
    assert _lane(tmp_path, "--fast", "tests/test_planner.py", "-x") == [
        "-m",
        "pytest",
        "-m",
        "not llm and not ray",
        "tests/test_planner.py",
        "-x",
    ]


def test_without_fast_every_test_runs(tmp_path):
    assert _lane(tmp_path, "-x") == ["-m", "pytest", "-x"]


def _marks(node: ast.FunctionDef) -> set[str]:
    return {ast.unparse(d).split("mark.")[-1].split("(")[0] for d in node.decorator_list if "mark." in ast.unparse(d)}


def _is_ray_init(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func) == "ray.init"


def test_the_lane_markers_are_on_the_tests_that_need_them():
    for path in sorted((REPO / "tests").rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_marks = {
            ast.unparse(n) for n in tree.body if isinstance(n, ast.Assign) and "pytestmark" in ast.unparse(n)
        }
        for node in tree.body:
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            marks = _marks(node) | ({"llm"} if any("mark.llm" in m for m in module_marks) else set())
            if any(_is_ray_init(n) for n in ast.walk(node)):
                assert "ray" in marks, f"{path.name}::{node.name} starts Ray without @pytest.mark.ray"
            if LLM_FIXTURES & {a.arg for a in node.args.args}:
                assert "llm" in marks, f"{path.name}::{node.name} uses the real model without @pytest.mark.llm"
