"""The packages import one way, top to bottom (README, "How it is built").

Every ``import`` in ``src/barsym`` — at module level or inside a function —
may name only packages in a lower layer. This is what lets a memory or DEPS
decomposer use the verifier without the LLM decomposer, and the symbolic
planner run without :mod:`barsym.llm`. The planner registry names the
planners above it as ``"module:function"`` strings, loaded on demand; those
are not imports and are not checked here.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "barsym"

#: top to bottom; a package may import from the layers below its own only
LAYERS = [
    ("__init__",),  # the public API, imported lazily
    ("testing",),  # hypothesis strategies and fakes for users' tests
    ("env",),  # the gym-style environment over the execution worlds
    ("api",),  # barsym.plan/validate/execute/repair with typed results
    ("__main__",),  # python -m barsym: runs cli
    ("cli",),
    ("commands",),
    ("distill",),  # barsym distill: the oracle's training data, LoRA training, the GGUF written
    ("eval",),
    ("reasoning",),  # everything that asks the model
    ("consistency", "memory"),
    ("planner",),  # BAR's loop, the symbolic decomposer, the verifier
    ("validation", "metrics", "start_state"),  # start_state: a start read from --start/--inventory/--layer
    ("sim", "graph", "graph_export", "bar_io"),
    ("llm", "kb", "model", "datasets"),
    ("private_files", "redact"),  # barsym's own 0600 files and secrets kept out of logs: used by all
    ("atomic_files",),  # replacing a file all at once (every output and private file): imports nothing
    ("steps",),  # the step notation: render, read, its grammar fragment (imports nothing)
]
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}


def package_of(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return parts[0]


def imported_packages(path: Path) -> set[str]:
    """The top-level barsym packages ``path`` imports (absolute or relative)."""
    here = list(path.relative_to(SRC).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                names = target[:1] or [alias.name for alias in node.names]
            elif node.module and node.module.split(".")[0] == "barsym":
                names = node.module.split(".")[1:2] or [alias.name for alias in node.names]
            else:
                continue
            found.update(names)
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("barsym."))
    return found


def test_every_package_has_a_layer():
    packages = {package_of(p) for p in SRC.rglob("*.py")}
    assert packages - set(RANK) == set(), "add the new package to LAYERS"


def test_imports_flow_one_way():
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        mine = package_of(path)
        for other in imported_packages(path) - {mine}:
            if other == "__version__" or other not in RANK:
                continue
            if RANK[other] <= RANK[mine]:
                wrong.append(f"{path.relative_to(SRC)} imports {other}")
    assert wrong == []


def test_the_checker_sees_function_level_and_relative_imports(tmp_path):
    """The scan itself: a lazy relative import two levels up is found."""
    module = SRC / "planner" / "symbolic.py"
    assert {"graph", "kb", "model"} <= imported_packages(module)
    registry = SRC / "planner" / "registry.py"
    assert "reasoning" not in imported_packages(registry)  # named as strings, loaded on demand
