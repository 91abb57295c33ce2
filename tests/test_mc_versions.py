"""``--mc-version V``: the knowledge base, planner and validator of any release minecraft-data knows.

What differs between releases is checked where barsym models it (docs/rules.md): raw metals and deepslate
ores from 1.17, the deeper layers of 1.18, pre-1.13 items named as the flattening named them with their
old id and metadata kept for bots, items a release lacks refused in one line, and 1.16.5 built from its
own files only.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from barsym.kb import Rules, default_data_dir, load_kb
from barsym.kb import cache as kb_cache
from barsym.kb.versions import data_set, version_files
from barsym.model import Goal
from barsym.planner import PlanningError, make_planner
from cli_run import one_line, run
from testdata import BAR_DIR, REPO

#: BAR's goals that came with later releases: refused before them, planned after
LATER = {"blast_furnace": "1.14", "smoker": "1.14", "stonecutter": "1.14", "chain": "1.16", "smithing_table": "1.14"}


@pytest.mark.parametrize("version", ["1.12.2", "1.16.5", "1.19.2"])
def test_diamond_pickaxe_is_planned_and_valid_in_each_version(capsys, version):
    code, out, err = run(capsys, "--mc-version", version, "plan", "diamond_pickaxe", "--planner", "symbolic")
    assert code == 0 and err == "", err
    assert "validator: valid" in out.splitlines()[0]
    assert ("raw_iron" in out) == (version == "1.19.2")  # iron ore drops raw iron since 1.17


@pytest.mark.parametrize("version", ["1.12.2", "1.16.5", "1.19.2"])
def test_bars_53_symbolic_plans_validate_in_each_version_or_are_refused_in_one_line(capsys, version):
    kb = load_kb(version)
    planner = make_planner("symbolic", kb)
    refused = []
    for goal in sorted(p.stem for p in BAR_DIR.glob("*/*.jsonl")):
        if goal in kb.absent:
            refused.append(goal)
            continue
        result = planner.plan(Goal(item=kb.resolve(goal), count=1))
        assert result.validation.valid, (version, goal, result.validation.errors[:1])
    assert refused == (sorted(LATER) if version == "1.12.2" else [])
    if refused:
        code, out, err = run(capsys, "--mc-version", version, "plan", refused[0])
        assert code == 2 and out == "" and one_line(err)
        assert err == f"barsym: error: '{refused[0]}' is not an item in Minecraft {version} (it is in 1.16.5)\n"


def test_from_1_17_iron_ore_drops_raw_iron_and_deepslate_ores_drop_the_same():
    old, new = load_kb("1.16.5"), load_kb("1.17.1")
    assert Rules(old).source("iron_ore") is not None and Rules(new).source("iron_ore") is None
    raw = Rules(new).action("mine", "raw_iron", 3)
    assert raw.origin == "iron_ore" and raw.tool is not None and raw.tool.options[0] == "stone_pickaxe"
    assert new.ore_variants["iron_ore"] == ("deepslate_iron_ore",) and not old.ore_variants
    planner = make_planner("symbolic", new)
    with pytest.raises(PlanningError) as info:  # a plan request for iron ore says why there is none
        planner.plan(Goal(item="iron_ore", count=1))
    assert info.value.message == (
        "iron_ore cannot be crafted, smelted, mined or hunted: it is only mined whole with a Silk Touch pickaxe "
        "since 1.17 (it drops raw metal), which barsym does not plan"
    )
    assert [a.kind for a in Rules(new).ways("iron_ingot") if a.kind == "smelt"] and new.data_set == "1.17.1"


def test_from_1_18_a_bot_finds_the_iron_and_deep_layers_deeper_and_the_worlds_keep_their_depths(capsys):
    from barsym.sim.bot_actions import bot_actions

    ys = {}
    for version in ("1.17.1", "1.18.2"):
        kb = load_kb(version)
        assert [layer.y for layer in kb.world.layers] == [64, 58, 40, 12]  # the execution worlds' calibration
        result = make_planner("symbolic", kb).plan(Goal(item="diamond", count=1))
        digs = [s for s in bot_actions(kb, result.plan.steps)["steps"] if s["action"] == "dig_down"]
        ys[version] = [d["to"]["y"] for d in digs]
    assert ys == {"1.17.1": [58, 40, 12], "1.18.2": [58, 16, -58]}


def test_before_the_flattening_items_have_todays_names_and_keep_their_ids():
    kb = load_kb("1.12.2")
    assert kb.item_ids["spruce_planks"] == ("planks", 1) and kb.item_ids["lapis_lazuli"] == ("dye", 4)
    assert kb.item_ids["charcoal"] == ("coal", 1) and kb.block_ids["oak_log"] == ("log", 0)
    assert {"honeycomb", "netherite_ingot", "blast_furnace"} <= kb.absent and "chain" not in kb.items
    # crafting recipes are the flattening's where 1.12.2 has every part (minecraft-data's own 1.12 list has no
    # bed and no wooden stairs), and none of a later item
    assert {"white_bed", "oak_stairs", "crafting_table"} <= set(kb.crafts) and "blast_furnace" not in kb.crafts
    assert not load_kb("1.16.5").item_ids  # a release after the flattening: the names are the ids


def test_a_1_12_plan_as_bot_actions_names_ids_and_metadata(capsys):
    code, out, err = run(capsys, "--mc-version", "1.12.2", "plan", "stick", "--format", "actions")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["minecraft"] == "1.12.2" and doc["ids"] == "legacy id + metadata" and doc["valid"]
    craft = doc["steps"][-1]
    assert craft["item"] == {"name": "stick", "ids": ["stick"], "metadata": [0]} and craft["crafts"] == 1
    assert set(craft["recipe"][0]["ids"]) == {"planks"} and sorted(craft["recipe"][0]["metadata"]) == [0, 1, 2, 3, 4, 5]


def test_versions_lists_what_is_installed(capsys, monkeypatch):
    monkeypatch.delenv("BARSYM_MINECRAFT_DATA", raising=False)
    code, out, err = run(capsys, "versions", "--format", "json")
    records = {r["version"]: r for r in json.loads(out)}
    assert code == 0 and {"1.8", "1.12.2", "1.16.5", "1.19.2"} <= set(records) and "1.7" not in records
    assert records["1.16.5"]["default"] and not records["1.16.5"]["fitted"]
    assert records["1.18"]["tags_and_smelting"].startswith("Articdive/ArticData 1.18.2") and records["1.18"]["fitted"]
    assert records["1.12.2"]["ids"] == "legacy id + metadata"
    code, out, err = run(capsys, "versions")
    assert code == 0 and "1.16.5  * tags and smelting: Articdive/ArticData 1.16.5" in out


def test_each_release_uses_the_newest_data_set_not_newer_than_it():
    data = default_data_dir()
    assert {v: data_set(v, data).name for v in ("1.8", "1.16.4", "1.17", "1.18.1", "1.19", "1.21.4")} == {
        "1.8": "1.16.5",
        "1.16.4": "1.16.5",
        "1.17": "1.17.1",
        "1.18.1": "1.18.2",
        "1.19": "1.19.2",
        "1.21.4": "1.20.4",
    }


def test_1_16_5_fingerprint_reads_no_other_versions_file(tmp_path):
    """A change to another version's data rebuilds that version's cache, and not 1.16.5's."""
    import shutil

    data = tmp_path / "recipes"
    shutil.copytree(default_data_dir(), data)
    assert version_files("1.16.5", data) == [] and version_files("1.19.2", data)
    before = {v: kb_cache.fingerprint(v, data) for v in ("1.16.5", "1.19.2")}
    smelting = data / "versions" / "1.19.2" / "smelting.json"
    smelting.write_text(smelting.read_text().replace('"cooking_time": 200', '"cooking_time": 100', 1))
    after = {v: kb_cache.fingerprint(v, data) for v in ("1.16.5", "1.19.2")}
    assert after["1.16.5"] == before["1.16.5"] and after["1.19.2"] != before["1.19.2"]


AUDIT = (
    "import json, sys\n"
    "opened = []\n"
    "sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event == 'open' else None)\n"
    "from barsym.cli import main\n"
    "code = main(sys.argv[2:])\n"
    "json.dump({'code': code, 'opened': opened}, open(sys.argv[1], 'w'))\n"
)


def test_a_1_16_5_plan_built_cold_opens_no_other_versions_data(tmp_path):
    out = tmp_path / "opened.json"
    env = {"BARSYM_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    argv = [sys.executable, "-c", AUDIT, str(out), "plan", "stick", "--planner", "symbolic"]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    opened = json.loads(out.read_text())["opened"]
    assert any(p.endswith("tags.json") for p in opened)  # it was built, not read from a cache
    assert [p for p in opened if "/data/recipes/versions/" in p] == []
    games = {Path(p).parent.name for p in opened if "minecraft_data" in p and "/pc/" in p and "common" not in p}
    assert games <= {"1.16", "1.16.1", "1.16.2", "1.16.5"}, games  # minecraft-data's folders of 1.16.5 only


def test_gen_articdata_reads_a_release_branch_export(tmp_path):
    """tools/gen_articdata.py --prefix: the branch exports' file names (1_19_2_recipes.json, 1_19_2_tags/...)."""
    export = tmp_path / "export"
    (export / "1_19_2_tags").mkdir(parents=True)
    recipes = {
        "minecraft:iron_ingot_from_smelting_raw_iron": {
            "type": "minecraft:smelting",
            "ingredient": {"item": "minecraft:raw_iron"},
            "result": "minecraft:iron_ingot",
            "cookingtime": 200,
        },
        "minecraft:stick": {
            "type": "minecraft:crafting_shaped",
            "key": {"#": {"tag": "minecraft:planks"}},
            "pattern": ["#", "#"],
            "result": {"item": "minecraft:stick", "count": 4},
        },
    }
    tags = {
        "minecraft:planks": {"values": ["minecraft:oak_planks", "#minecraft:more"]},
        "minecraft:more": {"values": []},
    }
    (export / "1_19_2_recipes.json").write_text(json.dumps(recipes))
    (export / "1_19_2_tags" / "1_19_2_item_tags.json").write_text(json.dumps(tags))
    script = REPO / "tools" / "gen_articdata.py"
    args = [sys.executable, str(script), str(export), str(tmp_path / "out"), "--prefix", "1_19_2_", "--source", "test"]
    subprocess.run(args, check=True, capture_output=True)
    written = json.loads((tmp_path / "out" / "smelting.json").read_text())
    assert written == {
        "source": "test",
        "recipes": [
            {
                "id": "iron_ingot_from_smelting_raw_iron",
                "result": "iron_ingot",
                "input": ["raw_iron"],
                "cooking_time": 200,
            }
        ],
    }
    tags_out = json.loads((tmp_path / "out" / "tags.json").read_text())
    assert tags_out["recipe_tags"] == ["planks"] and tags_out["tags"]["planks"] == ["oak_planks"]


def test_a_task_set_in_an_older_release_leaves_out_the_tasks_it_lacks_with_one_warning():
    from barsym.eval import load_dataset

    with pytest.warns(RuntimeWarning, match=r"5 of 53 tasks left out: they name items Minecraft 1\.12\.2 does not"):
        tasks = load_dataset("bar", load_kb("1.12.2"))
    assert len(tasks) == 48 and not {t.goal.item for t in tasks} & set(LATER)


def test_the_model_commands_say_once_that_the_adapter_was_taught_on_1_16_5(capsys):
    from barsym.commands.llm_options import note_version

    note_version(load_kb("1.16.5"))
    note_version(load_kb("1.19.2"))
    note_version(load_kb("1.19.2"))
    err = capsys.readouterr().err
    assert err == (
        "barsym: warning: the model's adapter was taught on Minecraft 1.16.5; its prompts give it 1.19.2's facts "
        "and the crafting graph checks its answers against 1.19.2\n"
    )
