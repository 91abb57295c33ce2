"""bench/bar_table.py: BAR's table from eval runs -- rows, the five groups and their mean, resumed from run files.

A stand-in answers (``copy-facts``), on the first tasks of BAR's set only.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "bench" / "bar_table.py"


def _script():
    spec = importlib.util.spec_from_file_location("bar_table", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TABLE = _script()


def test_the_table_has_a_row_per_method_and_variant_and_a_column_per_group(tmp_path, capsys):
    out = tmp_path / "table.md"
    argv = ["--runs", tmp_path / "runs", "--rows", "symbolic,reverse-chain,tot", "--limit", "2", "--out", out]
    argv += ["--variant", "copy-facts=--llm-stand-in copy-facts", "--variant", "first=--llm-stand-in first"]
    assert TABLE.main([str(a) for a in argv]) == 0
    text = out.read_text()
    header = "| part | method | stone | iron | gold | diamond | redstone | mean |"
    assert text.count(header) == 3  # Acc, F1, ED
    acc = text.split("### F1")[0]
    rows = [line for line in acc.splitlines() if line.startswith("| methods |")]
    assert [r.split(" | ")[1] for r in rows] == [
        "symbolic",  # no model: one row whatever the variant
        "reverse-chain [copy-facts]",
        "reverse-chain [first]",
        "tot [copy-facts]",
        "tot [first]",
    ]
    assert "not filled in" in text  # the paper's numbers are not recalled from memory
    symbolic = TABLE.read_json(tmp_path / "runs" / "symbolic.json.gz")
    assert f"| methods | symbolic | {symbolic['groups']['stone']['accuracy']:.2f} |" in acc
    per_row = text.split("### Per row")[1]  # each row says what answered, from its run file's header
    assert " UTC, no model | `--planner symbolic" in per_row
    assert " UTC, stand-in first | `--planner tot --llm-stand-in first" in per_row


def test_a_second_call_resumes_every_row_from_its_run_file(tmp_path, capsys):
    argv = ["--runs", str(tmp_path), "--rows", "plan-and-solve", "--limit", "2", "--out", str(tmp_path / "t.md")]
    argv += ["--variant", "copy-facts=--llm-stand-in copy-facts"]
    assert TABLE.main(argv) == 0
    first = (tmp_path / "t.md").read_text()
    assert TABLE.main(argv) == 0
    assert "resuming" in capsys.readouterr().err
    table = (tmp_path / "t.md").read_text()
    assert table.split("### Per row")[0] == first.split("### Per row")[0]


def test_a_repeated_row_shows_mean_and_spread(tmp_path):
    argv = ["--runs", str(tmp_path), "--rows", "cot", "--limit", "2", "--out", str(tmp_path / "t.md")]
    argv += ["--variant", "copy-facts=--llm-stand-in copy-facts", "--repeat", "cot=2"]
    assert TABLE.main(argv) == 0
    assert "± 0.00" in (tmp_path / "t.md").read_text()


def test_an_unknown_row_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        TABLE.main(["--runs", str(tmp_path), "--rows", "o1"])
    assert exc.value.code == 2 and "unknown row(s) o1" in capsys.readouterr().err


def test_no_run_scores_a_row_cut_short_from_its_run_file(tmp_path):
    argv = ["--runs", str(tmp_path), "--rows", "cot", "--limit", "3", "--out", str(tmp_path / "t.md")]
    argv += ["--variant", "copy-facts=--llm-stand-in copy-facts"]
    assert TABLE.main(argv) == 0
    finished = (tmp_path / "t.md").read_text().split("### F1")[0]
    (tmp_path / "cot.copy-facts.json.gz").unlink()  # as if the row had been stopped before its results were written
    assert (tmp_path / "cot.copy-facts.jsonl.gz").is_file() and not (tmp_path / "cot.copy-facts.jsonl").exists()
    assert TABLE.main([*argv, "--no-run"]) == 0
    partial = (tmp_path / "t.md").read_text().split("### F1")[0]
    assert "cot [copy-facts] (run file cut short)" in partial
    row = next(line for line in finished.splitlines() if "cot [copy-facts]" in line)
    assert row.split(" | ")[2:] == next(line for line in partial.splitlines() if "cut short" in line).split(" | ")[2:]
    # a variant never run is named once, not given a row of dashes
    assert TABLE.main([*argv, "--no-run", "--variant", "first=--llm-stand-in first"]) == 0
    text = (tmp_path / "t.md").read_text()
    assert f"Not run (no run file under `{tmp_path}`): cot [first]." in text
    assert "| cot [first] |" not in text


def test_row_options_and_repeats_can_name_one_variant(tmp_path):
    argv = ["--runs", str(tmp_path), "--rows", "cot,deps", "--no-run"]
    argv += ["--variant", "copy-facts=--llm-stand-in copy-facts", "--variant", "taught=--threads 1"]
    argv += ["--with", "cot.taught=--deadline 300", "--with", "deps=--deps-rounds 2", "--repeat", "deps.copy-facts=3"]
    args = TABLE.parse_args(argv)
    run, out = tmp_path / "r.jsonl", tmp_path / "r.json"

    def options(key, variant):
        return " ".join(TABLE.eval_argv(args, key, variant, args.variants[variant], run, out))

    assert "--deadline 300" in options("cot", "taught") and "--deadline" not in options("cot", "copy-facts")
    assert all("--deps-rounds 2" in options("deps", v) for v in ("taught", "copy-facts"))
    assert "--repeats 3" in options("deps", "copy-facts") and "--repeats" not in options("deps", "taught")
    assert TABLE.shown_options(args, "cot", "taught", ["--threads", "1"]).endswith("--threads 1 --deadline 300")
    with pytest.raises(SystemExit):
        TABLE.parse_args([*argv, "--with", "cot.nosuch=--deadline 1"])


def test_the_memory_row_answers_from_a_memory_its_warm_up_pass_wrote(tmp_path):
    """BAR's module (c): a recording pass alone never answers (its runs are credited when it ends), so the
    row is measured after a warm-up pass that records and executes every plan."""
    argv = ["--runs", str(tmp_path), "--rows", "c-memory", "--limit", "2", "--out", str(tmp_path / "t.md")]
    argv += ["--variant", "copy-facts=--llm-stand-in copy-facts"]
    assert TABLE.main(argv) == 0
    warm = (tmp_path / "c-memory.copy-facts.warm-up.txt").read_text()
    measured = (tmp_path / "c-memory.copy-facts.txt").read_text()
    assert "memory: 0 of" in warm
    answered = measured.split("memory: ")[1].split(" of ")[0]
    assert int(answered) > 0
    assert "warm-up pass with --record --world stochastic --runs 5" in (tmp_path / "t.md").read_text()


def test_the_module_b_rows_on_plans_that_can_fail_repair_them(tmp_path):
    # bar's verifier lets no failing plan through, so the b-free rows ask llm-only without the graph's check or
    # facts; the `first` stand-in (always the grammar's first option) writes plans that fail, and the rows with
    # state consistency repair them
    argv = ["--runs", str(tmp_path), "--rows", "b-free,b-free-t5,b-free-k2", "--limit", "2"]
    argv += ["--variant", "first=--llm-stand-in first", "--out", str(tmp_path / "t.md")]
    assert TABLE.main(argv) == 0
    summary = {
        key: TABLE.read_json(tmp_path / f"{key}.first.json.gz")["summary"]
        for key in ("b-free", "b-free-t5", "b-free-k2")
    }
    assert summary["b-free"]["executable"] == 0
    assert summary["b-free-t5"]["executable"] == 2 and summary["b-free-k2"]["executable"] == 2
    text = (tmp_path / "t.md").read_text()
    assert "| module (b) | llm-only, free + step scoring t=5 [first] |" in text
