"""Write docs/cli.md from barsym's parsers (``--check``: exit 1, and say so, when it is stale).

PYTHONPATH=src python tools/gen_cli_reference.py [--check]
"""

from __future__ import annotations

import sys

from barsym.cli import build_parser
from barsym.commands.reference import DOC, render


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
