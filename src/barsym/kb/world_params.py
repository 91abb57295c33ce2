"""The stochastic execution world's parameters, as read from ``data/recipes/world.json``.

These are not game facts (those come from minecraft-data: hardness, dig
speeds, durability; and from smelting.json: cooking times) but the numbers a
world model needs on top of them: how long it takes to find a resource where
the agent is, how often a controller fails a step, how long an episode may
last. Each one has its source or reasoning in the data file; here they are
plain frozen dataclasses so that the knowledge-base cache stores them with the
rest and a warm start needs no pydantic.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class LayerModel:
    """A depth layer: its y level, how fast the agent scans blocks there, and the budget of plans that end there."""

    name: str
    y: int
    scan_rate: float  # blocks the agent examines per tick while searching on this layer
    budget: int  # episode budget (ticks) of a plan whose deepest layer is this one


@dataclass(frozen=True, slots=True)
class ResourceModel:
    """How a raw resource is found and how much one block gives.

    Finds arrive as a Poisson process: the agent examines ``scan_rate`` blocks
    per tick, a fraction ``density`` of them hold the resource, and they come
    in clusters of ``cluster`` blocks on average, so the wait for the next
    cluster is exponential with mean ``cluster / (density * scan_rate)``: the
    rarer the resource where the agent is, the longer the wait.
    """

    density: float
    cluster: float
    drops: tuple[int, int] = (1, 1)  # units one block drops, uniform between the two
    chance: float = 1.0  # probability that a block drops anything (flint from gravel: 0.1)

    @property
    def mean_yield(self) -> float:
        return self.chance * (self.drops[0] + self.drops[1]) / 2

    def mean_search(self, scan_rate: float) -> float:
        """Mean ticks until the next cluster is found."""
        return self.cluster / (self.density * scan_rate)


@dataclass(frozen=True, slots=True)
class MobModel:
    """A mob to hunt: how long until one is met, how hard it is to kill, how often it gets away, what it drops."""

    health: int
    encounter_ticks: float
    escape: float
    drops: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass(frozen=True)
class WorldModel:
    layers: tuple[LayerModel, ...]
    dig_blocks_per_level: int
    dig_ticks_per_level: int
    soil_levels: int
    soil_block: str
    rock_block: str
    break_delay: int
    use_ticks: int  # a unit gathered without breaking a block: a bucket filled, a cow milked
    craft_step_ticks: int
    craft_batch_ticks: int
    smelt_step_ticks: int
    hit_ticks: int
    chase_ticks: int
    give_up_after: int
    controller: dict[str, float]  # step type value (mine, craft, ...) -> failure probability per step
    resources: dict[str, ResourceModel]
    default_surface: ResourceModel
    default_underground: ResourceModel
    mobs: dict[str, MobModel]

    def resource(self, item: str, layer: int) -> ResourceModel:
        """The search model of ``item``; resources the file does not list get the defaults of the layer."""
        found = self.resources.get(item)
        if found is not None:
            return found
        return self.default_surface if layer == 0 else self.default_underground

    def budget(self, deepest_layer: int) -> int:
        return self.layers[min(max(deepest_layer, 0), len(self.layers) - 1)].budget
