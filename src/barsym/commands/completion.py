"""``barsym completion bash|zsh``: a shell completion script, generated from the parsers (shtab).

Generated, not written by hand, so it offers exactly the sub-commands and options ``barsym --help``
lists. Install with ``barsym completion bash > ~/.local/share/bash-completion/completions/barsym``
(bash) or ``barsym completion zsh > "${fpath[1]}/_barsym"`` (zsh).
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub) -> None:
    p = sub.add_parser(
        "completion",
        help="print a bash or zsh completion script",
        description="Print a shell completion script for barsym, made from its own parsers.",
    )
    p.add_argument("shell", choices=["bash", "zsh"], help="the shell to complete in")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import shtab

    sys.stdout.write(shtab.complete(args.parser, args.shell) + "\n")
    return 0
