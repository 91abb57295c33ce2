"""Running ``barsym`` in-process from a test: the exit code and what it printed.

Every CLI test file had its own copy of these two helpers.
"""

from __future__ import annotations

from barsym.cli import main


def run(capsys, *argv):
    """``barsym ARGV...`` (paths and numbers may be passed as they are): (exit code, stdout, stderr)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> bool:
    """The project's rule for bad input: exactly one line on stderr, and no traceback."""
    return err.count("\n") == 1 and "Traceback" not in err
