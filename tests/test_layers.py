"""The packages import one way, top to bottom (README, "How it is built").

Every ``import`` in ``src/barsym`` — at module level or inside a function —
may name only packages in a lower layer. This is what lets a memory or DEPS
decomposer use the verifier without the LLM decomposer, and the symbolic
planner run without :mod:`barsym.llm`. The planner registry loads the
package that registers the planners above it (``barsym.reasoning``) by name,
on demand; that is not an import and is not checked here.
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
    # barsym distill: the oracle's training data, LoRA training, the GGUF written; report: what barsym eval prints
    # and barsym report draws, read from eval's evaluations and run files (eval, which runs them, never imports it)
    ("distill", "report"),
    ("eval",),  # running an evaluation: task sets, the one plan-and-score path, executors, run files
    ("reasoning",),  # everything that asks the model
    ("consistency", "memory"),
    ("planner",),  # BAR's loop, the symbolic decomposer, the verifier
    ("validation", "metrics", "start_state"),  # start_state: a start read from --start/--inventory/--layer
    ("validation_result",),  # what a validation says: read by run files, reports and the API without the validator
    ("sim", "graph", "graph_export", "bar_io"),
    ("llm", "kb", "model", "datasets"),
    ("private_files", "redact"),  # barsym's own 0600 files and secrets kept out of logs: used by all
    # replacing a file all at once; package names loaded on first use; the crafting graph's storage; the SQLite
    # files' migration runner; typed records checked as pydantic's, without it (the step, goal, plan): import nothing
    ("atomic_files", "lazy_names", "digraph", "sqlite_migrations", "plain_models"),
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
    assert "reasoning" not in imported_packages(registry)  # the catalog loaded by name, on demand


# ----------------------------------------------------------------- no cycle inside a package


def module_of(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    where = SRC.joinpath(*name.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def runtime_imports(tree: ast.AST):
    """The import statements that run: those under ``if TYPE_CHECKING:`` name types for the checker only."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in runtime_imports_of(child))
            continue
        yield from runtime_imports_of(node)


def runtime_imports_of(node: ast.AST):
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        yield node
    else:
        yield from runtime_imports(node)


def imported_modules(path: Path) -> set[str]:
    """The barsym modules ``path`` imports at run time (``from .x import y`` is module ``x``, or ``x.y`` if a module)."""
    me = module_of(path)
    package = me.split(".") if path.name == "__init__.py" else me.split(".")[:-1]
    found = set()
    for node in runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name.removeprefix("barsym.") for a in node.names if a.name.startswith("barsym."))
            continue
        if node.level:
            target = package[: len(package) - (node.level - 1)] + (node.module.split(".") if node.module else [])
        elif node.module and node.module.split(".")[0] == "barsym":
            target = node.module.split(".")[1:]
        else:
            continue
        for alias in node.names:
            name = ".".join([*target, alias.name])
            found.add(name if is_module(name) else ".".join(target))
    return found - {me, ""}


def cycles_inside_packages() -> list[list[str]]:
    """Each set of modules of one package that import one another in a circle (package ``__init__`` files,
    the packages' faces that re-export their modules, are left out)."""
    edges: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        me = module_of(path)
        if path.name == "__init__.py" or "." not in me:
            continue
        package = me.rsplit(".", 1)[0]
        edges[me] = {m for m in imported_modules(path) if m.rsplit(".", 1)[0] == package and "." in m}
    return strongly_connected(edges)


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node (iterative enough for barsym's few hundred modules)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_cycle_inside_any_package():
    """Issue 36: ``llm_planners -> bar_decomposer -> model_calls -> forward_plans -> llm_planners`` was one."""
    assert cycles_inside_packages() == []


def test_the_cycle_finder_finds_a_cycle_and_skips_type_only_imports(tmp_path):
    assert strongly_connected({"p.a": {"p.b"}, "p.b": {"p.c"}, "p.c": {"p.a"}, "p.d": {"p.a"}}) == [
        ["p.a", "p.b", "p.c"]
    ]
    assert strongly_connected({"p.a": {"p.b"}, "p.b": set()}) == []
    # planner.render names PlanResult for its annotations only; reasoning.llm_planners really imports its decomposer
    assert "planner.result" not in imported_modules(SRC / "planner" / "render.py")
    backward = SRC / "reasoning" / "planners" / "backward"
    assert "reasoning.planners.backward.bar_decomposer" in imported_modules(backward / "llm_planners.py")
    assert "reasoning.calls.model_calls" in imported_modules(backward / "bar_decomposer.py")


# ----------------------------------------------------------------- reasoning's packages, one way too

#: ``barsym.reasoning`` split by role (issue 54), top to bottom; ``""`` is the package's own modules (the options,
#: the typed spec, the loops' limits), which every planner reads and which read only the calls below them
REASONING_LAYERS = [
    ("__init__",),  # the catalog: registers the planners
    ("planners",),  # backward (bar, llm-only, bar-sc) and forward (deps, cot, the baselines)
    ("scoring", "prose"),  # the model's side of state consistency; reading prose plans
    ("prompts",),
    ("grammars",),
    ("",),
    ("calls",),  # the gateway, the one backend builder, the call log, progress
]
REASONING_RANK = {name: rank for rank, layer in enumerate(REASONING_LAYERS) for name in layer}


def reasoning_part(module: str) -> str:
    """The part of ``barsym.reasoning`` a module (``reasoning.calls.backends``) belongs to: its sub-package, or
    ``""`` for a module of the package itself, ``"__init__"`` for the package."""
    parts = module.split(".")
    if parts == ["reasoning"]:
        return "__init__"
    return parts[1] if len(parts) > 2 or (SRC / "reasoning" / parts[1]).is_dir() else ""


def test_every_part_of_reasoning_has_a_layer():
    parts = {reasoning_part(module_of(p)) for p in (SRC / "reasoning").rglob("*.py")}
    assert parts - set(REASONING_RANK) == set(), "add the new package to REASONING_LAYERS"


def test_reasonings_packages_import_one_way():
    wrong = []
    for path in sorted((SRC / "reasoning").rglob("*.py")):
        mine = reasoning_part(module_of(path))
        for other in {reasoning_part(m) for m in imported_modules(path) if m.split(".")[0] == "reasoning"} - {mine}:
            if other != "__init__" and REASONING_RANK[other] <= REASONING_RANK[mine]:
                wrong.append(f"{path.relative_to(SRC)} imports reasoning's {other or 'own modules'}")
    assert wrong == []
