"""Write docs/cli.md from barsym's parsers (``--check``: exit 1, and say so, when it is stale).

PYTHONPATH=src python tools/gen_cli_reference.py [--check]

The reference is rendered here from ``barsym.cli.build_parser()``, so it cannot drift from
``barsym --help``; tests/test_cli_reference.py loads this file and runs the same comparison.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from barsym.cli import build_parser

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
HEADER = (
    "# barsym command-line reference\n\nGenerated from the parsers by `python tools/gen_cli_reference.py`; "
    "do not edit by hand (tests/test_cli_reference.py fails when it is stale). Old spellings that still work "
    "for a release are listed in [cli-flags.md](cli-flags.md).\n"
)


def _parsers(parser, path=("barsym",)):
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _option(action: argparse.Action) -> str:
    names = ", ".join(action.option_strings) or action.metavar or action.dest
    takes = "" if action.nargs == 0 or not action.option_strings else f" {action.metavar or action.dest.upper()}"
    if action.choices and not action.metavar:
        takes = f" {{{','.join(map(str, action.choices))}}}" if action.option_strings else ""
    text = " ".join((action.help or "").split())
    if action.default not in (None, False, argparse.SUPPRESS, [], True) and "default" not in text:
        text += f" (default {action.default})"
    return f"- `{names}{takes}`: {text.replace('|', '&#124;')}"


def render(parser: argparse.ArgumentParser) -> str:
    """The reference of ``parser`` (``barsym.cli.build_parser()``) and all its sub-commands, as Markdown."""
    out = [HEADER]
    for path, p in _parsers(parser):
        p.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=100)
        out += [
            f"\n## `{path}`\n",
            " ".join((p.description or "").split()) + "\n" if p.description else "",
            "```\n" + p.format_usage().removeprefix("usage: ").rstrip() + "\n```\n",
        ]
        for group in p._action_groups:
            shown = [
                a
                for a in group._group_actions
                if a.help != argparse.SUPPRESS and not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
            ]
            if shown:
                out.append(f"**{group.title}**\n\n" + "\n".join(_option(a) for a in shown) + "\n")
    return "\n".join(line for line in out if line)


def main(argv: list[str]) -> int:
    text = render(build_parser())
    if "--check" in argv:
        if DOC.is_file() and DOC.read_text(encoding="utf-8") == text:
            return 0
        print(f"{DOC} is stale; regenerate it: PYTHONPATH=src python tools/gen_cli_reference.py", file=sys.stderr)
        return 1
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
