"""Every id ``--format actions`` hands a bot exists in the ecosystem's own data: the npm minecraft-data package.

barsym reads minecraft-data's PyPI copy (and, for releases after 1.19.2, the npm package's folder that
``BARSYM_MINECRAFT_DATA`` names); a bot reads the npm package through mineflayer. This plans BAR's 53 goals
and DEPS' 70 in 1.12.2, 1.16.5, 1.19.2 and 1.20.4 (the last served by the npm data itself), and gathers
every raw resource and mob drop of each version once, turns every plan into bot actions, and asks node whether each item, block and mob id is in that version's npm data. Before
1.13 an id is the version's item name (``planks``; the metadata beside it is not checked: minecraft-data's
1.12 items list few variations).

scripts/test installs the npm package into ``build/npm`` (``NPM_MINECRAFT_DATA`` there pins the version);
without node the test skips, saying so; with node but without the package it fails, saying how to install it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from barsym.kb import Rules, UnknownItemError, load_kb
from barsym.kb.versions import MINECRAFT_DATA_ENV
from barsym.model import Goal, Step
from barsym.planner import PlanningError, make_planner
from barsym.sim import State
from barsym.sim.bot_actions import bot_actions
from testdata import BAR_DIR, DEPS_FILE, REPO

NPM_PACKAGE = REPO / "build" / "npm" / "node_modules" / "minecraft-data"
VERSIONS = ("1.12.2", "1.16.5", "1.19.2", "1.20.4")


def goals() -> list[str]:
    bar = sorted(p.stem for p in BAR_DIR.glob("*/*.jsonl"))
    deps = [task["object"] for task in json.loads(DEPS_FILE.read_text())]
    return list(dict.fromkeys(bar + deps))


def collect(node: dict, found: dict[str, set[str]], kind: str = "items") -> None:
    """Every id in an actions document: ``blocks`` refs are blocks, ``entity`` a mob, every other ref an item."""
    if isinstance(node, dict):
        if "ids" in node and "name" in node:
            found[kind].update(node["ids"])
        for key, value in node.items():
            if key == "entity":
                found["entities"].add(value)
            else:
                collect(value, found, "blocks" if key == "blocks" else kind)
    elif isinstance(node, list):
        for value in node:
            collect(value, found, kind)


def ids_of(version: str) -> tuple[dict[str, set[str]], int]:
    kb = load_kb(version)
    planner = make_planner("symbolic", kb)
    found: dict[str, set[str]] = {"items": set(), "blocks": set(), "entities": set()}
    planned = 0
    for goal in goals():
        try:
            item = kb.resolve(goal, dialect="deps" if "deps" in kb.dialects else None)
            result = planner.plan(Goal(item=item, count=1))
        except (UnknownItemError, PlanningError):
            continue  # an item the version lacks, or one found only as loot: nothing to hand a bot
        actions = bot_actions(kb, result.plan.steps)
        assert actions["valid"], (version, goal)
        collect(actions, found)
        planned += 1
    for action in Rules(kb).every_action():  # and every raw resource and mob drop, one step each
        if action.kind not in ("mine", "kill"):
            continue
        held = {slot.accepts[0]: slot.count for slot in action.needs}
        tool = action.tool.options[-1] if action.tool is not None else None
        step = Step(type=action.kind, item=action.item, count=1, tool=tool)
        start = State.start({**held, **({tool: 1} if tool else {})}, layer=min(action.layers, default=0))
        actions = bot_actions(kb, [step], start)
        assert actions["valid"], (version, str(step), actions["steps"])
        collect(actions, found)
    return found, planned


def missing_in_npm(npm_data: Path, wanted: dict) -> dict:
    """What tests/npm_ids.js finds missing from the npm data, per version and kind."""
    done = subprocess.run(
        ["node", str(REPO / "tests" / "npm_ids.js"), str(npm_data)],
        input=json.dumps(wanted),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def npm_data() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the ids cannot be checked against the npm minecraft-data package")
    if not (NPM_PACKAGE / "package.json").is_file():
        pytest.fail(
            f"the npm minecraft-data package is not at {NPM_PACKAGE}: scripts/test installs it "
            f"(npm install --prefix build/npm minecraft-data@VERSION, the version scripts/test pins)"
        )
    return NPM_PACKAGE


def test_every_id_of_the_bot_actions_is_in_the_npm_minecraft_data(npm_data, monkeypatch):
    monkeypatch.setenv(MINECRAFT_DATA_ENV, str(npm_data / "minecraft-data" / "data"))  # 1.20.4 from the npm copy
    wanted, counts = {}, {}
    for version in VERSIONS:
        found, planned = ids_of(version)
        assert planned >= 90 and len(found["items"]) >= 100 and len(found["blocks"]) >= 30, (version, planned, found)
        wanted[version] = {kind: sorted(ids) for kind, ids in found.items()}
        counts[version] = planned
    missing = missing_in_npm(npm_data, wanted)
    assert missing == {v: {"items": [], "blocks": [], "entities": []} for v in VERSIONS}, (missing, counts)


def test_the_checker_finds_an_id_that_is_not_there(npm_data):
    """The node side is no rubber stamp: a made-up item and a block of a later release are reported."""
    wanted = {"1.12.2": {"items": ["stick", "not_an_item"], "blocks": ["deepslate"], "entities": ["cow"]}}
    assert missing_in_npm(npm_data, wanted) == {
        "1.12.2": {"items": ["not_an_item"], "blocks": ["deepslate"], "entities": []}
    }
