"""The options of the LLM planners, as pydantic models: what ``make_planner`` accepts, and what the CLI offers.

They are the parts of a :class:`~barsym.reasoning.spec.PlannerSpec` (which names the ones each
planner takes, :data:`~barsym.reasoning.spec.OWN_MODELS`, so a key no planner would read is refused
instead of dropped unseen), and the command line is generated from the same fields
(:mod:`barsym.commands.options`): one range, one default, one help. :func:`barsym.reasoning.spec.choose`
decides which of them a planner is handed, as one typed :class:`~barsym.reasoning.spec.PlannerSpec`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..llm.settings import ModelSettings
from ..planner.selector import SELECTORS
from .loop_limits import BASELINE_DEADLINE, DEFAULT_DEADLINE

MAX_RETRIES = 20
#: how BAR's decomposer asks (defined here, with the options, so that reading the options -- every
#: command's arguments -- does not load the decomposer)
MODES = ("vocab", "graph")
#: graph mode by default: over BAR's 53 tasks with the embedded 135M model, vocab-mode answers
#: are accepted for 0.1 % of the goals (median 34 s per task), graph-mode answers for 65 %
#: (46.5 % first try, 18.7 % after feedback; median 6.8 s per task).
DEFAULT_MODE = "graph"
#: Retries sample instead of decoding greedily: a greedy model repeats the answer just refused
#: (53 tasks, graph mode: 0 % of goals accepted after feedback greedily, 18.7 % at 0.8).
#: Sampling is seeded, so a run is still reproducible.
RETRY_TEMPERATURE = 0.8


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
    facts: bool | None = Field(
        None,
        description="bar, llm-only, bar-sc: tell the model how its goal is made (the knowledge base's facts in the "
        "prompts); by default it is not told (the papers' prompts: the taught model knows the game, the graph "
        "checks); deps, cot and the other baselines take no facts (a prompt that spells out the answer measures "
        "the prompt, not the model)",
        json_schema_extra={"flag": "--facts"},
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


class ForwardOptions(BaseModel):
    """What the forward planners (deps, cot) take: how long one plan may take (:mod:`.loop_limits`)."""

    model_config = ConfigDict(extra="forbid")

    deadline: float | None = Field(
        None,
        gt=0,
        le=86400,
        allow_inf_nan=False,
        description="deps, cot and the four added baselines: seconds one plan may take; no model call starts after "
        f"it and each reply is capped to the time left (default {DEFAULT_DEADLINE:g} for deps and cot, "
        f"{BASELINE_DEADLINE:g} for reverse-chain, self-refine, tot and plan-and-solve)",
        json_schema_extra={"metavar": "S"},
    )


class BaselineOptions(BaseModel):
    """What only self-refine and tot take: refinement rounds, and the tree's breadth and beam."""

    model_config = ConfigDict(extra="forbid")

    refine_rounds: int | None = Field(
        None,
        ge=0,
        le=10,
        description="self-refine: rounds of the model's feedback and a refined plan after the first plan "
        "(0: plan once; default 3)",
        json_schema_extra={"metavar": "N"},
    )
    tot_breadth: int | None = Field(
        None,
        ge=1,
        le=8,
        description="tot: next steps the model proposes for each kept partial plan (default 3)",
        json_schema_extra={"metavar": "N"},
    )
    tot_beam: int | None = Field(
        None,
        ge=1,
        le=8,
        description="tot: partial plans kept at each depth, the best rated (default 2)",
        json_schema_extra={"metavar": "N"},
    )


#: which planner each of BaselineOptions' fields belongs to
BASELINE_OWNERS = {"refine_rounds": "self-refine", "tot_breadth": "tot", "tot_beam": "tot"}
