"""Helpers shared by the sub-commands: loading the knowledge base with clean errors, safe terminal text."""

from __future__ import annotations

import argparse
import gc
import json
import sys
from pathlib import Path

from ..kb import DataFileError, KnowledgeBase, UnknownItemError, UnknownProfileError, VersionNotSupportedError, load_kb
from ..private_files import unwritable


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def kb_from_args(args) -> KnowledgeBase:
    """The knowledge base the options name, loaded once and kept out of the garbage collector's scans.

    The knowledge base is a large graph of objects that lives as long as the
    process; every full collection would walk it again (a 25 ms pause in a
    Plancraft evaluation of 100 ms). ``gc.freeze`` sets it, and what was loaded
    with it, aside.
    """
    try:
        kb = load_kb(getattr(args, "mc_version", "1.16.5"))
    except VersionNotSupportedError as exc:
        raise UsageError(f"--mc-version: {exc}") from None
    except DataFileError as exc:
        raise UsageError(str(exc)) from None
    gc.freeze()
    return kb


def check_writable(path: Path | None, option: str) -> None:
    """Refuse an output file that cannot be written before the work starts, not after it."""
    why = None if to_stdout(path) else unwritable(path)
    if why is not None:
        shown = repr(str(path)) if why.startswith("not a usable") else str(path)
        raise UsageError(f"{option} {shown}: {why}")


def add_format(parser, formats: str, help: str, json_alias: bool = False) -> None:
    """``--format A|B|...`` (the first is the default); ``json_alias``: the old ``--json`` switch still works."""
    from .options import Deprecated

    names = formats.split("|")
    parser.add_argument("--format", choices=names, default=names[0], help=help)
    if json_alias:
        parser.add_argument(
            "--json",
            dest="format",
            action=Deprecated,
            const="json",
            new="--format json",
            default=argparse.SUPPRESS,
            help=argparse.SUPPRESS,
        )


def add_output(parser, what: str = "write to FILE instead of stdout", default=None) -> None:
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", default=default, help=f"{what} ('-': stdout)")


def to_stdout(path: Path | None) -> bool:
    return path is None or str(path) == "-"


def write_output(path: Path | None, text: str) -> None:
    """``text`` into ``-o FILE``, or onto stdout (``-`` or no ``-o``); a file that cannot be written is a UsageError."""
    if to_stdout(path):
        sys.stdout.write(text)
        return
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def fail(message: str) -> int:
    print(f"barsym: error: {message}", file=sys.stderr)
    return 2


def warn(message: str) -> None:
    """A warning line on stderr: the work goes on (a setting not used, a record left out, a fallback)."""
    print(f"barsym: warning: {message}", file=sys.stderr)


def outcome(status: str, reason: str | None, exit_code: int, **fields) -> dict:
    """Every result a command prints as JSON carries these three: what happened, why, and the exit status."""
    return {"status": status, "reason": reason, "exit_code": exit_code, **fields}


def refuse(args, message: str) -> int:
    """:func:`fail`; under ``--format json`` the refusal is also a JSON result on stdout, so a script
    reading stdout sees every outcome, not an empty stream."""
    if getattr(args, "format", None) == "json":
        sys.stdout.write(json.dumps(outcome("refused", message, 2), indent=2) + "\n")
    return fail(message)


def unusable_input(exc: BaseException) -> str | None:
    """The one-line message for a setting found unusable only once planning started; None for anything else.

    An LLM server URL that answers HTTP, but not as the OpenAI API, shows at its
    first call (:class:`~barsym.llm.IncompatibleServerError`), deep inside a
    planner; the CLI turns it into exit status 2 like any other bad setting.
    Only the LLM planners import :mod:`barsym.llm`; if they did not run, the
    error cannot be one of theirs, and the symbolic commands stay light.
    """
    if isinstance(exc, (UnknownItemError, UnknownProfileError)):  # an item or rule profile the game does not have
        return str(exc)
    llm = sys.modules.get("barsym.llm.base")
    if llm is not None and isinstance(exc, llm.IncompatibleServerError):
        return " ".join(str(exc).split())
    memory = sys.modules.get("barsym.memory.store")  # a memory page found damaged, or locked, mid-plan
    if memory is not None and isinstance(exc, memory.MemoryFileError):
        return " ".join(str(exc).split())
    return None
