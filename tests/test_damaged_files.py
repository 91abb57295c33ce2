"""Damaged files barsym reads, and what it says: one line naming the file (and record), never a traceback.

Tables in the style of tests/test_bad_input.py, one section per kind of file
of issue 20 ("Reliability"): memory exports, run-file records, the records a
report reads, and input files that are too large or not files at all.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys

import pytest

from barsym.bar_io import MAX_INPUT_BYTES, InputFileError, read_input
from barsym.report.html_report import load_runs
from cli_run import one_line, run
from testdata import BAR_DIR, EXPERT_FILES, REPO

pytestmark = pytest.mark.skipif(not BAR_DIR.exists(), reason="BAR dataset not available")


# ------------------------------------------------------------------ memory import: the store's own models decide


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """One exported memory line (two BAR tasks planned, executed, recorded, exported)."""
    folder = tmp_path_factory.mktemp("memory")
    memory, out = folder / "m.sqlite", folder / "m.jsonl"
    from barsym.cli import main

    assert (
        main(["memory", "build", "--memory", str(memory), "--dataset", str(BAR_DIR), "--limit", "2", "--runs", "3"])
        == 0
    )
    assert main(["memory", "export", str(out), "--memory", str(memory)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def _first_decomposition(record: dict) -> dict:
    return record["decompositions"][0]


def import_damaged(capsys, tmp_path, exported, damage) -> tuple[str, int]:
    """Import the export with its last record damaged: refused in one line (exit 2), nothing imported.

    The error line and the number of records the file held."""
    bad = copy.deepcopy(exported)
    damage(bad[-1])
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in bad))
    memory = tmp_path / "target.sqlite"
    code, out, err = run(capsys, "memory", "import", path, "--memory", memory)
    assert code == 2 and one_line(err), err
    code, out, _ = run(capsys, "memory", "stats", "--memory", memory)
    assert code == 0 and json.loads(out)["plans"] == 0  # all or none
    return err, len(bad)


@pytest.mark.parametrize(
    "damage, words",
    [
        (lambda r: _first_decomposition(r).update(subgoals=[1, 2]), "decompositions.0.subgoals.0"),
        (lambda r: _first_decomposition(r).update(yields="lots"), "decompositions.0.yields"),
        (lambda r: _first_decomposition(r)["step"].update(type="teleport"), "decompositions.0.step.type"),
        (lambda r: _first_decomposition(r).update(context={"at_hand": 5}), "decompositions.0.context.at_hand"),
        (lambda r: _first_decomposition(r).update(goal_count=0), "decompositions.0.goal_count"),
        (lambda r: r.update(executions=[["stochastic", 0, 3, 4]]), "successes <= runs"),
        (lambda r: r.update(goal=["stick", "four"]), "goal.1"),
        (lambda r: r.pop("steps"), "steps"),
        (lambda r: r.update(extra=1), "extra"),
    ],
)
def test_import_refuses_what_the_store_cannot_read(capsys, tmp_path, exported, damage, words):
    err, n = import_damaged(capsys, tmp_path, exported, damage)
    assert f"record {n}" in err and words in err and "nothing imported" in err


def test_importing_one_export_twice_counts_it_once(capsys, tmp_path, exported):
    path = tmp_path / "m.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in exported + exported[:1]))  # one plan twice in the file
    memory = tmp_path / "m.sqlite"
    assert run(capsys, "memory", "import", path, "--memory", memory)[0] == 0
    first = json.loads(run(capsys, "memory", "stats", "--memory", memory)[1])
    code, out, _ = run(capsys, "memory", "import", path, "--memory", memory)
    assert code == 0 and "imported 0 plan(s)" in out and "already there" in out
    assert json.loads(run(capsys, "memory", "stats", "--memory", memory)[1]) == first
    assert first["plans"] == len(exported) + 1  # copies inside one export are kept as copies


# ------------------------------------------------------------------ run-file records: one line, the task runs again


def _timeless(value):
    """A result without its times: what must not depend on when a task ran."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _eval(capsys, run_file, *extra):
    code, out, err = run(
        capsys,
        "eval",
        "--dataset",
        BAR_DIR,
        "--planner",
        "symbolic",
        "--limit",
        "2",
        "--quiet",
        "--run",
        run_file,
        *extra,
    )
    # a resumed run's line saying what it kept is tested in test_progress; these tests read what follows it
    return (
        code,
        out,
        "".join(
            line for line in err.splitlines(keepends=True) if not line.startswith(f"barsym: resuming {run_file}: ")
        ),
    )


RECORD_DAMAGE = [
    ("missing error_kind", lambda r: (r.update(planned=False, error="x"), r.pop("error_kind", None)), "error_kind"),
    ("plan is a string", lambda r: r.update(plan="x"), "'plan' must be a list of steps"),
    ("empty plan said valid", lambda r: r.update(plan=[], verdict="valid"), "empty only for an invalid plan"),
    ("unknown item", lambda r: r["plan"][0].update(obj_name="unobtainium"), "unobtainium"),
    ("stats 7", lambda r: r.update(stats=7), "'stats' must be an object"),
    ("two-element score", lambda r: r["score"].update(f1=[1, 2]), "score.f1 must be 4 whole numbers"),
    ("NaN seconds", lambda r: r.update(seconds=float("nan")), "'seconds' must be a finite number"),
    ("planned is a string", lambda r: r.update(planned="yes"), "'planned' must be true or false"),
    ("bogus execution", lambda r: r.update(execution={"bogus": 1}), "'execution' must be an object"),
    ("no group", lambda r: r.pop("group"), "'key' and 'group' must be strings"),
    ("expert plan a string", lambda r: r.update(expert_plan="x"), "'expert_plan' must be a list of steps"),
    (
        "failures not a list",
        lambda r: r.update(execution={"planner": {"runs": 1, "successes": 0, "failures": 3}}),
        "execution.planner.failures must be a list",
    ),
]


@pytest.mark.parametrize("name, damage, words", RECORD_DAMAGE, ids=[c[0] for c in RECORD_DAMAGE])
def test_damaged_records_are_one_line_and_run_again(capsys, tmp_path, name, damage, words):
    run_file = tmp_path / "run.jsonl"
    fresh = tmp_path / "fresh.json"
    assert _eval(capsys, run_file, "-o", fresh)[0] == 0
    lines = run_file.read_text().splitlines()
    record = json.loads(lines[1])
    damage(record)
    lines[1] = json.dumps(record)
    run_file.write_text("\n".join(lines) + "\n")
    again = tmp_path / "again.json"
    code, out, err = _eval(capsys, run_file, "-o", again)
    assert code == 0 and one_line(err), err
    assert (
        f"{run_file}:2: damaged record of {record.get('key', json.loads(lines[2])['key'])}" in err
        or f"{run_file}:2: damaged record" in err
    )
    assert words in err and "run again" in err
    assert _timeless(json.loads(again.read_text())["tasks"]) == _timeless(json.loads(fresh.read_text())["tasks"])
    code, _, err = _eval(capsys, run_file)  # the re-run's record is the one read from now on
    assert code == 0 and err == ""


def test_stored_scores_are_recomputed_not_trusted(capsys, tmp_path):
    run_file, fresh, again = tmp_path / "run.jsonl", tmp_path / "fresh.json", tmp_path / "again.json"
    assert _eval(capsys, run_file, "-o", fresh)[0] == 0
    lines = run_file.read_text().splitlines()
    record = json.loads(lines[1])
    record["score"] = {"accuracy": [0, 9], "f1": [0, 9, 0, 9], "edit_distance": 9, "longest": 9}  # well formed, wrong
    lines[1] = json.dumps(record)
    run_file.write_text("\n".join(lines) + "\n")
    code, _, err = _eval(capsys, run_file, "-o", again)
    assert code == 0 and err == ""
    assert _timeless(json.loads(again.read_text())["groups"]) == _timeless(json.loads(fresh.read_text())["groups"])


def test_a_dataset_changed_in_place_is_not_resumed_with_stale_records(capsys, tmp_path):
    data = tmp_path / "bar"
    shutil.copytree(BAR_DIR, data)
    run_file = tmp_path / "run.jsonl"
    base = ["eval", "--dataset", data, "--planner", "symbolic", "--quiet", "--groups", "stone", "--run", run_file]
    assert run(capsys, *base)[0] == 0
    index = json.loads((data / "tasks.json").read_text())
    first = next(iter(index["stone"]))
    plan = data / "stone" / f"{first}.jsonl"
    plan.write_text("".join(plan.read_text().splitlines(keepends=True)[:1]))  # the expert plan changed in place
    resumed_json, fresh_json = tmp_path / "resumed.json", tmp_path / "fresh.json"
    assert run(capsys, *base, "-o", resumed_json)[0] in (0, 1)
    assert run(capsys, *base[:-2], "-o", fresh_json)[0] in (0, 1)
    resumed, fresh = json.loads(resumed_json.read_text()), json.loads(fresh_json.read_text())
    assert resumed["groups"] == fresh["groups"] and _timeless(resumed["tasks"]) == _timeless(fresh["tasks"])


# ------------------------------------------------------------------ report: 15 malformed fields, the rest is written

REPORT_DAMAGE = [
    ("NaN seconds", lambda r: r.update(seconds=float("nan"))),
    ("Infinity seconds", lambda r: r.update(seconds=float("inf"))),
    ("1e308 seconds", lambda r: r.update(seconds=1e308)),
    ("string seconds", lambda r: r.update(seconds="fast")),
    ("NaN in a score", lambda r: r["score"].update(accuracy=[float("nan"), 3])),
    ("Infinity in a score", lambda r: r["score"].update(f1=[1, float("inf"), 1, 1])),
    ("string edit distance", lambda r: r["score"].update(edit_distance="3")),
    ("2-element f1", lambda r: r["score"].update(f1=[1, 2])),
    (
        "NaN successes",
        lambda r: r.update(execution={"planner": {"runs": 3, "successes": float("nan")}, "expert": None}),
    ),
    ("string runs", lambda r: r.update(execution={"planner": {"runs": "3", "successes": 1}, "expert": None})),
    ("NaN in stats", lambda r: r["stats"].update(llm_calls=float("nan"))),
    ("string in stats", lambda r: r["stats"].update(goals="many")),
    ("stats 7", lambda r: r.update(stats=7)),
    (
        "deps rounds 10**9",
        lambda r: r["stats"].update(
            deps={"rounds": 10**9, "success_round": 1, "stopped": "x", "dropped_rounds": 0, "world": "w"}
        ),
    ),
    ("missing group", lambda r: r.pop("group")),
]


@pytest.fixture(scope="module")
def run_lines(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "run.jsonl"
    from barsym.cli import main

    assert (
        main(
            ["eval", "--dataset", str(BAR_DIR), "--planner", "symbolic", "--limit", "3", "--quiet", "--run", str(path)]
        )
        == 0
    )
    return path.read_text().splitlines()


@pytest.mark.parametrize("name, damage", REPORT_DAMAGE, ids=[c[0] for c in REPORT_DAMAGE])
def test_report_leaves_out_a_damaged_record_in_one_line(capsys, tmp_path, run_lines, name, damage):
    lines = list(run_lines)
    record = json.loads(lines[2])
    damage(record)
    lines[2] = json.dumps(record)
    path, html = tmp_path / "run.jsonl", tmp_path / "report.html"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = run(capsys, "report", path, "-o", html)
    assert code == 0 and one_line(err), err
    assert f"{path}:3: damaged record" in err and "left out of the report" in err
    assert "(3 run(s)" not in out and "2 task records" in out
    text = html.read_text()
    assert "inf %" not in text and "nan" not in text.lower().replace("nanum", "")


def test_report_leaves_out_a_run_with_a_bad_header(capsys, tmp_path, run_lines):
    bad, good, html = tmp_path / "bad.jsonl", tmp_path / "good.jsonl", tmp_path / "report.html"
    header = json.loads(run_lines[0])
    header["spec"] = {**header["spec"], "world": {"name": "stochastic", "runs": "many"}}
    bad.write_text("\n".join([json.dumps(header), *run_lines[1:]]) + "\n")
    good.write_text("\n".join(run_lines) + "\n")
    code, out, err = run(capsys, "report", bad, good, "-o", html)
    assert code == 0 and one_line(err) and f"{bad}:1: unusable run header" in err
    assert "1 run(s), 3 task records" in out and html.exists()


def test_report_of_executed_records_under_a_header_without_a_world(capsys, tmp_path, run_lines):
    path, html = tmp_path / "run.jsonl", tmp_path / "report.html"
    record = json.loads(run_lines[1])
    record["execution"] = {"planner": {"runs": 3, "successes": 2}, "expert": None}
    path.write_text("\n".join([run_lines[0], json.dumps(record), *run_lines[2:]]) + "\n")  # header: world null
    code, out, err = run(capsys, "report", path, "-o", html)
    assert code == 0 and err == "" and "Execution" in html.read_text()


def test_an_empty_invalid_plan_is_a_task_that_failed_not_a_damaged_record(tmp_path, run_lines):
    """A forward planner whose model wrote no readable step records ``plan: []``, verdict invalid: the
    report counts the task (not executable) instead of leaving it out, which would raise the success rate."""
    path = tmp_path / "run.jsonl"
    empty = json.loads(run_lines[1])
    empty.update(plan=[], steps=0, verdict="invalid")
    path.write_text("\n".join([run_lines[0], json.dumps(empty), *run_lines[2:]]) + "\n")
    warnings: list[str] = []
    [loaded] = load_runs([path], warnings)
    assert warnings == [] and len(loaded.records) == 3
    assert [r["verdict"] for r in loaded.records].count("invalid") >= 1


def test_load_runs_keeps_the_last_good_record_of_a_task(tmp_path, run_lines):
    path = tmp_path / "run.jsonl"
    broken = json.loads(run_lines[1])
    broken["seconds"] = "x"
    path.write_text("\n".join([run_lines[0], json.dumps(broken), *run_lines[1:]]) + "\n")
    warnings = []
    [loaded] = load_runs([path], warnings)
    assert len(loaded.records) == 3 and len(warnings) == 1 and f"{path}:2:" in warnings[0]


# ------------------------------------------------------------------ inputs: capped, and only regular files


def _fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return fifo


def _huge(tmp_path):
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(MAX_INPUT_BYTES + 1)  # sparse: no disk or memory used
    return huge


INPUTS = [
    ("validate", lambda p: ["validate", p]),
    ("inventory", lambda p: ["plan", "stick", "--planner", "symbolic", "--inventory", p]),
    ("dataset", lambda p: ["eval", "--dataset", p, "--planner", "symbolic"]),
    ("memory import", lambda p: ["memory", "import", p, "--memory", p.parent / "m.sqlite"]),
    ("run file", lambda p: ["report", p, "-o", p.parent / "r.html"]),
]


@pytest.mark.parametrize("kind", ["fifo", "huge", "/dev/zero"])
@pytest.mark.parametrize("reader, argv", INPUTS, ids=[c[0] for c in INPUTS])
def test_inputs_that_are_not_small_regular_files_are_one_line(capsys, tmp_path, reader, argv, kind):
    path = {"fifo": _fifo, "huge": _huge}.get(kind, lambda _: None)(tmp_path)
    if path is None:
        from pathlib import Path

        path = Path("/dev/zero")
        argv_list = argv(tmp_path / "x")  # where the command's other files go
        argv_list = [path if a == tmp_path / "x" else a for a in argv_list]
    else:
        argv_list = argv(path)
    code, out, err = run(capsys, *argv_list)
    assert code == 2 and one_line(err), err
    assert any(
        words in err for words in ("FIFO", "character device", "larger than the 64 MiB", "not a regular file")
    ), err


def test_a_pipe_is_read_as_the_shells_process_substitution_hands_it_over(capsys, tmp_path):
    """``barsym validate <(command)`` gets ``/dev/fd/N``, a pipe: it was refused as "a FIFO, not a file"."""
    reader, writer = os.pipe()
    os.write(writer, EXPERT_FILES[0].read_bytes())
    os.close(writer)
    try:
        code, out, err = run(capsys, "validate", f"/dev/fd/{reader}")
    finally:
        os.close(reader)
    assert code == 0 and err == "" and f"/dev/fd/{reader}: valid" in out
    # and through a real shell, as a user types it (bash's <(...)), for a plan and for an inventory
    plan = EXPERT_FILES[0]
    shell = (
        f"{sys.executable} -m barsym validate <(cat {plan}) && "
        f"{sys.executable} -m barsym plan stick --planner symbolic --inventory <(echo '{{\"planks\": 2}}')"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "BARSYM_LOG_DB": "off"}
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert ": valid (" in done.stdout and "inventory: 2 planks" in done.stdout


def test_a_pipe_nobody_writes_to_is_one_line_not_a_wait(tmp_path):
    fifo = _fifo(tmp_path)  # no writer: the read ends at once
    with pytest.raises(InputFileError, match="nothing written to it"):
        read_input(fifo)
    reader, writer = os.pipe()
    os.write(writer, b"x" * 100)
    os.close(writer)
    with pytest.raises(InputFileError, match="larger than"):
        read_input(f"/dev/fd/{reader}", limit=10)
    os.close(reader)


def test_read_input_is_the_one_reader():
    with pytest.raises(InputFileError, match="character device"):
        read_input("/dev/zero")
    assert read_input(EXPERT_FILES[0]) == EXPERT_FILES[0].read_bytes()


@pytest.mark.parametrize("layer", ["²", "٣", "１", "3x", "-1", "9999"])
@pytest.mark.parametrize(
    "command",
    [
        ["validate", EXPERT_FILES[0]],
        ["execute", EXPERT_FILES[0]],
        ["score", EXPERT_FILES[0], EXPERT_FILES[0]],
        ["repair", EXPERT_FILES[0]],
        ["plan", "stick", "--planner", "symbolic"],
    ],
    ids=["validate", "execute", "score", "repair", "plan"],
)
def test_a_layer_that_is_not_ascii_digits_is_one_line(capsys, command, layer):
    code, out, err = run(capsys, *command, "--layer", layer)
    assert code == 2 and one_line(err), err
    assert "--layer" in err or "start layer" in err
    assert "--memory" not in err


# ------------------------------------------------------------------ memory import: nonsense refused (issue 34)

NONSENSE = [
    ("unknown item in a step", lambda r: r.update(steps=["mine 3 unobtainium"]), "unknown item 'unobtainium'"),
    ("a step that is not one", lambda r: r.update(steps=["fly"]), "'fly' is not a step"),
    ("world moon", lambda r: r.update(executions=[["moon", 0, 3, 1]]), "unknown world 'moon'"),
    (
        "layer 99",
        lambda r: _first_decomposition(r)["context"].update(layer=99),
        "context layer 99 is deeper than the deepest",
    ),
    ("no steps", lambda r: r.update(steps=[]), "no steps"),
    ("control characters", lambda r: r.update(task="t\x1b[2Jx"), "control characters"),
    ("unknown goal", lambda r: r.update(goal=["unobtainium", 1]), "goal: unknown item 'unobtainium'"),
    (
        "unknown subgoal",
        lambda r: _first_decomposition(r).update(subgoals=[{"item": "moon_rock", "count": 1}]),
        "moon_rock",
    ),
    ("10**30 runs", lambda r: r.update(executions=[["stochastic", 0, 10**30, 10**30]]), "at most 1000000000"),
]


@pytest.mark.parametrize("name, damage, words", NONSENSE, ids=[c[0] for c in NONSENSE])
def test_import_refuses_nonsense_naming_the_first_bad_line(capsys, tmp_path, exported, name, damage, words):
    err, n = import_damaged(capsys, tmp_path, exported, damage)
    assert f"line {n}, record {n}" in err and words in err and "nothing imported" in err


@pytest.mark.parametrize(
    "text, words",
    [("[" * 50_000, "nested too deeply"), ("[" + "9" * 5000 + "]", "too long to read")],
    ids=["50000 nested", "5000 digits"],
)
def test_import_of_json_python_cannot_read_is_one_line(capsys, tmp_path, text, words):
    path = tmp_path / "bad.jsonl"
    path.write_text(text + "\n")
    code, out, err = run(capsys, "memory", "import", path, "--memory", tmp_path / "m.sqlite")
    assert code == 2 and one_line(err) and f"{path}:1:" in err and words in err, err


# ------------------------------------------------------------------ memory rows edited in the file (issue 34)


@pytest.fixture
def built(capsys, tmp_path):
    """A memory with three BAR tasks planned and executed, and a connection that can edit its rows."""
    import sqlite3

    path = tmp_path / "m.sqlite"
    code, _, err = run(
        capsys, "memory", "build", "--memory", path, "--dataset", BAR_DIR, "--limit", "3", "--runs", "10"
    )
    assert code == 0, err

    def edit(statement: str) -> None:
        db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA ignore_check_constraints = ON")  # what an editor of the file can do
        db.execute(statement)
        db.close()

    return path, edit


ROW_DAMAGE = [
    ("successes over runs", "UPDATE executions SET successes = runs + 100 WHERE id = 1", "execution row 1"),
    ("runs 1e308", "UPDATE executions SET runs = 1e308 WHERE id = 1", "execution row 1"),
    ("negative runs", "UPDATE executions SET runs = -4, successes = -5 WHERE id = 1", "execution row 1"),
    (
        "unknown subgoal",
        'UPDATE decompositions SET subgoals = \'[{"item": "moon_rock", "count": 1}]\' WHERE id = 1',
        "moon_rock",
    ),
    ("goal count -5", "UPDATE decompositions SET goal_count = -5 WHERE id = 1", "decomposition row 1"),
    ("goal count abc", "UPDATE decompositions SET goal_count = 'abc' WHERE id = 1", "decomposition row 1"),
    ("nested subgoals", "UPDATE decompositions SET subgoals = '" + "[" * 5000 + "' WHERE id = 1", "not JSON"),
]


@pytest.mark.parametrize("name, statement, words", ROW_DAMAGE, ids=[c[0] for c in ROW_DAMAGE])
def test_memory_show_skips_a_damaged_row_with_one_warning(capsys, built, name, statement, words):
    path, edit = built
    edit(statement)
    code, out, err = run(capsys, "memory", "show", "--format", "json", "--memory", path)
    assert code == 0 and one_line(err) and "warning" in err and words in err and "skipped" in err, err
    rows = json.loads(out)  # strict JSON: no Infinity, no NaN
    assert rows and all(0 <= r["successes"] <= r["runs"] <= 10**9 and 0 <= r["rate"] <= 1 for r in rows)
    code, text, _ = run(capsys, "memory", "show", "--memory", path)
    assert code == 0 and "inf" not in text and "210/10" not in text and "110/10" not in text


@pytest.mark.parametrize("name, statement, words", ROW_DAMAGE, ids=[c[0] for c in ROW_DAMAGE])
def test_plan_with_a_damaged_memory_warns_and_plans(capsys, built, name, statement, words):
    import sqlite3

    path, edit = built
    with sqlite3.connect(path) as db:  # the goal of the row damaged: planned, so the row is read
        item, count = db.execute("SELECT goal_item, goal_count FROM decompositions WHERE id = 1").fetchone()
    if "goal_count" in statement:  # a goal no longer: read among every remembered goal, for close-goal examples
        item, count = "iron_pickaxe", 1
    edit(statement)
    # bar, with a stand-in for the model: the LLM planner, reading what a model would be shown
    argv = ["plan", item, "--count", count, "--planner", "bar", "--llm-stand-in", "copy-facts", "--format", "bar"]
    code, out, err = run(capsys, *argv, "--memory", path, "--record")
    assert code == 0 and "Traceback" not in err and f'"obj_name": "{item}"' in out, err
    assert one_line(err) and err.startswith("barsym: warning: ") and words in err and "skipped" in err, err


@pytest.mark.parametrize(
    "statement",
    ["UPDATE plans SET steps = 'not json' WHERE id = 1", "UPDATE plans SET steps = '" + "[" * 5000 + "' WHERE id = 1"],
    ids=["not json", "5000 nested"],
)
def test_memory_export_skips_a_damaged_plan_with_one_warning(capsys, built, tmp_path, statement):
    path, edit = built
    edit(statement)
    target = tmp_path / "out.jsonl"
    code, out, err = run(capsys, "memory", "export", "--memory", path, "-o", target)
    assert code == 0 and one_line(err) and "plan 1 is damaged" in err and "skipped" in err, err
    lines = target.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["steps"] for line in lines)  # the other two plans
