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
import sys

from ..consistency import ConsistencyConfig
from ..eval.spec import planner_from_options
from ..kb import KnowledgeBase
from ..llm.settings import ModelSettings
from ..planner import DEFAULT_PLANNER, make_planner, planner_names
from ..planner.registry import FORWARD_PLANNERS, LLM_PLANNERS
from ..reasoning.options import DepsOptions, PlannerLLMOptions
from .common import UsageError, require_llm_extra
from .options import Deprecated, add_model, flag, given, read_model

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
        parser, PlannerLLMOptions, "LLM planners (bar, llm-only, bar-sc, deps, cot)", deprecated={"--seed": "seed"}
    )
    add_model(parser, DepsOptions, "DEPS (--planner deps)")
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


def deps_options(name: str, args: argparse.Namespace) -> dict:
    """``--deps-rounds``, ``--feedback-world`` and ``--selector`` for the deps planner.

    ``--selector`` given to another model planner is named in a warning, as the
    options a planner without a model would not use are (:func:`planner_options`).
    """
    options = read_model(args, DepsOptions).model_dump(exclude_none=True)
    if name == "deps":
        return options
    if "feedback_world" in options or "deps_rounds" in options:
        raise UsageError(f"{flag(DepsOptions, next(iter(options)))} applies to --planner deps only")
    if "selector" in options and name in LLM_PLANNERS:
        print(f"barsym: warning: the {name} planner executes no plan; ignored: --selector", file=sys.stderr)
    return {}


def _as_options(llm: PlannerLLMOptions) -> dict:
    """The model settings as planner options: the server's key and model name, and ``facts``, only when set."""
    return {
        k: v
        for k, v in llm.model_dump().items()
        if (v is not None or k not in ("api_key", "llm_model")) and (k != "facts" or k in llm.model_fields_set)
    }


def planner_options(name: str, kb: KnowledgeBase, args: argparse.Namespace, rules=None) -> dict:
    """The planner's options from the command line, as plain data (a worker rebuilds the planner from them).

    Options the planner would not use are named in one warning line instead of being dropped unseen.
    """
    legacy = getattr(args, "legacy_rounds", None)  # --rounds: DEPS' rounds with deps, repair rounds otherwise
    if legacy is not None:
        args = argparse.Namespace(**{"deps_rounds" if name == "deps" else "rounds": legacy, **vars(args)})
    config = read_model(args, ConsistencyConfig, skip=("seed",))
    extra = config.model_dump(mode="json", include=config.model_fields_set)
    if getattr(args, "consistency", False):
        extra["consistency"] = True
    extra.update(deps_options(name, args))
    llm = read_model(args, PlannerLLMOptions)
    if name in FORWARD_PLANNERS and "llm_mode" in llm.model_fields_set and llm.llm_mode != "graph":
        raise UsageError(
            f"--llm-mode applies to bar and llm-only; the {name} planner's grammar is always the game's vocabulary"
        )
    if name not in LLM_PLANNERS and not extra.get("consistency"):
        ignored = [
            flag(m, n)
            for m in (PlannerLLMOptions, ConsistencyConfig, DepsOptions)
            for n in given(args, m, skip=("seed",) if m is ConsistencyConfig else ())
        ]
        if ignored:
            print(f"barsym: warning: the {name} planner asks no model; ignored: {', '.join(ignored)}", file=sys.stderr)
        return {}
    if name in FORWARD_PLANNERS and rules is not None and rules.name != kb.default_profile:
        raise UsageError(
            f"the {name} planner's grammar and checks play by the {kb.default_profile} rules; for "
            f"--rules {rules.name} use --planner bar, llm-only, bar-sc or symbolic"
        )
    return {**_as_options(llm), **extra}


def make_from_options(
    name: str, kb: KnowledgeBase, options: dict, progress=None, rules=None, command: str = "", backend=None
):
    """``make_planner`` with checked options; model and server problems become UsageError."""
    if not options and backend is None:
        return make_planner(name, kb, rules=rules)
    with model_errors(
        f"the {name} planner", None if backend else options.get("model"), bool(backend or options.get("llm_url"))
    ):
        context = {"progress": progress, "command": command or "barsym"}
        return planner_from_options(name, kb, options, rules=rules, backend=backend, **context)


def backend_from(options: ModelSettings):
    """The shared model backend for ``score`` and ``repair``; a model or server that cannot be used is a UsageError."""
    from ..reasoning.llm_planners import shared_backend

    if options.llm_stand_in:
        from ..llm.stand_in import make_stand_in

        return make_stand_in(options.llm_stand_in)
    with model_errors("LLM scoring or repair", options.model, options.llm_url is not None):
        return shared_backend(options.model, options.llm_url, options.threads, options.timeout)


@contextlib.contextmanager
def model_errors(what: str, model: str | None, remote: bool):
    """A model or server that cannot be used as one UsageError line; in-process on a light install (no [llm]
    extra), the line names the extra rather than a package's hint. A bad URL (ValueError) is one line too."""
    from ..llm import LLMError  # the LLM package is only imported for the LLM planners

    try:
        yield
    except LLMError as exc:
        if not remote:
            require_llm_extra(what, model)
        raise UsageError(" ".join(str(exc).split())) from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def build_planner(name: str, kb: KnowledgeBase, args: argparse.Namespace, progress=None, rules=None):
    """``make_planner`` with the command line's options; model and server problems become UsageError."""
    command = " ".join(["barsym", *getattr(args, "argv", [])]) or "barsym"
    return make_from_options(name, kb, planner_options(name, kb, args, rules), progress, rules, command)
