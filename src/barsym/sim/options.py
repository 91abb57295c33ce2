"""Which execution world a plan runs in, how often, from which seed and with what budget, as one model.

``barsym execute``, ``barsym eval --world`` and ``barsym memory build`` take these; their options
are generated from the fields (:mod:`barsym.commands.options`), so every range is stated here once.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .stochastic import StochasticWorld
from .world import SEED_MASK, DeterministicWorld

WORLDS = {"deterministic": DeterministicWorld, "stochastic": StochasticWorld}
MAX_RUNS = 100_000
#: BAR's longest episode limit is 16,000 ticks (13 min); a million (14 hours of game time) is far past any task
MAX_BUDGET = 1_000_000
DEFAULT_RUNS = {"deterministic": 1, "stochastic": 100}


class ExecutionOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    world: Literal["deterministic", "stochastic"] | None = Field(
        "stochastic",
        description="deterministic (the simulator: valid plans always work) or stochastic (break "
        "times, tool wear, search times, controller failures, an episode budget)",
        json_schema_extra={"metavar": "NAME"},
    )
    runs: int | None = Field(
        None,
        ge=1,
        le=MAX_RUNS,
        description="episodes per plan (default 100 in the stochastic world, 1 in the deterministic one)",
        json_schema_extra={"metavar": "N"},
    )
    world_seed: int = Field(
        0,
        ge=0,
        le=SEED_MASK,
        description="seed of the runs: the same seed gives the same results in any process",
        json_schema_extra={"metavar": "S"},
    )
    budget: int | None = Field(
        None,
        ge=1,
        le=MAX_BUDGET,
        description="episode budget in ticks (20 per second) "
        "for every plan (default: the world's budget for the deepest layer the plan works "
        "on; the deterministic world has none)",
        json_schema_extra={"metavar": "TICKS"},
    )

    @model_validator(mode="after")
    def _a_world_to_run_in(self) -> "ExecutionOptions":
        for name in ("runs", "budget"):
            if self.world is None and name in self.model_fields_set:
                raise ValueError(f"--{name} needs --world deterministic or --world stochastic")
        return self

    def make_world(self, kb, rules=None):
        """The world these options name (None: no execution)."""
        return None if self.world is None else WORLDS[self.world](kb, rules)

    def execute(self, plan, world, start=None, on_episode=None):
        """Play ``plan`` in ``world`` as these options say: ``episodes`` runs from ``world_seed``, within ``budget``."""
        from .execution import run

        return run(plan, world, self.episodes, self.world_seed, start=start, budget=self.budget, on_episode=on_episode)

    @property
    def episodes(self) -> int:
        """``runs``, or the world's own default."""
        return DEFAULT_RUNS[self.world or "stochastic"] if self.runs is None else self.runs
