"""Run files kept compressed (``FILE.jsonl.gz``): read, resumed and reported like plain ones."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from barsym.eval import load_dataset
from barsym.eval.compressed import CompressedRunError, compressed_line, members
from barsym.eval.runfile import read_run, repeat_path
from barsym.eval.scale import run_evaluation
from barsym.eval.spec import RunSpec
from cli_run import run
from testdata import BAR_DIR


@pytest.fixture(scope="module")
def tasks(kb):
    return load_dataset(BAR_DIR, kb)[:5]


def same(a: dict, b: dict) -> bool:
    def drop(records):
        return {k: {f: v for f, v in r.items() if f not in ("seconds", "stats")} for k, r in records.items()}

    return drop(a) == drop(b)


def test_a_compressed_run_resumes_and_stays_compressed(kb, tasks, tmp_path):
    spec = RunSpec("symbolic")
    plain = tmp_path / "run.jsonl"
    whole = run_evaluation(spec, tasks, kb, name="symbolic", run_path=plain)
    packed = tmp_path / "run.jsonl.gz"
    lines = plain.read_bytes().splitlines(keepends=True)
    packed.write_bytes(gzip.compress(b"".join(lines[:3]), mtime=0))  # gzip of a run stopped after 2 tasks
    again = run_evaluation(spec, tasks, kb, name="symbolic", run_path=packed)
    assert again.resumed == 2 and again.ran == 3
    assert same(again.records, whole.records)
    assert gzip.decompress(packed.read_bytes()).count(b"\n") == len(tasks) + 1  # still gzip, every line once
    header, records, _ = read_run(packed)
    assert header == read_run(plain)[0] and sorted(r["key"] for r in records) == sorted(t.key for t in tasks)


def test_a_member_cut_off_by_a_kill_is_run_again(kb, tasks, tmp_path):
    spec = RunSpec("symbolic")
    packed = tmp_path / "run.jsonl.gz"
    whole = run_evaluation(spec, tasks, kb, name="symbolic", run_path=packed)
    data = packed.read_bytes()
    _, ends = members(data, 2**20)
    assert len(ends) == len(tasks) + 1  # one member per line, as eval appends them
    packed.write_bytes(data[: ends[3][1] + 9])  # header, 3 tasks, and a member cut short
    again = run_evaluation(spec, tasks, kb, name="symbolic", run_path=packed)
    assert again.resumed == 3 and again.ran == 2
    assert same(again.records, whole.records)
    assert len(members(packed.read_bytes(), 2**20)[1]) == len(tasks) + 1  # the cut piece is gone


def test_report_reads_plain_and_compressed_runs_alike(capsys, tmp_path):
    plain = tmp_path / "run.jsonl"
    code, _, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "3", "--run", plain)
    assert code == 0, err
    packed = tmp_path / "packed.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    pages = []
    for path in (plain, packed):
        out = tmp_path / f"{path.name}.html"
        code, _, err = run(capsys, "report", path, "--out", out)
        assert code == 0, err
        pages.append(out.read_text().replace(path.name, "RUN"))
    assert pages[0] == pages[1]


def test_a_damaged_compressed_run_is_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.jsonl.gz"
    data = bytearray(gzip.compress(b'{"kind": "run"}\n' * 50))
    data[20:30] = b"\xff" * 10
    bad.write_bytes(bytes(data))
    code, _, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--run", bad)
    assert code == 2 and "damaged" in err and err.count("\n") == 1


def test_repeats_of_a_compressed_run_keep_the_suffixes():
    assert repeat_path(Path("r/x.jsonl.gz"), 2) == Path("r/x.repeat2.jsonl.gz")
    assert repeat_path(Path("r/x.jsonl"), 3) == Path("r/x.repeat3.jsonl")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=6), st.integers(min_value=0, max_value=400))
def test_members_give_back_every_whole_member(lines, cut):
    data = b"".join(compressed_line(line) for line in lines)
    text, ends = members(data[: len(data) - cut] if cut < len(data) else b"", 2**20)
    assert [e for _, e in ends] == sorted(e for _, e in ends)
    assert text == b"".join(lines[: len(ends)])  # a cut-off member is left out, never half read
    if cut == 0:
        assert len(ends) == len(lines)


def test_a_member_cut_after_its_first_byte_is_left_out():
    """A kill one byte into a member leaves b"\x1f", half the gzip magic: cut off, not damage (hypothesis found it)."""
    whole = compressed_line(b"a\n")
    text, ends = members(whole + whole[:1], 2**20)
    assert text == b"a\n" and len(ends) == 1
    with pytest.raises(CompressedRunError, match="not gzip"):
        members(whole + b"x", 2**20)


def test_too_much_text_is_refused():
    with pytest.raises(CompressedRunError, match="MiB"):
        members(gzip.compress(b"x" * 3 * 2**20), 2**20)
