"""``barsym`` command line: a thin argparse front over the library.

Each sub-command lives in :mod:`barsym.commands` as a module with
``HELP``, ``DESCRIPTION``, ``add_arguments(parser)`` and ``run(args) -> int``;
the parser is made here, the same way for all. Exit codes: 0 success,
1 the job ran and found a problem (an invalid plan), 2 unusable input,
130 interrupted (Ctrl-C).

The console script imports this module before :func:`main` can catch
anything, so it imports only ``sys``; the parser and the sub-commands are
imported inside ``main``, where a Ctrl-C during start-up is one line too.
"""

from __future__ import annotations

import sys

from . import __version__


def build_parser(argv: list[str] | None = None):
    """The ``barsym`` parser with every sub-command (imports their modules); given the command line
    ``argv`` that names a command, with that one only.

    A command's module imports what it runs (``eval`` the evaluation package, ``plan`` the planners), so
    making every sub-parser to run one command would load all of barsym: the parser for one command
    parses that command's line exactly as the full parser would, and starts in a fraction of the time.
    ``barsym --help``, an unknown command and ``completion`` (which reads all the parsers) get them all.
    """
    import argparse
    import importlib

    from .commands import COMMANDS

    chosen = _command(argv) if argv is not None else None
    names = [chosen] if chosen in COMMANDS and chosen != "completion" else COMMANDS

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # argparse's own exit code is 2 as well
            """One line, as for any bad input, naming where the usage is (argparse printed the whole usage
            first: 17 lines for ``barsym plan`` without its item); an option's 10 MB value is not echoed whole."""
            from .commands.common import cut_message

            prog = f"barsym {chosen}" if self.prog == "barsym" and chosen in names else self.prog  # stray options
            self.exit(2, f"barsym: error: {cut_message(message)} ({prog} -h shows the usage)\n")

    parser = _Parser(prog="barsym", description="Plan, validate and evaluate Minecraft tech-tree plans.")
    parser.add_argument("--version", action="version", version=f"barsym {__version__}")
    _add_mc_version(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in names:
        module = importlib.import_module(f"barsym.commands.{name}")
        command = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    parser.set_defaults(parser=parser)  # for what is made from the parsers (barsym completion)
    return parser


def _add_mc_version(parser) -> None:
    parser.add_argument(
        "--mc-version",
        default="1.16.5",
        help="Minecraft Java version to plan for (default 1.16.5, BAR's; `barsym versions` lists the installed ones)",
    )


class _NotPlain(Exception):
    """The plain parser cannot read this line (the full parser will, or will say why not)."""


def plain_args(argv: list[str]):
    """``argv`` parsed without the option models' arguments, or None when that is not the same as the full parse.

    Why: the planner and model options (:mod:`barsym.commands.planner_arguments`) are pydantic models, and
    importing pydantic to make their arguments is about half of ``barsym plan ITEM --planner symbolic``'s start
    (issue 54's 0.2 s of CPU). A command that can run without them (its module's ``add_arguments`` takes
    ``models=False`` and its ``plain_enough(args)`` says the parsed line needs none) is parsed by a parser of
    its other arguments first. That parser accepts a line only if the full one reads it the same way: no
    abbreviated option (``allow_abbrev=False``: ``--co`` is --count here, ambiguous there), no ``-h`` (no help
    of its own), no word it does not know (an option of the models, a typo) and no error -- any of those and
    the full parser parses the line, with its own help and messages. The namespace then lacks the models'
    arguments, which is what a line that sets none of them reads as (``tests/test_light_start.py``).
    """
    import argparse
    import importlib

    from .commands import COMMANDS

    chosen = _command(argv)
    if chosen not in COMMANDS or "--" in argv:
        return None
    module = importlib.import_module(f"barsym.commands.{chosen}")
    if getattr(module, "plain_enough", None) is None:
        return None

    class _Strict(argparse.ArgumentParser):
        def error(self, message: str):
            raise _NotPlain(message)

    parser = _Strict(prog="barsym", add_help=False, allow_abbrev=False)
    _add_mc_version(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Strict)
    sub.required = True
    command = sub.add_parser(chosen, add_help=False, allow_abbrev=False)
    module.add_arguments(command, models=False)
    command.set_defaults(run=module.run)
    parser.set_defaults(parser=None, option_models=False)
    try:
        args, unknown = parser.parse_known_args(argv)
    except _NotPlain:
        return None
    return args if not unknown and module.plain_enough(args) else None


def _command(argv: list[str]) -> str | None:
    """The sub-command ``argv`` names: its first word that is not an option (nor ``--mc-version``'s value)."""
    words = iter(argv)
    for word in words:
        if word == "--" or word == "-h" or (len(word) > 2 and "--help".startswith(word)):
            return None  # barsym --help COMMAND shows the top-level help, which lists every command
        if not word.startswith("-"):
            return word
        if len(word) > 2 and "=" not in word and "--mc-version".startswith(word):
            next(words, None)  # the option's value (argparse takes any unambiguous prefix)
    return None


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Library warnings (a server's bad token counts) as one line, not Python's two with a source excerpt."""
    print(f"barsym: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run one command; everything, imports and parsing included, is inside the one ``try``.

    stdout and stderr are escaped for the run (:class:`~barsym.redact.EscapedOutput`):
    user-supplied names echoed in any message cannot drive the terminal. Standard output is flushed
    before the command's status is returned: stdout on a full disk (``barsym plan --format json > f``,
    ``/dev/full``) is one line on stderr and exit status 2, whether the write failed during the command
    or at its end (:func:`_output_failed`), never a traceback or Python's "Exception ignored" at exit.
    """
    streams = sys.stdout, sys.stderr
    escaped: list = []  # the escaped stdout, once made: it keeps a write that failed (argparse swallows those)
    try:
        code = _main(argv, streams, escaped)
    except SystemExit as done:  # argparse has printed --help, --version or a usage line: flush that too
        failed = _flushed(streams, escaped)
        if failed is not None and not done.code:
            raise SystemExit(failed) from None
        raise
    except OSError as exc:
        if getattr(exc, "stream", None) is None:  # not barsym's output (barsym.redact.OutputError)
            raise
        return _output_failed(exc, streams)
    failed = _flushed(streams, escaped)
    return code if failed is None else failed


def _flushed(streams, escaped: list) -> int | None:
    """Flush standard output; None when that and every write worked (or the reader left: a broken pipe),
    else the exit status."""
    earlier = getattr(escaped[0], "failed", None) if escaped else None
    if earlier is not None:
        return _output_failed(earlier, streams)
    try:
        streams[0].flush()
    except BrokenPipeError:
        _silence(streams[0])
    except OSError as exc:
        return _output_failed(exc, streams)
    return None


def _output_failed(exc: OSError, streams) -> int:
    """One line for output that could not be written (stdout on a full disk), exit status 2.

    What is left in stdout's buffer goes to /dev/null, so the interpreter's last flush at exit does
    not fail again with a second message."""
    what = "standard error" if getattr(exc, "stream", None) is streams[1] else "standard output"
    _silence(streams[0])
    if what == "standard output":
        try:
            streams[1].write(f"barsym: error: cannot write to {what}: {exc.strerror or exc}\n")
            streams[1].flush()
        except OSError:
            pass
    return 2


def _silence(stream) -> None:
    """Point ``stream``'s file descriptor at /dev/null (a stream without one is left as it is)."""
    import os

    try:
        descriptor = stream.fileno()
        null = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):
        return
    os.dup2(null, descriptor)
    os.close(null)


def _main(argv: list[str] | None, streams, escaped: list) -> int:
    """The command itself, with stdout and stderr escaped; bad input as one line (see :func:`main`)."""
    args = None
    try:
        import warnings

        from .redact import EscapedOutput

        sys.stdout, sys.stderr = EscapedOutput(sys.stdout), EscapedOutput(sys.stderr)
        escaped.append(sys.stdout)
        line = list(sys.argv[1:] if argv is None else argv)
        args = plain_args(line) or build_parser(line).parse_args(line)
        args.argv = line  # the call log names runs after the command
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.run(args))
    except KeyboardInterrupt as exc:
        _clear_line(streams[1])
        hint = getattr(exc, "hint", None)  # a command may say how to go on (eval: resume with --run FILE)
        print("barsym: interrupted" + (f"; {hint}" if hint else ""), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        message = None if getattr(exc, "stream", None) is not None else _unusable_input(exc)
        if message is None:  # a bug (the traceback), or stdout that could not be written (main says so)
            raise
        _clear_line(streams[1])
        return _refuse(args, message)
    finally:
        sys.stdout, sys.stderr = streams


def _refuse(args, message: str) -> int:
    """One ``barsym: error:`` line; under ``--format json`` also a JSON result on stdout, so a script
    reading stdout sees every outcome, not an empty stream."""
    import json

    from .commands.common import cut_message, fail, outcome

    message = cut_message(message)
    if getattr(args, "format", None) in ("json", "actions"):
        sys.stdout.write(json.dumps(outcome("refused", message, 2), indent=2) + "\n")
    return fail(message)


def _unusable_input(exc: BaseException) -> str | None:
    """The one-line message for bad input (a command's UsageError, an unknown item or rule profile) or a
    setting found unusable only once planning started; None for anything else (a bug: the traceback).

    An LLM server URL that answers HTTP, but not as the OpenAI API, or refuses the
    credentials, or a model that computes NaN, shows at its first call
    (:class:`~barsym.llm.FatalBackendError`), deep inside a planner; the CLI turns
    it into exit status 2 like any other bad setting, never a fallback.
    Only the LLM planners import :mod:`barsym.llm`; if they did not run, the
    error cannot be one of theirs, and the symbolic commands stay light.
    """
    from .commands.common import UsageError
    from .kb import UnknownItemError, UnknownProfileError

    if isinstance(exc, (UsageError, UnknownItemError, UnknownProfileError)):
        return str(exc)
    llm = sys.modules.get("barsym.llm.base")
    if llm is not None and isinstance(exc, llm.FatalBackendError):  # credentials refused, not the API, NaN
        return " ".join(str(exc).split())
    memory = sys.modules.get("barsym.memory.store")  # a memory page found damaged, or locked, mid-plan
    if memory is not None and isinstance(exc, memory.MemoryFileError):
        return " ".join(str(exc).split())
    return None


def _clear_line(stream) -> None:
    """On a terminal, wipe a progress line (or the ^C echo) the command had no chance to clear."""
    if getattr(stream, "isatty", lambda: False)():
        stream.write("\r\033[K")


if __name__ == "__main__":
    sys.exit(main())
