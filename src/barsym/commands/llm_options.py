"""The planner options of ``plan`` and ``eval``, and the model options of ``score`` and ``repair``.

The LLM planners take the same settings in both commands, and both must turn a
bad setting (a model path that is not there, a file that is not a GGUF, a
server URL nothing answers at) into one line on stderr and exit status 2
before any planning starts, never a traceback. The options themselves are the
library's models (:class:`~barsym.reasoning.options.PlannerLLMOptions`,
:class:`~barsym.reasoning.options.DepsOptions`,
:class:`~barsym.consistency.ConsistencyConfig`), turned into arguments by
:mod:`.options`; this module decides which of them a planner gets.
"""

from __future__ import annotations

import argparse
import contextlib

from ..consistency import ConsistencyConfig
from ..eval.spec import planner_from_options
from ..kb import KnowledgeBase
from ..llm.install import llm_extra_hint
from ..llm.settings import ModelSettings
from ..planner import DEFAULT_PLANNER, make_planner, planner_names
from ..reasoning.options import BaselineOptions, DepsOptions, PlannerLLMOptions
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
    baselines = read_model(args, BaselineOptions)
    try:
        options, ignored = choose_options(
            name,
            kb,
            models[0],
            config,
            models[1],
            consistency=getattr(args, "consistency", False),
            rules=rules,
            baselines=baselines,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if ignored is not None:
        flags = ", ".join(flag(model, field) for model, field in ignored[1])
        warn(f"the {name} planner {ignored[0]}; ignored: {flags}")
    return options


def make_from_options(name: str, kb: KnowledgeBase, options: dict, args: argparse.Namespace, progress=None, rules=None):
    """``make_planner`` with checked options; model and server problems become UsageError."""
    if not options:
        return make_planner(name, kb, rules=rules)
    command = " ".join(["barsym", *getattr(args, "argv", [])])  # what the call log records as the caller
    with model_errors(f"the {name} planner", options.get("model"), bool(options.get("llm_url"))):
        return planner_from_options(name, kb, options, rules=rules, progress=progress, command=command)


def backend_from(options: ModelSettings):
    """The model backend for ``score``, ``repair`` and ``parse``; a model or server that cannot be used is a UsageError."""
    from ..reasoning.llm_planners import settings_backend

    with model_errors("LLM scoring or repair", options.model, options.llm_url is not None):
        return settings_backend(options)


@contextlib.contextmanager
def model_errors(what: str, model: str | None, remote: bool):
    """A model or server that cannot be used as one UsageError line; in-process on a light install (no [llm]
    extra), the line names the extra rather than a package's hint. A bad URL (ValueError) is one line too."""
    from ..llm import LLMError  # the LLM package is only imported for the LLM planners

    try:
        yield
    except LLMError as exc:
        hint = None if remote else llm_extra_hint(what, model)
        raise UsageError(hint or " ".join(str(exc).split())) from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def build_planner(name: str, kb: KnowledgeBase, args: argparse.Namespace, progress=None, rules=None):
    """``make_planner`` with the command line's options; model and server problems become UsageError."""
    return make_from_options(name, kb, planner_options(name, kb, args, rules), args, progress, rules)
