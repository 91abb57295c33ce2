"""How state consistency runs (BAR module b): the configuration the library and the command line share.

One pydantic model states every option's range once; ``barsym plan --consistency``,
``bar-sc`` and ``make_planner`` read it, and the CLI's flags are generated from
its fields (:mod:`barsym.commands.options`).
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_K",
    "DEFAULT_ROUNDS",
    "DEFAULT_SCORE_METHOD",
    "DEFAULT_T",
    "MAX_K",
    "MAX_ROUNDS",
    "AnchorMethod",
    "NeedSource",
    "ConsistencyConfig",
    "RepairerKind",
    "ScoreMethod",
    "ScoreSource",
]

#: the largest number of anchors kept (k) by default
DEFAULT_K = 3
DEFAULT_T = 5


class AnchorMethod(str, Enum):
    STEP_SCORING = "step-scoring"
    SLIDING_WINDOW = "sliding-window"


class ScoreSource(str, Enum):
    """Which scores pick the step-scoring anchors; ``both`` is their minimum (see scores.combine)."""

    SIMULATOR = "simulator"
    LLM = "llm"
    BOTH = "both"


class ScoreMethod(str, Enum):
    """How the model's score is read (:mod:`barsym.reasoning.scoring.step_scorer`): one generated digit, the
    expected digit, or P(yes) to "can this step be done now?", with or without the state's facts
    (``yes-state``: the facts alone, without the plan; ``yes-needs``: each need beside what the player
    has of it; ``yes-recall``: the plan so far and the state, never what the step needs, which the model
    must know -- so its verdict is a cross-check of the simulator's, not a reading of it; ``recall-check``:
    the model says what the step needs, in the decomposer's own question, and the state is compared
    with its reply by arithmetic)."""

    DIGIT = "digit"
    EXPECTED = "expected"
    YES = "yes"
    YES_FACTS = "yes-facts"
    YES_STATE = "yes-state"
    YES_NEEDS = "yes-needs"
    YES_RECALL = "yes-recall"
    RECALL_CHECK = "recall-check"

    @property
    def needs_probabilities(self) -> bool:
        return self not in (ScoreMethod.DIGIT, ScoreMethod.RECALL_CHECK)

    @property
    def needs_rules(self) -> bool:
        """Whether the prompt shows facts from the rule book and the simulator."""
        return self in (
            ScoreMethod.YES_FACTS,
            ScoreMethod.YES_STATE,
            ScoreMethod.YES_NEEDS,
            ScoreMethod.YES_RECALL,
            ScoreMethod.RECALL_CHECK,
        )


#: what ``--scores llm`` / ``both`` read unless told otherwise or the model declares its own: the best
#: for the embedded model on the labelled step set (bench/bench_step_scores.py, docs/step-scores.md)
DEFAULT_SCORE_METHOD = ScoreMethod.EXPECTED

DEFAULT_ROUNDS = 3
MAX_ROUNDS = 20
#: the longest window from an anchor (and the scores' lookahead) anyone asks for; past it a window is the plan
MAX_K = 50


class RepairerKind(str, Enum):
    LLM = "llm"
    SYMBOLIC = "symbolic"


class NeedSource(str, Enum):
    """Who plans what a repair window is missing (:meth:`~barsym.consistency.needs.NeedPlanner.steps_for`).

    ``graph``: the symbolic planner, over the rule book. ``model``: the model's own backward decomposition
    (``llm-only``'s: no verifier, no fallback) from the state the window is at; the simulator plays it and
    only a plan that runs is offered. With ``model`` the knowledge in a repair is the model's and the
    arithmetic (what is short, by how much) the simulator's: BAR's module (b) without a graph to lean on."""

    GRAPH = "graph"
    MODEL = "model"


class ConsistencyConfig(BaseModel):
    """How state consistency runs: the library's configuration, and what ``--anchors`` ... ``--repair-rounds``
    are generated from (one range for both)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    anchors: AnchorMethod = Field(
        AnchorMethod.STEP_SCORING,
        description="step-scoring: every step scored below "
        "T starts a pair; sliding-window: pairs of K steps at seeded random offsets",
        json_schema_extra={"metavar": "METHOD"},
    )
    scores: ScoreSource = Field(
        ScoreSource.SIMULATOR,
        description="who scores the steps: the simulator, the LLM, or both (the lower score)",
        json_schema_extra={"metavar": "SOURCE"},
    )
    t: int = Field(DEFAULT_T, ge=1, le=10, description="score threshold of an anchor")
    k: int = Field(
        DEFAULT_K, ge=1, le=MAX_K, description="steps from a start anchor to its end anchor, and the scores' lookahead"
    )
    repairer: RepairerKind = Field(
        RepairerKind.SYMBOLIC,
        description="llm: the model proposes each next step "
        "among those that apply; symbolic: the symbolic planner plans what is missing",
        json_schema_extra={"metavar": "KIND"},
    )
    fallback: bool = Field(
        True,
        description="the llm repairer without the symbolic fallback for windows it does not finish",
        json_schema_extra={"flag": "--no-fallback"},
    )
    needs: NeedSource = Field(
        NeedSource.GRAPH,
        description="who plans what a window is missing: graph (the symbolic planner) or model (the model's "
        "own backward decomposition from the state there, played by the simulator; with --no-fallback the "
        "repair then uses no plan of the graph's)",
        json_schema_extra={"flag": "--repair-needs", "metavar": "SOURCE"},
    )
    rounds: int = Field(
        DEFAULT_ROUNDS,
        ge=1,
        le=MAX_ROUNDS,
        description="repair rounds at most (score, anchor, repair, splice)",
        json_schema_extra={"flag": "--repair-rounds", "metavar": "N"},
    )
    seed: int = Field(0, ge=0, description="the sliding window's seed")
    score_method: ScoreMethod | None = Field(
        None,
        description="how the model's scores are read: digit (one "
        "generated 1-10), expected (the expected digit), yes (P(yes) to 'can "
        "this step be done now?'), yes-facts (the same with the state and the "
        "step's needs), yes-state (the state, the step and its needs without the plan), "
        "yes-needs (as yes-facts, each need beside what the player has of it), "
        "yes-recall (the plan so far and the state, not the step's needs: the model must know them), "
        "recall-check (the model says what the step needs, as the decomposer asks it; the state is compared "
        "with its reply); default: the method the shipped adapter's card names as measured best, else the one "
        "a distilled model declares (barsym distill writes it), else "
        f"{DEFAULT_SCORE_METHOD.value} for an in-process model, digit for --llm-url",
        json_schema_extra={"metavar": "METHOD"},
    )

    @property
    def uses_llm(self) -> bool:
        return (
            self.repairer is RepairerKind.LLM
            or self.needs is NeedSource.MODEL
            or (self.anchors is AnchorMethod.STEP_SCORING and self.scores is not ScoreSource.SIMULATOR)
        )

    def describe(self) -> str:
        scores = f", {self.scores.value} scores, t={self.t}" if self.anchors is AnchorMethod.STEP_SCORING else ""
        if self.anchors is AnchorMethod.STEP_SCORING and self.scores is not ScoreSource.SIMULATOR:
            read = (
                self.score_method.value
                if self.score_method
                else f"the model's own method, else {DEFAULT_SCORE_METHOD.value}"
            )
            scores += f" (model read as {read})"
        repairer = self.repairer.value + (
            " + symbolic fallback" if self.repairer is RepairerKind.LLM and self.fallback else ""
        )
        needs = ", needs planned by the model" if self.needs is NeedSource.MODEL else ""
        return f"{self.anchors.value}{scores}, k={self.k}, repairer {repairer}{needs}, at most {self.rounds} round(s)"
