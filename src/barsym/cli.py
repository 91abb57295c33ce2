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
    parser.add_argument(
        "--mc-version",
        default="1.16.5",
        help="Minecraft Java version to plan for (default 1.16.5, BAR's; `barsym versions` lists the installed ones)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in names:
        module = importlib.import_module(f"barsym.commands.{name}")
        command = sub.add_parser(name, help=module.HELP, description=module.DESCRIPTION)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    parser.set_defaults(parser=parser)  # for what is made from the parsers (barsym completion)
    return parser


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
    user-supplied names echoed in any message cannot drive the terminal.
    """
    streams = sys.stdout, sys.stderr
    args = None
    try:
        import warnings

        from .redact import EscapedOutput

        sys.stdout, sys.stderr = EscapedOutput(sys.stdout), EscapedOutput(sys.stderr)
        line = list(sys.argv[1:] if argv is None else argv)
        args = build_parser(line).parse_args(line)
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
        message = _unusable_input(exc)
        if message is None:
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

    An LLM server URL that answers HTTP, but not as the OpenAI API, shows at its
    first call (:class:`~barsym.llm.IncompatibleServerError`), deep inside a
    planner; the CLI turns it into exit status 2 like any other bad setting.
    Only the LLM planners import :mod:`barsym.llm`; if they did not run, the
    error cannot be one of theirs, and the symbolic commands stay light.
    """
    from .commands.common import UsageError
    from .kb import UnknownItemError, UnknownProfileError

    if isinstance(exc, (UsageError, UnknownItemError, UnknownProfileError)):
        return str(exc)
    llm = sys.modules.get("barsym.llm.base")
    if llm is not None and isinstance(exc, llm.IncompatibleServerError):
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
