"""Helpers shared by the sub-commands: loading the knowledge base with clean errors."""

from __future__ import annotations

import sys

from ..kb import DataFileError, KnowledgeBase, VersionNotSupportedError, load_kb


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def kb_from_args(args) -> KnowledgeBase:
    try:
        return load_kb(getattr(args, "mc_version", "1.16.5"))
    except VersionNotSupportedError as exc:
        raise UsageError(f"--mc-version: {exc}") from None
    except DataFileError as exc:
        raise UsageError(str(exc)) from None


def fail(message: str) -> int:
    print(f"barsym: error: {message}", file=sys.stderr)
    return 2


def unusable_input(exc: BaseException) -> str | None:
    """The one-line message for a setting found unusable only once planning started; None for anything else.

    An LLM server URL that answers HTTP, but not as the OpenAI API, shows at its
    first call (:class:`~barsym.llm.IncompatibleServerError`), deep inside a
    planner; the CLI turns it into exit status 2 like any other bad setting.
    Only the LLM planners import :mod:`barsym.llm`; if they did not run, the
    error cannot be one of theirs, and the symbolic commands stay light.
    """
    llm = sys.modules.get("barsym.llm.base")
    if llm is not None and isinstance(exc, llm.IncompatibleServerError):
        return " ".join(str(exc).split())
    return None
