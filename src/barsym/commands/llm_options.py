"""The model side of ``plan``, ``eval``, ``score``, ``repair`` and ``parse``: LLM planners and backends from
the settings :mod:`.planner_arguments` reads.

The LLM planners take the same settings in every command, and each must turn a
bad setting (a model path that is not there, a file that is not a GGUF, a
server URL nothing answers at) into one line on stderr and exit status 2
before any planning starts, never a traceback. Only the commands that ask a
model import this module (it loads the LLM planners' factory); the arguments themselves are in :mod:`.planner_arguments`
(and still importable from here).
"""

from __future__ import annotations

import argparse
import contextlib

from ..kb import KnowledgeBase
from ..llm.install import llm_extra_hint
from ..llm.settings import ModelSettings
from ..planner import make_planner
from .common import UsageError, warn
from .planner_arguments import (  # noqa: F401 -- the arguments' half, still importable from here
    CONSISTENCY,
    add_consistency_arguments,
    add_llm_arguments,
    add_model_arguments,
    add_planner_arguments,
    check_dialect,
    check_planner,
    model_settings,
    planner_options,
)

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


def make_from_options(name: str, kb: KnowledgeBase, options: dict, args: argparse.Namespace, progress=None, rules=None):
    """``make_planner`` with checked options; model and server problems become UsageError."""
    if not options:
        return make_planner(name, kb, rules=rules)
    from ..reasoning.call_log import set_command

    if options.get("llm_stand_in") is None:  # a stand-in has no adapter to have been taught
        note_version(kb)
    command = command_of(args)  # what the call log records as the caller
    set_command(command)  # and the runs of the calls outside the planner's own (bar-sc's scorer and repairer)
    settings = model_settings(args)  # the model the options name, as the command line gave it
    with model_errors(f"the {name} planner", settings.model, bool(settings.llm_url)):
        return make_planner(name, kb, rules=rules, progress=progress, command=command, **options)


def backend_from(
    options: ModelSettings,
    kb: KnowledgeBase | None = None,
    progress=None,
    args: argparse.Namespace | None = None,
):
    """The model backend for ``score``, ``repair`` and ``parse``; a model or server that cannot be used is a UsageError.
    ``kb``: its Minecraft version, for the note that the adapter was taught on 1.16.5; ``progress`` is told when
    the model loads (a planner's :data:`~barsym.reasoning.progress.Progress`); the calls are logged in a run
    named after ``args``' command line."""
    from ..reasoning.backends import settings_backend
    from ..reasoning.call_log import set_command

    if kb is not None:
        note_version(kb)
    if args is not None:
        set_command(command_of(args))
    with model_errors("LLM scoring or repair", options.model, options.llm_url is not None):
        return settings_backend(options, progress)


@contextlib.contextmanager
def model_errors(what: str, model: str | None, remote: bool):
    """A model or server that cannot be used as one UsageError line; in-process on a light install (no [llm]
    extra), the line names the extra rather than a package's hint. A bad URL (ValueError) is one line too."""
    from ..llm import LLMError  # the LLM package is only imported for the LLM planners

    try:
        yield
    except LLMError as exc:
        hint = None if remote else llm_extra_hint(what, model)
        text = " ".join(str(exc).split()).replace("the model_path argument", "--model")  # the flag the user typed
        raise UsageError(hint or text) from None
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def build_planner(name: str, kb: KnowledgeBase, args: argparse.Namespace, progress=None, rules=None):
    """``make_planner`` with the command line's options; model and server problems become UsageError."""
    return make_from_options(name, kb, planner_options(name, kb, args, rules), args, progress, rules)
