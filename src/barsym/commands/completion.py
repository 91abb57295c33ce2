"""``barsym completion bash|zsh``: a shell completion script, generated from the parsers (shtab).

Generated, not written by hand, so it offers exactly the sub-commands and options ``barsym --help``
lists. Install with ``barsym completion bash > ~/.local/share/bash-completion/completions/barsym``
(bash) or ``barsym completion zsh > "${fpath[1]}/_barsym"`` (zsh).
"""

from __future__ import annotations

import argparse
import sys

HELP = "print a bash or zsh completion script"
DESCRIPTION = "Print a shell completion script for barsym, made from its own parsers."


def add_arguments(p) -> None:
    p.add_argument("shell", choices=["bash", "zsh"], help="the shell to complete in")


def run(args: argparse.Namespace) -> int:
    import shtab

    sys.stdout.write(shtab.complete(args.parser, args.shell) + "\n")
    return 0
