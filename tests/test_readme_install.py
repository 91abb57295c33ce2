"""The README's Python example runs on the README's own install (issue 35, item 3).

The example once used ``barsym.env``, which needs the ``[env]`` extra that the
README's first command (``pip install -e '.[llm]'``) does not install, so a new
user's first paste failed. A real fresh venv made by that command would build
llama-cpp-python from source (7-10 minutes on a laptop, far more on a busy CI
machine), so this test makes the same install another way: the example runs in
a subprocess where every package that the README's command would *not* install
cannot be imported. Which packages those are is read, not written down: the
extras named in the README's command, the dependencies pyproject.toml gives
them and everything those require (installed metadata), against the packages
of every other extra (gymnasium, ray, hypothesis, torch, ...).
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import subprocess
import sys

import pytest

from testdata import REPO

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the project's CI runs 3.11

NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[([^\]]*)\])?")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def readme_install_extras() -> set[str]:
    """The extras of the README's first command: ``pip install -e '.[llm]'`` -> {"llm"}."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    command = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    found = re.search(r"pip install -e '?\.(?:\[([^\]]*)\])?'?", command)
    assert found, f"no 'pip install -e .' in the README's first command: {command!r}"
    return {e.strip() for e in (found.group(1) or "").split(",") if e.strip()}


def _requirements(extras: set[str], optional: dict[str, list[str]], core: list[str]) -> set[str]:
    """Distribution names the project needs with ``extras`` (an extra naming barsym[...] brings those too)."""
    wanted, seen, names = set(extras), set(), {_normal(NAME.match(r).group(1)) for r in core}
    while wanted - seen:
        extra = (wanted - seen).pop()
        seen.add(extra)
        for requirement in optional.get(extra, []):
            name, inner = NAME.match(requirement).groups()
            if _normal(name) == "barsym":
                wanted |= {e.strip() for e in (inner or "").split(",")}
            else:
                names.add(_normal(name))
    return names


def _closure(names: set[str]) -> set[str]:
    """``names`` and every distribution they require unconditionally (or by platform), as installed here."""
    out, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in out:
            continue
        out.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        todo += [_normal(NAME.match(r).group(1)) for r in requires if "extra ==" not in r]
    return out


def blocked_modules() -> list[str]:
    """Top-level modules installed here whose distributions the README's command would not install."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    optional, core = project["optional-dependencies"], project["dependencies"]
    installed = _closure(_requirements(readme_install_extras(), optional, core))
    others = _requirements(set(optional), optional, core) - installed
    return sorted(
        module
        for module, dists in metadata.packages_distributions().items()
        if dists and all(_normal(d) in others for d in dists) and module.isidentifier()
    )


def test_the_readme_install_leaves_out_the_other_extras():
    blocked = blocked_modules()
    assert "gymnasium" in blocked or "gymnasium" not in metadata.packages_distributions()
    assert "llama_cpp" not in blocked and "pydantic" not in blocked


def test_the_readme_example_runs_on_the_readme_install(tmp_path):
    from test_api import readme_examples

    example = readme_examples()[0]
    script = tmp_path / "example.py"
    block = f"import sys\nfor name in {blocked_modules()!r}:\n    sys.modules[name] = None\n"
    script.write_text(block + example, encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))  # this checkout's barsym
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env={**os.environ, "PYTHONPATH": path},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "False True"


def test_install_md_installs_from_the_repository_and_names_every_extra():
    """No index serves barsym: docs/install.md installs from a clone, a path or a git URL, and says what each
    extra of pyproject.toml brings (issue 35, item 9)."""
    text = (REPO / "docs" / "install.md").read_text(encoding="utf-8")
    offered = re.findall(r"^(?:\| `|\.venv/bin/)?pip install ([^`\n]+)", text, re.M)  # commands, not prose
    assert offered and not any(re.fullmatch(r"'?barsym(\[[^\]]*\])?'?", c.split("#")[0].strip()) for c in offered)
    assert "pip install -e '.[llm]'" in text and "@ git+" in text
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    rows = {m.group(1) for m in re.finditer(r"^\| `pip install -e '\.\[(\w+)\]'` \|", text, re.M)}
    assert rows == set(extras) - {"bench"}, rows ^ set(extras)
