"""``barsym completion bash|zsh``: the bash script, sourced in a real bash, completes commands and flags."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from cli_run import run

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


def complete(script: str, *words: str) -> list[str]:
    """What bash's completion function offers for ``barsym WORDS...`` (the last word being typed)."""
    words = ("barsym", *words)
    quoted = " ".join(f"'{w}'" for w in words)
    program = (
        f'{script}\nCOMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMP_LINE="{" ".join(words)}"; '
        "COMP_POINT=${#COMP_LINE}; _shtab_barsym; printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    done = subprocess.run(["bash", "--norc", "--noprofile"], input=program, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.fixture(scope="module")
def script():
    import io
    import sys

    from barsym.cli import main

    out, old = io.StringIO(), sys.stdout
    sys.stdout = out
    try:
        assert main(["completion", "bash"]) == 0
    finally:
        sys.stdout = old
    return out.getvalue()


def test_bash_offers_the_subcommands(script):
    assert {"plan", "eval", "validate", "memory", "completion"} <= set(complete(script, ""))
    assert complete(script, "re") == ["report", "repair"]


def test_bash_offers_a_commands_flags(script):
    assert sorted(complete(script, "plan", "--llm-s")) == ["--llm-seed", "--llm-stand-in"]
    assert "--world-seed" in complete(script, "execute", "--w")
    assert complete(script, "memory", "show", "--f") == ["--format"]
    assert "--json" not in complete(script, "validate", "--")  # deprecated spellings are not offered


def test_zsh_script_and_bad_shell(capsys):
    code, out, _ = run(capsys, "completion", "zsh")
    assert code == 0 and out.startswith("#compdef barsym") and "--llm-seed" in out
    if shutil.which("zsh"):
        assert subprocess.run(["zsh", "-n"], input=out, text=True).returncode == 0
    with pytest.raises(SystemExit) as exited:
        run(capsys, "completion", "fish")
    assert exited.value.code == 2 and "invalid choice: 'fish'" in capsys.readouterr().err
