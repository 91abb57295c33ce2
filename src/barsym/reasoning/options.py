"""The options of the LLM planners, as pydantic models: what ``make_planner`` accepts, and what the CLI offers.

Each LLM planner's factory names the models it takes (``factory.options``), so the registry can
refuse a key no planner would read instead of dropping it unseen, and the command line is
generated from the same fields (:mod:`barsym.commands.options`): one range, one default, one help.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..llm.settings import ModelSettings
from ..planner.selector import SELECTORS
from .bar_decomposer import DEFAULT_MODE, RETRY_TEMPERATURE

MAX_RETRIES = 20


class PlannerLLMOptions(ModelSettings):
    """The model's settings plus how an LLM planner asks it (retries: bar, llm-only, bar-sc; facts: all of them)."""

    llm_mode: Literal["graph", "vocab"] = Field(
        DEFAULT_MODE,
        description="graph: only steps that can make the goal; vocab: any step over the game's vocabulary",
        json_schema_extra={"metavar": "MODE"},
    )
    max_retries: int = Field(
        2,
        ge=0,
        le=MAX_RETRIES,
        description="answers sent back with the verifier's objections before the symbolic fallback",
        json_schema_extra={"metavar": "N"},
    )
    retry_temperature: float = Field(
        RETRY_TEMPERATURE,
        ge=0,
        le=5,
        allow_inf_nan=False,
        description="sampling temperature after a refused answer, so a retry can "
        "differ from it (seeded, so still reproducible)",
        json_schema_extra={"metavar": "T"},
    )
    facts: bool = Field(
        True,
        description="leave the knowledge base's facts out of the prompts (the papers' prompts; "
        "by default bar is told how its goal is made, deps and cot how every item of the task is)",
        json_schema_extra={"flag": "--no-facts"},
    )


class DepsOptions(BaseModel):
    """What only the deps planner takes: its replanning rounds and the world it executes its plans in."""

    model_config = ConfigDict(extra="forbid")

    deps_rounds: int | None = Field(
        None,
        ge=0,
        le=20,
        description="deps: replanning rounds after executing the plan (0: plan once; default 5)",
        json_schema_extra={"metavar": "N"},
    )
    feedback_world: Literal["deterministic", "stochastic"] | None = Field(
        None,
        description="deps: the world its plans are executed in between rounds (default stochastic)",
        json_schema_extra={"metavar": "NAME"},
    )
    selector: Literal[SELECTORS] | None = Field(  # type: ignore[valid-type]
        None,
        description="deps: who picks among a plan's steps that can run at once when it is executed: "
        "order (the plan as written, default), random, graph (the crafting graph's cost) or horizon (DEPS' "
        "learned horizon model)",
        json_schema_extra={"metavar": "NAME"},
    )
