"""Issue 34, item 12: messages that say what is wrong with what the user gave, in the user's words.

A model path that is a device or a FIFO is not "a file that does not exist";
the command line's flag is ``--model``, not the API's ``model_path``; a file
the user gave is not fixed by reinstalling barsym's model package; an empty
call log or memory is empty, not "no such table" or "schema 0"; a 10 MB item
name is not echoed back whole; a count at the top of the range gets barsym's
words, not pydantic's.
"""

from __future__ import annotations

import os
import sqlite3

import pytest

from barsym.llm import ModelNotFoundError
from barsym.llm.install import importable
from barsym.llm.llamacpp.embedded import default_model_path
from cli_run import one_line, run


def _fifo(tmp_path):
    path = tmp_path / "model.gguf"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_a_model_path_that_is_not_a_file_says_so(tmp_path, kind):
    path = _fifo(tmp_path) if kind == "fifo" else "/dev/zero"
    with pytest.raises(ModelNotFoundError) as info:
        default_model_path(path)
    assert "not a regular file" in str(info.value) and "does not exist" not in str(info.value)


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "missing"])
def test_the_command_line_names_its_own_flag(capsys, tmp_path, kind):
    if not importable("llama_cpp"):
        pytest.skip("llama-cpp-python not installed: the line names the [llm] extra instead")
    path = {"fifo": lambda: _fifo(tmp_path), "missing": lambda: tmp_path / "none.gguf"}.get(kind, lambda: kind)()
    code, out, err = run(capsys, "plan", "stick", "--planner", "bar", "--model", path)
    assert code == 2 and one_line(err), err
    assert "--model" in err and "model_path" not in err and "reinstall" not in err.lower()
    assert ("does not exist" in err) == (kind == "missing")


def test_a_file_that_is_not_gguf_is_not_blamed_on_the_package(tmp_path):
    from barsym.llm import ModelLoadError
    from barsym.llm.llamacpp.backend import LlamaCppBackend

    path = tmp_path / "mine.gguf"
    path.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ModelLoadError) as info:
        LlamaCppBackend._check_magic(path)
    text = str(info.value)
    assert "--model" in text and "if it is the packaged model" in text


def test_an_empty_call_log_is_nothing_logged_yet(capsys, tmp_path, monkeypatch):
    path = tmp_path / "logs.db"
    path.write_bytes(b"")
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    code, out, err = run(capsys, "logs")
    assert code == 0 and "no LLM calls logged yet" in err and "no such table" not in err


def test_another_database_as_the_call_log_is_not_a_call_log(capsys, tmp_path, monkeypatch):
    path = tmp_path / "logs.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE songs (title TEXT)")
    db.close()
    monkeypatch.setenv("BARSYM_LOG_DB", str(path))
    code, out, err = run(capsys, "logs")
    assert code == 2 and one_line(err) and "not a barsym call log" in err and "no such table" not in err, err


def test_a_call_log_that_is_a_device_is_not_nothing_logged(capsys, monkeypatch):
    monkeypatch.setenv("BARSYM_LOG_DB", "/dev/zero")
    code, out, err = run(capsys, "logs")
    assert code == 2 and one_line(err) and "not a regular file" in err and "logged yet" not in err, err


def test_an_empty_memory_file_is_empty(capsys, tmp_path):
    path = tmp_path / "m.sqlite"
    path.write_bytes(b"")
    code, out, err = run(capsys, "memory", "show", "--memory", path)
    assert code == 2 and one_line(err) and "is empty" in err and "schema 0" not in err, err


def test_a_ten_megabyte_item_name_is_not_echoed_whole(capsys):
    name = "x" * 10_000_000
    code, out, err = run(capsys, "plan", name, "--planner", "symbolic", "--format", "json")
    assert code == 2 and one_line(err), err[:300]
    assert len(out) + len(err) < 10_000 and "10000000 characters" in err


def test_a_count_at_the_top_of_the_range_is_in_barsyms_words(capsys):
    code, out, err = run(capsys, "plan", "diamond_pickaxe", "--count", "23040", "--planner", "symbolic")
    assert code == 2 and one_line(err), err
    assert "23040" in err and "ask for fewer" in err and "Input should be" not in err
