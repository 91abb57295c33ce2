"""Write docs/modules.md, the map of barsym's modules, from their docstrings (``--check``: exit 1 when stale).

    PYTHONPATH=src python tools/gen_module_map.py [--check]

Why generated: a hand-written map goes stale with the first module that moves;
this one is each module's own first docstring line, grouped by package, so a
module without a docstring shows as a gap and a moved one moves here too.
``tests/test_module_map.py`` fails when the file is not what this writes.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "barsym"
DOC = REPO / "docs" / "modules.md"


def first_line(path: Path) -> str:
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return " ".join(doc.strip().split("\n\n")[0].split()) or "(no docstring)"


def render() -> str:
    out = [
        "# barsym's modules",
        "",
        "Generated from each module's docstring by `tools/gen_module_map.py`; do not edit by hand.",
        "How the packages depend on one another: [architecture.md](architecture.md).",
    ]
    packages: dict[str, list[Path]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        if "datasets" in path.relative_to(SOURCE).parts:
            continue
        package = path.parent.relative_to(SOURCE).as_posix()
        packages.setdefault("" if package == "." else package, []).append(path)
    for package in sorted(packages):
        out += ["", f"## `barsym{'.' + package.replace('/', '.') if package else ''}`", ""]
        out += ["| module | what it is for |", "| --- | --- |"]
        for path in packages[package]:
            text = first_line(path).replace("|", "\\|")
            out.append(f"| `{path.name}` | {text} |")
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if DOC.is_file() and DOC.read_text(encoding="utf-8") == text:
            return 0
        print(f"{DOC} is stale; regenerate it: python tools/gen_module_map.py", file=sys.stderr)
        return 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
