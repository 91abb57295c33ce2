"""``barsym`` command line: a thin argparse front over the library.

Each sub-command lives in :mod:`barsym.commands` as a module with
``add_parser(subparsers)`` and ``run(args) -> int``. Exit codes: 0 success,
1 the job ran and found a problem (an invalid plan), 2 unusable input.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from . import __version__
from .commands import COMMANDS


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own exit code is 2 as well
        self.print_usage(sys.stderr)
        self.exit(2, f"barsym: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="barsym", description="Plan, validate and evaluate Minecraft tech-tree plans.")
    parser.add_argument("--version", action="version", version=f"barsym {__version__}")
    parser.add_argument("--mc-version", default="1.16.5",
                        help="Minecraft version of the knowledge base (default 1.16.5, the only one supported)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        module = importlib.import_module(f"barsym.commands.{name}")
        module.add_parser(sub)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Library warnings (a server's bad token counts) as one line, not Python's two with a source excerpt."""
    print(f"barsym: warning: {' '.join(str(message).split())}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            return int(args.run(args))
    except KeyboardInterrupt:
        print("barsym: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        from .commands.common import fail, unusable_input

        message = unusable_input(exc)
        if message is None:
            raise
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")  # over a progress line the command had no chance to clear
        return fail(message)


if __name__ == "__main__":
    sys.exit(main())
