"""The planner options' arguments of ``plan`` and ``eval``, and the model options of ``score``, ``repair``
and ``validate --parse``: the arguments and the settings read from them, without the model side.

Split from :mod:`.llm_options` (which builds the LLM planners and backends) so that a command that only
reads these options -- ``validate``, ``plan --planner symbolic`` -- does not load the LLM planners, the
evaluation package or the backends: the options are pydantic models of light modules
(:class:`~barsym.reasoning.options.PlannerLLMOptions`, :class:`~barsym.reasoning.options.DepsOptions`,
:class:`~barsym.consistency.ConsistencyConfig`, :class:`~barsym.llm.settings.ModelSettings`), turned into
arguments by :mod:`.options`.
"""

from __future__ import annotations

import argparse

from ..consistency.config import ConsistencyConfig
from ..kb import KnowledgeBase
from ..llm.settings import ModelSettings
from ..planner import DEFAULT_PLANNER, planner_names
from ..reasoning.options import BaselineOptions, DepsOptions, ForwardOptions, PlannerLLMOptions
from ..reasoning.options import planner_options as choose_options
from .common import Deprecated, UsageError, warn
from .options import add_model, flag, read_model

CONSISTENCY = "state consistency (BAR module b)"


def add_planner_arguments(parser: argparse.ArgumentParser, lead: str, dialect: str) -> None:
    """``--planner NAME`` (its help: ``lead``, then the planners' names) and ``--dialect NAME`` (``plan``, ``eval``)."""
    parser.add_argument(
        "--planner",
        default=DEFAULT_PLANNER,
        metavar="NAME",
        help=f"{lead}{', '.join(planner_names())} (default {DEFAULT_PLANNER})",
    )
    parser.add_argument("--dialect", metavar="NAME", help=dialect)


def check_planner(name: str) -> str:
    if name not in planner_names():
        raise UsageError(f"unknown planner {name!r}; choose one of: {', '.join(planner_names())}")
    return name


def check_dialect(kb, dialect: str | None) -> str | None:
    if dialect is not None and dialect not in kb.dialects:
        raise UsageError(f"unknown dialect {dialect!r}; known: {', '.join(sorted(kb.dialects)) or 'none'}")
    return dialect


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """The LLM planners' options, DEPS' and state consistency's (``plan``, ``eval``)."""
    add_model(
        parser,
        PlannerLLMOptions,
        "LLM planners (bar, llm-only, bar-sc, deps, cot, reverse-chain, self-refine, tot, plan-and-solve)",
        deprecated={"--seed": "seed"},
    )
    add_model(parser, DepsOptions, "DEPS (--planner deps)")
    add_model(parser, ForwardOptions, "DEPS and chain of thought (--planner deps, cot)")
    add_model(parser, BaselineOptions, "Self-Refine and Tree of Thoughts (--planner self-refine, --planner tot)")
    add_consistency_arguments(parser, planners=True)


def add_consistency_arguments(parser: argparse.ArgumentParser, planners: bool = False) -> None:
    """State consistency's options; ``planners`` (``plan``, ``eval``) adds ``--consistency``, and the old
    ``--rounds`` there meant DEPS' rounds with ``--planner deps``."""
    group = parser.add_argument_group(CONSISTENCY)
    if planners:
        group.add_argument(
            "--consistency",
            action="store_true",
            help="repair the planner's plan forward between anchors (bar-sc always does)",
        )
        group.add_argument(
            "--rounds",
            dest="legacy_rounds",
            help=argparse.SUPPRESS,
            action=Deprecated,
            new="--repair-rounds (or --deps-rounds with --planner deps)",
        )
    defaults = {"scores": "simulator; bar-sc: both", "repairer": "symbolic; bar-sc: llm"} if planners else None
    add_model(
        group,
        ConsistencyConfig,
        skip=("seed",),
        defaults=defaults,
        deprecated=None if planners else {"--rounds": "rounds"},
    )


def add_model_arguments(parser: argparse.ArgumentParser, title: str = "LLM") -> None:
    """The model options of ``score`` and ``repair`` (the planners' retry options do not apply)."""
    add_model(parser, ModelSettings, title, skip=("api_key", "llm_model"), deprecated={"--seed": "seed"})


def model_settings(args: argparse.Namespace) -> ModelSettings:
    return read_model(args, ModelSettings, skip=("api_key", "llm_model"))


def planner_options(name: str, kb: KnowledgeBase, args: argparse.Namespace, rules=None) -> dict:
    """The planner's options from the command line (:func:`barsym.reasoning.options.planner_options`);
    options it would not use are named in one warning line."""
    legacy = getattr(args, "legacy_rounds", None)  # --rounds: DEPS' rounds with deps, repair rounds otherwise
    if legacy is not None:
        args = argparse.Namespace(**{"deps_rounds" if name == "deps" else "rounds": legacy, **vars(args)})
    models = [read_model(args, m) for m in (PlannerLLMOptions, DepsOptions)]
    config = read_model(args, ConsistencyConfig, skip=("seed",))
    try:
        options, ignored = choose_options(
            name,
            kb,
            models[0],
            config,
            models[1],
            consistency=getattr(args, "consistency", False),
            rules=rules,
            forward=read_model(args, ForwardOptions),
            baselines=read_model(args, BaselineOptions),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if ignored is not None:
        flags = ", ".join(
            "--no-" + flag(model, field)[2:]
            if model.model_fields[field].annotation == bool | None and getattr(args, field, None) is False
            else flag(model, field)
            for model, field in ignored[1]
        )  # --facts/--no-facts: the one the user typed
        warn(f"the {name} planner {ignored[0]}; ignored: {flags}")
    return options
