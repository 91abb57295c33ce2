"""Knowledge base: minecraft-data folded into family-aware recipes, plus authored data."""

from __future__ import annotations

import json
import shutil

import pytest

from barsym.kb import DataFileError, UnknownItemError, VersionNotSupportedError, default_data_dir, load_kb
from barsym.kb.build import _fold_symbols, build_knowledge_base


def test_wood_variants_fold_into_one_recipe(kb):
    (table,) = kb.crafts["crafting_table"]
    (planks,) = table.ingredients
    assert planks.count == 4 and planks.label == "#planks"
    assert {"oak_planks", "crimson_planks", "planks"} <= set(planks.accepts)
    assert not table.needs_table  # 2x2 fits the inventory grid


def test_specific_ingredients_are_not_widened(kb):
    (stairs,) = kb.crafts["oak_stairs"]
    assert set(stairs.ingredients[0].accepts) == {"oak_planks", "planks"}
    red_dye_inputs = {r.ingredients[0].label for r in kb.crafts["red_dye"]}
    assert "dandelion" not in red_dye_inputs and {"poppy", "red_tulip"} <= red_dye_inputs


def test_list_ingredients_fold_so_one_craft_may_mix(kb):
    """minecraft-data splits the game's [sand, red_sand] into a recipe each; the game mixes them."""
    (tnt,) = kb.crafts["tnt"]
    assert {i.count: set(i.accepts) for i in tnt.ingredients} == {5: {"gunpowder"}, 4: {"red_sand", "sand"}}
    (slab,) = kb.crafts["purpur_slab"]  # 2 purpur blocks and 1 pillar make slabs
    assert [(i.count, set(i.accepts)) for i in slab.ingredients] == [(3, {"purpur_block", "purpur_pillar"})]
    (stairs,) = kb.crafts["quartz_stairs"]
    assert set(stairs.ingredients[0].accepts) == {"quartz_block", "chiseled_quartz_block", "quartz_pillar"}


def test_symbols_fold_only_when_the_recipes_are_every_combination():
    x, y, p, q = (frozenset({n}) for n in "xypq")
    one, other = (x, x, x, p, p), (y, y, y, q, q)
    assert _fold_symbols([one, other]) == [one, other]  # two recipes, not x or y with p or q
    every = [(a, a, a, b, b) for a in (x, y) for b in (p, q)]
    assert _fold_symbols(every) == [(x | y,) * 3 + (p | q,) * 2]
    assert _fold_symbols([(x,), (y,)]) == [(x,), (y,)]  # a lone position: separate recipes stay


def test_generic_planks_come_from_any_log_not_from_themselves(kb):
    (recipe,) = kb.crafts["planks"]
    assert recipe.count == 4 and "logs" in recipe.ingredients[0].accepts
    assert "logs" not in kb.crafts  # oak_wood from oak_log is not a way to make logs


def test_stations_follow_grid_size(kb):
    assert all(r.needs_table for r in kb.crafts["wooden_pickaxe"])
    assert not any(r.needs_table for r in kb.crafts["stick"])


def test_smelting_and_fuel_burn_times(kb):
    assert kb.smelts["iron_ingot"][0].input.accepts == ("iron_ore",)
    assert "logs" in kb.smelts["charcoal"][0].input.accepts
    assert kb.fuel_value("planks") == 1.5 and kb.fuel_value("oak_planks") == 1.5
    assert kb.fuel_value("stick") == 0.5 and kb.fuel_value("coal") == 8
    assert kb.fuel_value("logs") == 1.5 and kb.fuel_value("cobblestone") == 0


@pytest.mark.parametrize(
    "item,burn",
    [
        ("oak_planks", 1.5),
        ("oak_log", 1.5),
        ("oak_slab", 0.75),
        ("oak_stairs", 1.5),
        ("oak_fence", 1.5),
        ("oak_door", 1),
        ("oak_trapdoor", 1.5),
        ("oak_button", 0.5),
        ("oak_pressure_plate", 1.5),
        ("oak_sign", 1),
        ("planks", 1.5),
        ("logs", 1.5),
    ],
)
def test_overworld_wood_burns_as_documented(kb, item, burn):
    assert kb.fuel_value(item) == burn


def test_nether_wood_is_not_fuel(kb):
    """Crimson and warped wood is non-flammable: the furnace refuses it whatever tag names it."""
    nether = sorted(name for name in kb.items if name.startswith(("crimson_", "warped_")))
    assert {"crimson_planks", "warped_slab", "crimson_stem"} <= set(nether)
    assert [name for name in nether if kb.fuel_value(name) > 0] == []


def test_unknown_fuel_exclusion_is_rejected(tmp_path):
    data = _broken_copy(tmp_path, "fuels.json", lambda raw: raw["exclude"].append("#no_such_tag"))
    with pytest.raises(DataFileError, match=r"fuels.json: field 'exclude.#no_such_tag': unknown tag"):
        build_knowledge_base("1.16.5", data)


def test_sources_carry_layer_and_tool_tier(kb):
    logs, cobble, iron, diamond = (kb.sources[n] for n in ("logs", "cobblestone", "iron_ore", "diamond"))
    assert logs.layers == {0} and logs.tool_kind is None
    assert cobble.tool_kind == "pickaxe" and cobble.min_tier == 1 and 0 not in cobble.layers
    assert iron.min_tier == 2 and diamond.min_tier == 3 and diamond.layers == {3}
    assert kb.sources["leather"].kind == "kill" and kb.sources["white_wool"].origin == "sheep"


@pytest.mark.parametrize(
    "old,new",
    [
        ("wooden_slab", "oak_slab"),
        ("sign", "oak_sign"),
        ("bed", "white_bed"),
        ("log", "logs"),
        ("minecraft:stick", "stick"),
    ],
)
def test_aliases(kb, old, new):
    assert kb.resolve(old) == new


def test_deps_dialect_renames_real_items_only_when_asked(kb):
    assert kb.resolve("stone_stairs") == "stone_stairs"
    assert kb.resolve("stone_stairs", dialect="deps") == "cobblestone_stairs"
    assert kb.resolve("wooden_slab", dialect="deps") == "oak_slab"


def test_every_deps_task_object_resolves(kb):
    import json

    from testdata import DEPS_FILE

    tasks = json.loads(DEPS_FILE.read_text())
    assert len(tasks) == 70
    for task in tasks:
        assert kb.resolve(task["object"], dialect="deps")


def test_unknown_item_suggests(kb):
    with pytest.raises(UnknownItemError) as info:
        kb.resolve("diamond_pikaxe")
    assert "diamond_pickaxe" in info.value.suggestions
    assert "did you mean" in str(info.value)


def test_unknown_version():
    with pytest.raises(VersionNotSupportedError, match=r"installed: 1\.8 to 1\.19\.2 \(`barsym versions`"):
        load_kb("9.99")


def _broken_copy(tmp_path, name, mutate):
    data = tmp_path / "recipes"
    shutil.copytree(default_data_dir(), data)
    path = data / name
    raw = json.loads(path.read_text())
    mutate(raw)
    path.write_text(json.dumps(raw))
    return data


def test_malformed_data_file_names_file_and_field(tmp_path):
    def bad(raw):
        raw["resources"][0]["layers"] = "surface"

    data = _broken_copy(tmp_path, "resources.json", bad)
    with pytest.raises(DataFileError) as info:
        build_knowledge_base("1.16.5", data)
    message = str(info.value)
    assert "resources.json" in message and "resources.0.layers" in message and "valid list" in message


def test_data_file_with_unknown_item_is_rejected(tmp_path):
    data = _broken_copy(tmp_path, "aliases.json", lambda raw: raw["aliases"].update({"x": "no_such_item"}))
    with pytest.raises(DataFileError, match="no_such_item"):
        build_knowledge_base("1.16.5", data)


def test_not_json_data_file(tmp_path):
    data = tmp_path / "recipes"
    shutil.copytree(default_data_dir(), data)
    (data / "fuels.json").write_text("{ nope")
    with pytest.raises(DataFileError, match=r"fuels.json:1: not valid JSON"):
        build_knowledge_base("1.16.5", data)


def test_disk_cache_round_trip_and_invalidation(tmp_path, monkeypatch):
    monkeypatch.setenv("BARSYM_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "recipes"
    shutil.copytree(default_data_dir(), data)
    from barsym import kb as kb_module

    first = kb_module._load_uncached("1.16.5", data, True)
    assert len(list((tmp_path / "cache").glob("kb-*.json"))) == 1
    second = kb_module._load_uncached("1.16.5", data, True)
    assert second.crafts == first.crafts and second.sources == first.sources
    aliases = json.loads((data / "aliases.json").read_text())
    aliases["aliases"]["thingy"] = "stick"
    (data / "aliases.json").write_text(json.dumps(aliases))
    third = kb_module._load_uncached("1.16.5", data, True)
    assert third.resolve("thingy") == "stick"
    assert len(list((tmp_path / "cache").glob("kb-*.json"))) == 2


def test_corrupt_cache_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("BARSYM_CACHE_DIR", str(tmp_path))
    from barsym import kb as kb_module

    kb_module._load_uncached("1.16.5", default_data_dir(), True)
    for path in tmp_path.glob("kb-*.json"):
        path.write_bytes(b"garbage")
    with pytest.warns(RuntimeWarning, match="not using the knowledge-base cache"):
        assert kb_module._load_uncached("1.16.5", default_data_dir(), True).resolve("stick") == "stick"


def test_runtime_code_never_reads_shared_folder():
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "barsym"
    offenders = [p for p in src.rglob("*.py") if "../shared" in p.read_text() or "shared/datasets" in p.read_text()]
    assert offenders == []


def test_generated_files_match_the_generator(tmp_path):
    """data/recipes/tags.json and smelting.json are exactly what tools/gen_articdata.py writes."""
    import subprocess
    import sys

    from testdata import DATASETS

    raw = DATASETS / "articdata-1.16.5"
    if not raw.is_dir():  # ArticData's raw files are the converter's input; barsym ships its output only
        pytest.skip(f"ArticData's raw files (not shipped with barsym) not found at {raw}; set BARSYM_DATASETS")
    repo = default_data_dir().parents[1]
    script = repo / "tools" / "gen_articdata.py"
    subprocess.run(
        [sys.executable, str(script), str(DATASETS / "articdata-1.16.5"), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for name in ("tags.json", "smelting.json"):
        assert (tmp_path / name).read_text() == (default_data_dir() / name).read_text()
