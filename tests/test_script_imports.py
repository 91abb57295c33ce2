"""Every ``from barsym... import name`` in the scripts of ``bench/`` and ``tools/`` names something that exists.

The scripts are not imported by the test suite, and most of their barsym imports sit inside functions (the
model loads only when a run asks for it), so a rename in the package left them broken until someone ran
them: after issue 54 made one backend builder, ``bench_parse.py``, ``bench_planners.py`` and
``tools/few_shot_copy.py`` still imported the removed ``shared_backend`` and failed at their first model run.
This walks each script's syntax tree, imports every barsym module it names and checks every name.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("bench/*.py"), *ROOT.glob("tools/*.py")])


def barsym_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None for ``import module``) of every barsym import in the file, nested ones too."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module.startswith("barsym"):
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "barsym"]
    return found


def test_the_scripts_are_found():
    assert len(SCRIPTS) > 20 and any(p.name == "bench_parse.py" for p in SCRIPTS)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_barsym_name_a_script_imports_exists(path):
    missing = []
    for line, module, name in barsym_imports(path):
        try:
            imported = importlib.import_module(module)
        except ImportError as exc:
            missing.append(f"line {line}: {module}: {exc}")
            continue
        if name is not None and name != "*" and not hasattr(imported, name):
            try:  # a submodule imported by name: "from barsym.llm import stand_in"
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"line {line}: {module} has no {name}")
    assert not missing, f"{path.relative_to(ROOT)}: " + "; ".join(missing)
