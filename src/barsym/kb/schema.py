"""Pydantic schemas of the authored data files under ``data/recipes/``.

Game facts that minecraft-data lacks live in JSON, not in code. Each file is
validated on load so that a typo fails loudly with the file name, the field
path and what was expected, instead of silently producing a wrong planner.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .errors import DataFileError


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TagsFile(_Strict):
    source: str
    recipe_tags: list[str]
    tags: dict[str, list[str]]


class SmeltingEntry(_Strict):
    id: str
    result: str
    input: list[str] = Field(min_length=1)
    cooking_time: int = Field(gt=0)


class SmeltingFile(_Strict):
    source: str
    recipes: list[SmeltingEntry]


class GenericFamily(_Strict):
    tag: str
    default: str


class FamiliesFile(_Strict):
    about: str = ""
    generic: dict[str, GenericFamily]
    prefer: list[str] = []


class FuelsFile(_Strict):
    about: str = ""
    fuels: dict[str, float]
    #: items or #tags that never burn, whatever fuel entry names them (the game's non-flammable wood)
    exclude: list[str] = []
    preference: list[str] = []

    @field_validator("fuels")
    @classmethod
    def _positive(cls, value: dict[str, float]) -> dict[str, float]:
        for name, burn in value.items():
            if burn <= 0:
                raise ValueError(f"burn time of {name!r} must be > 0, got {burn}")
        return value


class ToolsFile(_Strict):
    about: str = ""
    tiers: dict[str, int]
    kinds: list[str]
    dig_down_kind: str


class ResourceEntry(_Strict):
    item: str
    block: str
    layers: list[int] = Field(min_length=1)
    tool: str | None = None
    uses: dict[str, int] = {}  # items each unit consumes (a bucket filled at water)

    @field_validator("uses")
    @classmethod
    def _positive_uses(cls, value: dict[str, int]) -> dict[str, int]:
        for name, count in value.items():
            if count < 1:
                raise ValueError(f"uses {name!r}: a count of at least 1, got {count}")
        return value


class ResourcesFile(_Strict):
    about: str = ""
    layers: list[str] = Field(min_length=1)
    resources: list[ResourceEntry]


class MobDropEntry(_Strict):
    item: str
    mob: str
    layers: list[int] = Field(min_length=1)


class InteractionEntry(_Strict):
    item: str
    mob: str
    layers: list[int] = Field(min_length=1)
    uses: dict[str, int] = {}
    about: str = ""


class MobsFile(_Strict):
    about: str = ""
    drops: list[MobDropEntry]
    interactions: list[InteractionEntry] = []


class LootFile(_Strict):
    about: str = ""
    loot: dict[str, str]


class ExtraRecipe(_Strict):
    result: str
    count: int = Field(ge=1)
    ingredients: dict[str, int] = Field(min_length=1)  # item or #tag -> units per craft
    grid: str = Field(pattern=r"^(2x2|3x3)$")


class ExtraRecipesFile(_Strict):
    about: str = ""
    recipes: list[ExtraRecipe]


class PlayerName(_Strict):
    item: str
    source: str


class AliasesFile(_Strict):
    about: str = ""
    aliases: dict[str, str]
    dialects: dict[str, dict[str, str]] = {}
    about_players: str = ""
    players: dict[str, PlayerName] = {}


class RuleProfileEntry(_Strict):
    about: str = ""
    gather: bool
    table_at_hand: bool
    furnace_needed: bool
    fuel_needed: bool
    generic_names: bool
    climb: bool
    durability: bool = False


class RulesFile(_Strict):
    about: str = ""
    default: str
    profiles: dict[str, RuleProfileEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _known_default(self) -> "RulesFile":
        if self.default not in self.profiles:
            raise ValueError(f"default profile {self.default!r} is not one of {', '.join(sorted(self.profiles))}")
        return self


# ---- world.json: the stochastic execution world's parameters -------------------------------------
#: every group of numbers in world.json says where it comes from or why it is what it is
Why = Field(min_length=10, description="the source of the numbers, or the reasoning for them")


class WorldLayer(_Strict):
    name: str
    y: int = Field(ge=0, le=255)
    scan_rate: float = Field(gt=0, le=1000)
    budget: int = Field(gt=0, le=1_000_000)
    why: str = Why


class DigDown(_Strict):
    blocks_per_level: int = Field(ge=1, le=16)
    ticks_per_level: int = Field(ge=0, le=1000)
    soil_levels: int = Field(ge=0, le=64)
    soil_block: str
    rock_block: str
    why: str = Why


class StepTicks(_Strict):
    ticks_per_step: int = Field(ge=0, le=10_000)
    ticks_per_batch: int = Field(default=0, ge=0, le=10_000)
    why: str = Why


class Mining(_Strict):
    delay_ticks: int = Field(ge=0, le=100)
    use_ticks: int = Field(ge=0, le=1000)
    why: str = Why


class Hunting(_Strict):
    ticks_per_hit: int = Field(ge=1, le=100)
    chase_ticks: int = Field(ge=0, le=10_000)
    give_up_after: int = Field(ge=1, le=100)
    why: str = Why


class Controller(_Strict):
    mine: float = Field(ge=0, lt=1)
    craft: float = Field(ge=0, lt=1)
    smelt: float = Field(ge=0, lt=1)
    kill: float = Field(ge=0, lt=1)
    dig_down: float = Field(ge=0, lt=1)
    climb_up: float = Field(ge=0, lt=1)
    why: str = Why


class WorldResource(_Strict):
    density: float = Field(gt=0, le=1)
    cluster: float = Field(ge=1, le=10_000)
    drops: tuple[int, int] = (1, 1)
    chance: float = Field(default=1.0, gt=0, le=1)
    why: str = Why

    @field_validator("drops")
    @classmethod
    def _range(cls, value: tuple[int, int]) -> tuple[int, int]:
        if not 1 <= value[0] <= value[1] <= 64:
            raise ValueError(f"drops must be [min, max] with 1 <= min <= max <= 64, got {list(value)}")
        return value


class WorldMob(_Strict):
    health: int = Field(ge=1, le=1000)
    encounter_ticks: float = Field(gt=0, le=100_000)
    escape: float = Field(ge=0, lt=1)
    drops: dict[str, tuple[int, int]]
    why: str = Why

    @field_validator("drops")
    @classmethod
    def _ranges(cls, value: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
        for item, (low, high) in value.items():
            if not 0 <= low <= high or high < 1 or high > 64:
                raise ValueError(f"drops of {item!r} must be [min, max] with 0 <= min <= max, 1 <= max <= 64")
        return value


class WorldFile(_Strict):
    about: str
    layers: list[WorldLayer] = Field(min_length=1)
    dig_down: DigDown
    mining: Mining
    crafting: StepTicks
    smelting: StepTicks
    hunting: Hunting
    controller: Controller
    resources: dict[str, WorldResource]
    default_surface: WorldResource
    default_underground: WorldResource
    mobs: dict[str, WorldMob]

    @model_validator(mode="after")
    def _deeper_layers_lower(self) -> "WorldFile":
        ys = [layer.y for layer in self.layers]
        if any(a <= b for a, b in zip(ys, ys[1:])):
            raise ValueError(f"layers must go deeper one after the other (y decreasing), got y {ys}")
        return self


class VersionSet(_Strict):
    """A data set: tags.json and smelting.json of one ArticData release, used from ``first`` on."""

    first: str = Field(pattern=r"^1\.\d{1,2}(\.\d{1,2})?$")
    folder: str
    source: str


class ChangedResource(ResourceEntry):
    like: str | None = None  # the execution world treats it as this resource of world.json (raw_iron as iron_ore)


class VersionChange(_Strict):
    """What a release changed in where things are found, from ``since`` on (resources.json is 1.16's)."""

    since: str = Field(pattern=r"^1\.\d{1,2}(\.\d{1,2})?$")
    about: str
    remove: list[str] = []  # items no longer mined as resources.json says (iron ore drops raw iron)
    resources: list[ChangedResource] = []
    silk_touch: list[str] = []  # of the removed, what a Silk Touch pickaxe still mines whole (not planned)
    layers_y: dict[str, int] = {}  # the y a bot finds a layer at, where the release moved it (1.18's deeper ores)


class VersionsFile(_Strict):
    about: str = ""
    authored: str  # the version every other data file is written for: its names are checked strictly
    pre_flattening_recipes: str  # whose crafting recipes versions before 1.13 use (see barsym.kb.legacy)
    sets: dict[str, VersionSet] = Field(min_length=1)
    changes: list[VersionChange] = []


#: file name -> schema; the loader reads exactly these files.
DATA_FILES: dict[str, type[BaseModel]] = {
    "tags.json": TagsFile,
    "smelting.json": SmeltingFile,
    "families.json": FamiliesFile,
    "fuels.json": FuelsFile,
    "tools.json": ToolsFile,
    "resources.json": ResourcesFile,
    "mobs.json": MobsFile,
    "aliases.json": AliasesFile,
    "rules.json": RulesFile,
    "loot.json": LootFile,
    "extra_recipes.json": ExtraRecipesFile,
    "world.json": WorldFile,
    "versions.json": VersionsFile,
}

M = TypeVar("M", bound=BaseModel)


def load_data_file(path: Path, schema: type[M]) -> M:
    """Read and validate one data file; errors name the file, field and expectation."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataFileError(f"{path}: cannot read data file ({exc.strerror})") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFileError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    try:
        return schema.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err["loc"]) or "(top level)"
            problems.append(f"field '{where}': {err['msg']} (got {err.get('input')!r:.60})")
        raise DataFileError(f"{path}: " + "; ".join(problems)) from None
