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

from ..kb import KnowledgeBase
from ..llm.settings import ModelSettings
from .planner_arguments import (  # noqa: F401 -- the arguments' half, still importable from here
    CONSISTENCY,
    add_consistency_arguments,
    add_llm_arguments,
    add_model_arguments,
    add_planner_arguments,
    build_planner,
    check_dialect,
    check_planner,
    command_of,
    model_errors,
    model_settings,
    note_version,
    planner_spec,
)


def backend_from(
    options: ModelSettings,
    kb: KnowledgeBase | None = None,
    progress=None,
    args: argparse.Namespace | None = None,
):
    """The model backend for ``score``, ``repair`` and ``parse``; a model or server that cannot be used is a UsageError.
    ``kb``: its Minecraft version, for the note that the adapter was taught on 1.16.5; ``progress`` is told when
    the model loads (a planner's :data:`~barsym.reasoning.calls.progress.Progress`); the calls are logged in a run
    named after ``args``' command line."""
    from ..reasoning.calls.backends import backend_for
    from ..reasoning.calls.call_log import set_command

    if kb is not None:
        note_version(kb)
    if args is not None:
        set_command(command_of(args))
    with model_errors("LLM scoring or repair", options.model, options.llm_url is not None):
        return backend_for(options, progress=progress)
