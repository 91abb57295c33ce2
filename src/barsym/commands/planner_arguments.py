"""The planner options' arguments of ``plan`` and ``eval``, and the model options of ``score``, ``repair``
and ``validate --parse``: the arguments, the one typed :class:`~barsym.reasoning.spec.PlannerSpec` read from
them (:func:`planner_spec`) and the one function that builds a command's planner from it (:func:`build_planner`).

Split from :mod:`.llm_options` (which builds the LLM planners and backends) so that a command that only
reads these options -- ``validate``, ``plan --planner symbolic`` -- does not load the LLM planners, the
evaluation package or the backends: the options are pydantic models of light modules
(:class:`~barsym.reasoning.options.PlannerLLMOptions`, :class:`~barsym.reasoning.options.DepsOptions`,
:class:`~barsym.consistency.ConsistencyConfig`, :class:`~barsym.llm.settings.ModelSettings`), turned into
arguments by :mod:`.options`. Those models are pydantic's, imported by the functions that read them: a
symbolic ``plan`` parsed without them (:func:`barsym.cli.plain_args`) loads no pydantic.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING

from ..kb import KnowledgeBase
from ..planner import DEFAULT_PLANNER, planner_names
from ..planner.registry import build, build_plain
from .common import Deprecated, UsageError, warn
from .options import add_model, flag, read_model

if TYPE_CHECKING:
    from ..llm.settings import ModelSettings
    from ..reasoning.spec import PlannerSpec

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
    from ..reasoning.options import BaselineOptions, DepsOptions, ForwardOptions, PlannerLLMOptions

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
    from ..consistency.config import ConsistencyConfig

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
    from ..llm.settings import ModelSettings

    add_model(parser, ModelSettings, title, skip=("api_key", "llm_model"), deprecated={"--seed": "seed"})


def model_settings(args: argparse.Namespace) -> ModelSettings:
    from ..llm.settings import ModelSettings

    return read_model(args, ModelSettings, skip=("api_key", "llm_model"))


def planner_spec(name: str, kb: KnowledgeBase, args: argparse.Namespace, rules=None) -> PlannerSpec:
    """The planner's options from the command line as one typed value (:func:`barsym.reasoning.spec.choose`);
    options it would not use are named in one warning line."""
    from ..consistency.config import ConsistencyConfig
    from ..reasoning.options import BaselineOptions, DepsOptions, ForwardOptions, PlannerLLMOptions
    from ..reasoning.spec import choose

    legacy = getattr(args, "legacy_rounds", None)  # --rounds: DEPS' rounds with deps, repair rounds otherwise
    if legacy is not None:
        args = argparse.Namespace(**{"deps_rounds" if name == "deps" else "rounds": legacy, **vars(args)})
    try:
        spec, ignored = choose(
            name,
            kb,
            read_model(args, PlannerLLMOptions),
            read_model(args, ConsistencyConfig, skip=("seed",)),
            read_model(args, DepsOptions),
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
    return spec


def plain_planner(name: str, kb: KnowledgeBase, args: argparse.Namespace, rules=None):
    """Planner ``name`` from a line parsed without the option models (:func:`barsym.cli.plain_args`), built
    without a spec (:func:`barsym.planner.registry.build_plain`: no pydantic); None when the full parser read
    the line (an option may be set) or the planner needs its spec."""
    if getattr(args, "option_models", True):
        return None
    return build_plain(kb, name, rules)


def build_planner(spec: PlannerSpec, kb: KnowledgeBase, args: argparse.Namespace, progress=None):
    """The one way a command builds its planner (``plan``, ``eval``): the registry's one factory
    (:func:`barsym.planner.registry.build`) on the typed spec, with the command line named in the call log;
    model and server problems become one UsageError line. A planner that asks no model is built without the
    model side (``plan --planner symbolic`` starts light)."""
    if not spec.asks_model:
        return build(kb, spec)
    from ..reasoning.calls.call_log import set_command

    if spec.llm.llm_stand_in is None:  # a stand-in has no adapter to have been taught
        note_version(kb)
    command = command_of(args)  # what the call log records as the caller
    set_command(command)  # and the runs of the calls outside the planner's own (bar-sc's scorer and repairer)
    with model_errors(f"the {spec.planner} planner", spec.llm.model, bool(spec.llm.llm_url)):
        return build(kb, spec.with_context(progress=progress, command=command))


_NOTED: set[str] = set()


def note_version(kb: KnowledgeBase) -> None:
    """One line when the model plans for another release than the one its adapter was taught on (once a process)."""
    from ..kb import DEFAULT_VERSION

    if kb.version != DEFAULT_VERSION and kb.version not in _NOTED:
        _NOTED.add(kb.version)
        warn(
            f"the model's adapter was taught on Minecraft {DEFAULT_VERSION}; its prompts give it {kb.version}'s facts "
            f"and the crafting graph checks its answers against {kb.version}"
        )


def command_of(args: argparse.Namespace) -> str:
    """The command line as the call log names a run: ``barsym plan diamond_pickaxe`` (secrets taken out there)."""
    return " ".join(["barsym", *getattr(args, "argv", [])])


@contextlib.contextmanager
def model_errors(what: str, model: str | None, remote: bool):
    """A model or server that cannot be used as one UsageError line; in-process on a light install (no [llm]
    extra), the line names the extra rather than a package's hint. A bad URL (ValueError) is one line too."""
    from ..llm import LLMError  # the LLM package is only imported for the LLM planners
    from ..llm.install import llm_extra_hint

    try:
        yield
    except LLMError as exc:
        hint = None if remote else llm_extra_hint(what, model)
        text = " ".join(str(exc).split()).replace("the model_path argument", "--model")  # the flag the user typed
        raise UsageError(hint or text) from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
