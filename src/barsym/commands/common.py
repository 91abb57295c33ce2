"""Helpers shared by the sub-commands: loading the knowledge base with clean errors, safe terminal text, and what ran.

What ran is named in every output of ``plan``, ``parse`` and ``eval`` the same way (:func:`ran_record`,
:func:`ran_lines`): a plan piped into a file, or the JSON a script keeps, is read later by someone who
did not see the command line -- so each says its planner, its model by the files and their SHA-256
(:mod:`barsym.llm.provenance`; none for a planner that asks no model), the rule profile and the start
state, as one or two footer lines printed whether or not stdout is a terminal, and in JSON as
``planner``, ``model``, ``rules`` and ``start``.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from ..atomic_files import write_atomic
from ..kb import DataFileError, KnowledgeBase, VersionNotSupportedError, load_kb
from ..private_files import unwritable
from ..redact import hide_secrets
from ..sim import State
from ..steps import MOST_ECHO, clip


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


class Deprecated(argparse.Action):
    """An old spelling that still works for a release: it sets what the new one does, with a note on stderr."""

    def __init__(self, option_strings, dest, new: str, const=None, **kwargs):
        super().__init__(option_strings, dest, nargs=0 if const is not None else None, const=const, **kwargs)
        self.new = new

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"barsym: {option_string} is deprecated, use {self.new}", file=sys.stderr)
        setattr(namespace, self.dest, self.const if self.const is not None else values)


def add_output(parser, what: str = "write to FILE instead of stdout", default=None) -> None:
    parser.add_argument("-o", "--output", type=Path, metavar="FILE", default=default, help=f"{what} ('-': stdout)")


def to_stdout(path: Path | None) -> bool:
    return path is None or str(path) == "-"


def write_output(path: Path | None, text: str) -> None:
    """``text`` into ``-o FILE``, or onto stdout (``-`` or no ``-o``); a file that cannot be written is a UsageError.

    The file is replaced all at once (:func:`~barsym.atomic_files.write_atomic`): a full disk leaves the old
    file as it was, not cut short.
    """
    if to_stdout(path):
        sys.stdout.write(text)
        return
    try:
        write_atomic(path, hide_secrets(text))  # stdout hides them too (cli.main's EscapedOutput)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}; it is left as it was") from None


#: the longest one-line message barsym prints: input quoted in it (a 10 MB item name) is cut to fit
MOST_MESSAGE = MOST_ECHO  # the documented length (docs/reliability.md), the same for every echo


def cut_message(message: str) -> str:
    """``message`` at most :data:`MOST_MESSAGE` characters, its end kept (that is where the hint is)."""
    return clip(message, MOST_MESSAGE)


def fail(message: str) -> int:
    print(f"barsym: error: {cut_message(message)}", file=sys.stderr)
    return 2


def warn(message: str) -> None:
    """A warning line on stderr: the work goes on (a setting not used, a record left out, a fallback)."""
    print(f"barsym: warning: {cut_message(message)}", file=sys.stderr)


def said_as(written: str, resolved: str) -> None:
    """One line on stderr when a name was resolved to another item (``bed -> white_bed``): an alias, a family or
    a task set's old name is planned as the item it stands for, and the user should not have to guess which."""
    key = written.strip().lower().replace(" ", "_").removeprefix("minecraft:")
    if key != resolved:
        print(f"barsym: {clip(written.strip())} -> {resolved}", file=sys.stderr)


def outcome(status: str, reason: str | None, exit_code: int, **fields) -> dict:
    """Every result a command prints as JSON carries these three: what happened, why, and the exit status."""
    return {"status": status, "reason": reason, "exit_code": exit_code, **fields}


def remembering(planner, kb: KnowledgeBase, store):
    """``planner`` with the stage memory in front (``plan``, ``eval``); unchanged without ``--memory``."""
    if store is None:
        return planner
    from ..memory import with_memory

    try:
        return with_memory(planner, kb, store)
    except ValueError as exc:  # a planner without a decomposer
        raise UsageError(f"--memory: {exc}") from None


def planner_model(spec) -> dict | None:
    """The model a :class:`~barsym.reasoning.spec.PlannerSpec` runs (None: it asks none), as run files record it."""
    if not spec.asks_model:
        return None
    from ..reasoning.calls.backends import settings_record

    return settings_record(spec.llm)


def ran_record(planner: str, model: dict | None, rules: str | None, start: State | None) -> dict:
    """The JSON fields: ``planner``, ``model`` (:func:`barsym.llm.provenance.model_record`, or None), ``rules``,
    ``start`` (``{"layer", "inventory"}``; None where each task has its own, as in an evaluation)."""
    return {"planner": planner, "model": model, "rules": rules, "start": None if start is None else start.to_dict()}


def ran_lines(record: dict, layers: tuple[str, ...] = (), what: str | None = None) -> list[str]:
    """The footer: ``ran: planner bar, rules survival, start layer 0 (surface); inventory: nothing``, then the
    model's line (``model: SmolLM2-135M-Instruct-Q4_1.gguf (sha256 ...), adapter ...``) when there is one.
    ``what`` names the work instead of the planner (``parse (3.2 s)``)."""
    parts = [what or f"planner {record['planner']}" + ("" if record["model"] else " (no model)")]
    if record.get("rules"):
        parts.append(f"rules {record['rules']}")
    if record.get("start") is not None:
        parts.append(f"start {State.from_dict(record['start']).describe(layers)}")
    lines = ["ran: " + ", ".join(parts)]
    if record.get("repair"):
        lines.append(f"state consistency ran as: {record['repair']}")
    if record["model"]:
        from ..llm.provenance import record_text  # only with a model: plan --planner symbolic starts light

        lines.append(f"model: {record_text(record['model'])}")
    return lines
