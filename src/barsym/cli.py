"""``barsym`` command line: a thin argparse front over the library.

Each sub-command lives in :mod:`barsym.commands` as a module with
``add_parser(subparsers)`` and ``run(args) -> int``. Exit codes: 0 success,
1 the job ran and found a problem (an invalid plan), 2 unusable input,
130 interrupted (Ctrl-C).

The console script imports this module before :func:`main` can catch
anything, so it imports only ``sys``; the parser and the sub-commands are
imported inside ``main``, where a Ctrl-C during start-up is one line too.
"""

from __future__ import annotations

import sys

from . import __version__


def build_parser():
    """The ``barsym`` parser with every sub-command (imports their modules)."""
    import argparse
    import importlib

    from .commands import COMMANDS

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> None:  # argparse's own exit code is 2 as well
            self.print_usage(sys.stderr)
            self.exit(2, f"barsym: error: {message}\n")

    parser = _Parser(prog="barsym", description="Plan, validate and evaluate Minecraft tech-tree plans.")
    parser.add_argument("--version", action="version", version=f"barsym {__version__}")
    parser.add_argument(
        "--mc-version",
        default="1.16.5",
        help="Minecraft version of the knowledge base (default 1.16.5, the only one supported)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        module = importlib.import_module(f"barsym.commands.{name}")
        module.add_parser(sub)
    parser.set_defaults(parser=parser)  # for what is made from the parsers (barsym completion)
    return parser


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
        args = build_parser().parse_args(argv)
        args.argv = list(sys.argv[1:] if argv is None else argv)  # the call log names runs after the command
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
        from .commands.common import UsageError, refuse, unusable_input

        if isinstance(exc, UsageError):  # bad input found by a command: one line (and a JSON result with --format json)
            _clear_line(streams[1])
            return refuse(args, str(exc))
        message = unusable_input(exc)
        if message is None:
            raise
        _clear_line(streams[1])
        return refuse(args, message)
    finally:
        sys.stdout, sys.stderr = streams


def _clear_line(stream) -> None:
    """On a terminal, wipe a progress line (or the ^C echo) the command had no chance to clear."""
    if getattr(stream, "isatty", lambda: False)():
        stream.write("\r\033[K")


if __name__ == "__main__":
    sys.exit(main())
