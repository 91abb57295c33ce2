"""One grounded action schema: only the rule book works out what an action needs.

``barsym.kb.Rules.action`` / ``ways`` / ``dig`` (kb/actions.py) say what a craft,
smelt, mine, kill or dig down needs and makes under a rule profile. Every other
module reads an :class:`~barsym.kb.Action`. :func:`test_no_module_outside_the_rule_book_computes_needs`
scans ``src/barsym`` outside ``kb/`` (with :mod:`ast`, so comments and strings
do not count) and fails on any of:

- a recipe's or a source's parts read directly: the attributes ``ingredients``,
  ``min_tier``, ``tool_kind`` (on anything);
- the knowledge base's action tables read directly: ``kb.crafts``, ``kb.smelts``,
  ``kb.sources``, ``kb.fuels``, ``kb.tools``, ``kb.fuel_preference`` (on a name
  ``kb`` or an attribute ``.kb``);
- the rule pieces that compute needs called directly: ``batches(...)``,
  ``needs_table(...)``, ``gather_uses(...)``;
- the dig-down tier as a bare number: ``dig_down_kind, 1`` as two arguments of one call.

``ALLOWED`` lists the files still exempt, each with why.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from barsym.kb import DIG_DOWN_TIER, Rules
from barsym.model import Goal
from barsym.planner.registry import graph_for
from barsym.planner.symbolic import SymbolicDecomposer
from barsym.reasoning.grammars.reply_grammar import GrammarBuilder

SRC = Path(__file__).resolve().parents[1] / "src" / "barsym"
PARTS = {"ingredients", "min_tier", "tool_kind"}
TABLES = {"crafts", "smelts", "sources", "fuels", "tools", "fuel_preference"}
CALLS = {"batches", "needs_table", "gather_uses"}
#: file (relative to src/barsym) -> why it may still read the pieces
ALLOWED = {
    "memory/examples.py": "memory/ belongs to another work stream; its recipe signature is a similarity key, "
    "not a need",
}


def _kb_like(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "kb") or (isinstance(node, ast.Attribute) and node.attr == "kb")


def violations(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            if node.attr in PARTS:
                found.append((node.lineno, f".{node.attr}"))
            elif node.attr in TABLES and _kb_like(node.value):
                found.append((node.lineno, f"kb.{node.attr}"))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in CALLS:
                found.append((node.lineno, f"{name}()"))
            args = node.args
            for a, b in zip(args, args[1:]):
                if (
                    isinstance(a, ast.Attribute)
                    and a.attr == "dig_down_kind"
                    and isinstance(b, ast.Constant)
                    and isinstance(b.value, int)
                ):
                    found.append((node.lineno, "dig_down_kind with a bare tier"))
    return found


def test_no_module_outside_the_rule_book_computes_needs():
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("kb/") or rel in ALLOWED:
            continue
        wrong += [f"{rel}:{line}: reads {what}" for line, what in violations(path.read_text(encoding="utf-8"))]
    assert wrong == [], "ask Rules.action / ways / dig (kb/actions.py) instead:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "snippet, what",
    [
        ("n = sum(i.count for i in recipe.ingredients)", ".ingredients"),
        ("t = source.min_tier", ".min_tier"),
        ("s = self.kb.sources[item]", "kb.sources"),
        ("r = kb.crafts.get(item)", "kb.crafts"),
        ("f = self.kb.fuels", "kb.fuels"),
        ("runs = batches(count, 4)", "batches()"),
        ("ok = rules.is_tool(name, kb.dig_down_kind, 1)", "dig_down_kind with a bare tier"),
    ],
)
def test_the_scan_sees_each_kind_of_violation(snippet, what):
    assert [w for _, w in violations(snippet)] == [what]


def test_the_scan_lets_schema_reads_pass():
    assert (
        violations(
            "a = rules.action('craft', 'stick', 8)\nn = sum(s.count for s in a.needs)\n"
            "t = a.tool.tier if a.tool else None\n"
        )
        == []
    )


# ---- the schema itself, per profile ---------------------------------------------------------
def test_a_craft_runs_whole_batches_and_names_its_station(kb):
    sticks = Rules(kb).action("craft", "stick", 8)
    assert (sticks.runs, sticks.makes, [s.count for s in sticks.needs], sticks.station) == (2, 8, [4], None)
    pickaxe = Rules(kb).action("craft", "stone_pickaxe", 1)
    assert pickaxe.station == "crafting_table" and sorted(s.count for s in pickaxe.needs) == [2, 3]


def test_smelting_needs_a_furnace_and_fuel_only_where_the_profile_says(kb):
    survival = Rules(kb).action("smelt", "iron_ingot", 3)
    crafting = Rules(kb, "crafting").action("smelt", "iron_ingot", 3)
    assert (survival.station, survival.fuel) == ("furnace", 3.0)
    assert (crafting.station, crafting.fuel) == (None, 0.0)


def test_gathering_and_digging(kb):
    diamond = Rules(kb).action("mine", "diamond", 2)
    assert diamond.tool.kind == "pickaxe" and diamond.tool.tier == 3 and diamond.layer == 3
    assert "iron_pickaxe" in diamond.tool.options and "stone_pickaxe" not in diamond.tool.options
    dig = Rules(kb).dig(2)
    assert (dig.layer, dig.reaches, dig.tool.tier) == (1, 2, DIG_DOWN_TIER)
    with pytest.raises(KeyError):
        Rules(kb, "crafting").action("mine", "diamond", 1)
    assert [a.kind for a in Rules(kb, "crafting").ways("diamond")] == ["craft", "smelt"]


# ---- the reply grammar follows the profile ----------------------------------------------------
def builder(kb, profile):
    rules = Rules(kb, profile)
    graph = graph_for(kb, rules)
    return GrammarBuilder(kb, graph, conventions=SymbolicDecomposer(kb, graph=graph, prefer=kb.prefer, rules=rules))


def test_under_crafting_rules_the_grammar_offers_no_furnace_fuel_mining_or_digging(kb):
    crafting, survival = builder(kb, "crafting"), builder(kb, "survival")
    smelt = crafting.for_goal(Goal(item="iron_ingot", count=3))
    assert smelt is not None and "furnace" not in smelt.text and "planks" not in smelt.text
    assert "furnace" in survival.for_goal(Goal(item="iron_ingot", count=3)).text
    assert crafting.for_goal(Goal(item="oak_log", count=1)) is None  # no mining: only the inventory has logs
    assert crafting.for_goal(Goal(item="layer:1", count=1)) is None
    assert "dig down" not in crafting.vocab() and '"mine"' not in crafting.vocab()
    assert "dig down" in survival.vocab()


# ---- the LLM planners run under the crafting rules ------------------------------------------------
def test_bar_plans_under_crafting_rules_with_the_models_answers(kb):
    from barsym.llm import ScriptedLLM
    from barsym.planner import make_planner
    from barsym.sim import State

    fake = ScriptedLLM(["craft 4 stick: 2 oak_planks", "craft 2 oak_planks: 1 oak_log"])
    planner = make_planner("bar", kb, rules="crafting", backend=fake, log=False)
    result = planner.plan(Goal(item="stick", count=4), State.start({"oak_log": 1}))
    assert [str(s) for s in result.plan.steps] == ["craft 2 oak_planks", "craft 4 stick"]
    assert result.validation.valid and fake.remaining == 0
    assert [n.decomposition.provenance for n in result.nodes if n.decomposition] == ["llm", "llm"]
    system = fake.calls[0].messages[0]["content"]
    assert "crafting tasks" in system and "layer" not in system  # the profile's prompt, no mining examples
    assert not any("mine " in m["content"] or "dig down" in m["content"] for m in fake.calls[0].messages)


def test_bar_under_crafting_rules_falls_back_to_the_inventory_search_when_the_model_is_wrong(kb):
    from barsym.llm import ScriptedLLM
    from barsym.planner import make_planner
    from barsym.sim import State

    fake = ScriptedLLM(["craft 1 oak_planks: 1 oak_log"] * 20)  # never the goal: every answer is refused
    planner = make_planner("bar", kb, rules="crafting", backend=fake, log=False)
    result = planner.plan(Goal(item="stick", count=4), State.start({"oak_log": 1}))
    assert result.validation.valid and [str(s) for s in result.plan.steps][-1] == "craft 4 stick"


def test_bar_under_crafting_rules_needs_no_crafting_table_for_a_3x3_recipe(kb):
    """The planner's own check of each answer plays by the profile too (no table: the 3x3 grid is at hand)."""
    from barsym.llm import ScriptedLLM
    from barsym.planner import make_planner
    from barsym.sim import State

    fake = ScriptedLLM(["craft 1 chest: 8 oak_planks"])
    planner = make_planner("bar", kb, rules="crafting", backend=fake, log=False)
    result = planner.plan(Goal(item="chest", count=1), State.start({"oak_planks": 8}))
    assert [str(s) for s in result.plan.steps] == ["craft 1 chest"] and result.validation.valid
    assert result.stats.plan_fallback is None
    assert [n.decomposition.provenance for n in result.nodes if n.decomposition] == ["llm"]
