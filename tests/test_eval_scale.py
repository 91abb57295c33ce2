"""Evaluation at scale: chosen tasks, worker processes identical to serial, resume after kills, run files."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys

import pytest

from barsym.eval import load_dataset
from barsym.eval.runfile import RunFile, RunFileError, read_run
from barsym.eval.scale import run_evaluation, run_header, select_tasks
from barsym.eval.spec import RunSpec, WorldSpec, task_from_data, task_to_data
from barsym.report.tables import format_details, format_table
from cli_run import run
from testdata import BAR_DIR, REPO

FAKE = "barsym.testing.fakes:facts_model"


@pytest.fixture(scope="module")
def tasks(kb):
    return load_dataset(BAR_DIR, kb)


def decided(records: dict) -> dict:
    """Records without their times: what must not depend on where or when a task ran."""
    out = {}
    for key, r in records.items():
        r = {k: v for k, v in r.items() if k != "seconds"}
        r["stats"] = {k: v for k, v in (r.get("stats") or {}).items() if "seconds" not in k}
        out[key] = r
    return out


def test_task_spec_round_trips(tasks):
    for task in tasks[:5]:
        data = json.loads(json.dumps(task_to_data(task)))
        again = task_from_data(data)
        assert again.key == task.key and again.goal == task.goal
        assert again.reference.steps == task.reference.steps


def test_select_tasks(tasks):
    assert [t.key for t in select_tasks(tasks, names=["iron/bucket", "diamond_pickaxe"])] == [
        "iron/bucket",
        "diamond/diamond_pickaxe",
    ]
    iron_gold = select_tasks(tasks, groups=["gold", "iron"])
    assert {t.group for t in iron_gold} == {"iron", "gold"} and len(iron_gold) == 28
    assert [t.key for t in select_tasks(tasks, groups=["iron"], limit=2)] == [t.key for t in iron_gold[:2]]


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--tasks", "bukcet"], "no task 'bukcet' in the data set (did you mean bucket?)"),
        (["--groups", "wood"], "no group 'wood' in the data set; its groups: stone, iron, gold, redstone, diamond"),
        (["--limit", "0"], "--limit must be"),
        (["--workers", "many"], "--workers must be"),
        (["--tasks", " , "], "--tasks needs at least one name"),
        (["--ray-address", "127.0.0.1:6379"], "--ray-address needs --executor ray"),
    ],
)
def test_bad_selection_is_one_line_exit_2(capsys, argv, words):
    code, out, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", *argv)
    assert code == 2 and out == "" and words in err and err.count("\n") == 1


def test_table_in_the_papers_group_order_and_steps_in_words(capsys):
    code, out, _ = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic")
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("group"))
    assert [line.split()[0] for line in lines[header + 1 : header + 7]] == [
        "stone",
        "iron",
        "gold",
        "redstone",
        "diamond",
        "all",
    ]
    assert "barsym craft 9 planks" in out or "barsym mine " in out  # "craft 9 planks", as every command writes
    assert "craft planks 9" not in out


@pytest.mark.parametrize(
    "planner, backend, world",
    [
        ("symbolic", None, WorldSpec("stochastic", 5, seed=3)),
        ("bar", FAKE, None),
        ("llm-only", FAKE, None),
    ],
)
def test_workers_give_the_serial_results(kb, tasks, planner, backend, world):
    spec = RunSpec(planner, backend=backend, world=world)
    chosen = tasks[::4]  # 14 tasks from every group
    serial = run_evaluation(spec, chosen, kb, name=planner)
    pooled = run_evaluation(spec, chosen, kb, name=planner, workers=2)
    assert decided(serial.records) == decided(pooled.records)
    assert format_table(serial.evaluation) == format_table(pooled.evaluation)
    assert format_details(serial.evaluation) == format_details(pooled.evaluation)
    assert [o.task.key for o in pooled.evaluation.outcomes] == [t.key for t in chosen]
    if backend:  # the scripted model was asked, and some answers were refused
        stats = [r["stats"] for r in serial.records.values()]
        assert sum(s["llm_calls"] for s in stats) > 0
        if planner == "bar":  # the verifier refused some, the fallback answered them
            assert sum(s["rejected"] for s in stats) > 0 and sum(s["fallbacks"] for s in stats) > 0
    if world:
        assert serial.executions.keys() == pooled.executions.keys() and serial.executions


def test_cli_workers_print_what_serial_prints(capsys, tmp_path):
    outputs = []
    for workers in ("1", "2"):
        code, out, err = run(
            capsys,
            "eval",
            "--dataset",
            BAR_DIR,
            "--planner",
            "symbolic",
            "--groups",
            "gold",
            "--workers",
            workers,
            "-o",
            tmp_path / f"{workers}.json",
        )
        # piped: no progress bar, a line per task (in the order they end), nothing else
        assert (
            code == 0
            and sorted(err.splitlines())
            == sorted(re.findall(r"barsym: eval \d/7 gold/\w+: planned, valid, \d+\.\d s", err))
            and err.count("\n") == 7
        )
        outputs.append([line for line in out.splitlines() if not line.startswith("wall time")])
    assert outputs[0] == outputs[1]
    a, b = (json.loads((tmp_path / f"{w}.json").read_text()) for w in ("1", "2"))
    assert a["groups"] == b["groups"] and a["overall"] == b["overall"]


# -- run files and resume ----------------------------------------------------------------------

KILLED_RUN = """
import sys
from pathlib import Path
from barsym.kb import load_kb
from barsym.eval import load_dataset
from barsym.eval.scale import run_evaluation
from barsym.eval.spec import RunSpec
if __name__ == "__main__":
    kb = load_kb()
    tasks = load_dataset(sys.argv[1], kb)
    spec = RunSpec("bar", backend="barsym.testing.fakes:slow_facts_model")
    run_evaluation(spec, tasks, kb, name="bar", run_path=Path(sys.argv[2]), workers=int(sys.argv[3]))
"""


MAX_KILLS = 8


def test_killed_and_resumed_runs_equal_an_uninterrupted_one(kb, tasks, tmp_path):
    script = tmp_path / "killed_run.py"
    script.write_text(KILLED_RUN)
    path = tmp_path / "run.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    chance = random.Random(14)
    kills = 0
    # Killed at random points a bounded number of times, then let finish: on a loaded machine a run may
    # not get past its start within the kill window, and the test must not depend on the machine's speed.
    for attempt in range(MAX_KILLS + 1):
        workers = "2" if attempt % 3 == 2 else "1"
        process = subprocess.Popen(
            [sys.executable, str(script), str(BAR_DIR), str(path), workers],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            process.wait(timeout=chance.uniform(0.8, 3.0) if attempt < MAX_KILLS else None)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the run and its workers, at a random point
            process.wait()
            kills += 1
            continue
        assert process.returncode == 0, process.stderr.read().decode()[-2000:]
        break
    else:
        pytest.fail(f"the run never finished after {MAX_KILLS} kills")
    assert kills >= 2  # it was really interrupted, more than once
    header, records, _ = read_run(path)
    keys = [r["key"] for r in records]
    assert len(keys) == len(set(keys)) == len(tasks)  # nothing lost, nothing repeated
    assert path.read_bytes().count(b"\n") == len(tasks) + 1  # no cut-off line left inside
    whole = run_evaluation(RunSpec("bar", backend="barsym.testing.fakes:slow_facts_model"), tasks, kb, name="bar")
    assert decided({r["key"]: r for r in records}) == decided(whole.records)
    resumed = run_evaluation(
        RunSpec("bar", backend="barsym.testing.fakes:slow_facts_model"), tasks, kb, name="bar", run_path=path
    )
    assert resumed.ran == 0 and resumed.resumed == len(tasks)
    assert format_table(resumed.evaluation) == format_table(whole.evaluation)
    assert format_details(resumed.evaluation) == format_details(whole.evaluation)


def test_a_cut_off_last_line_is_run_again(kb, tasks, tmp_path):
    spec = RunSpec("symbolic")
    chosen = tasks[:6]
    path = tmp_path / "run.jsonl"
    whole = run_evaluation(spec, chosen, kb, name="symbolic", run_path=path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:4]) + lines[4][:25])  # header, 3 tasks, and a write cut short
    again = run_evaluation(spec, chosen, kb, name="symbolic", run_path=path)
    assert again.resumed == 3 and again.ran == 3
    assert decided(again.records) == decided(whole.records)
    _, records, _ = read_run(path)
    assert sorted(r["key"] for r in records) == sorted(t.key for t in chosen)


def test_run_files_that_cannot_be_used(capsys, kb, tasks, tmp_path):
    path = tmp_path / "run.jsonl"
    argv = ["eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "2", "--run", path, "--quiet"]
    code, _, err = run(capsys, *argv)
    assert code == 0 and err == ""
    code, out, err = run(
        capsys,
        "eval",
        "--dataset",
        BAR_DIR,
        "--planner",
        "symbolic",
        "--rules",
        "crafting",
        "--limit",
        "2",
        "--run",
        path,
    )
    assert code == 2 and "other settings (differs in rules)" in err and err.count("\n") == 1
    lines = path.read_text().splitlines()
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("\n".join([lines[0], "{oops", lines[1], ""]))
    code, _, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "2", "--run", damaged)
    assert code == 2 and "line 2 is not a JSON record" in err
    other = tmp_path / "plan.jsonl"
    other.write_text('{"type": "craft", "obj_name": "stick", "obj_num": 4}\n')
    code, _, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--run", other)
    assert code == 2 and "not a barsym run file" in err
    assert other.read_text() == '{"type": "craft", "obj_name": "stick", "obj_num": 4}\n'  # never overwritten
    header = run_header(RunSpec("symbolic", rules="survival"), str(BAR_DIR.resolve()), None, 2)  # as eval writes it
    with RunFile(path, header):
        with pytest.raises(RunFileError, match="another barsym run is writing it"):
            RunFile(path, header)


def test_progress_bar_on_a_terminal(tmp_path):
    from barsym.commands.progress_line import EvalProgress

    class Terminal:
        def __init__(self):
            self.text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

        def isatty(self):
            return True

    screen = Terminal()
    progress = EvalProgress(screen)
    progress.start(10, 4)
    progress.finished({"key": "iron/bucket"})
    line = progress._bar.render()
    progress.close()
    assert "5/10 tasks" in line and "<" in line and "iron/bucket" in line and "5/10" in screen.text


def test_options_a_planner_ignores_are_reported(capsys):
    code, out, err = run(
        capsys,
        "eval",
        "--dataset",
        BAR_DIR,
        "--planner",
        "symbolic",
        "--limit",
        "1",
        "--model",
        "m.gguf",
        "--llm-seed",
        "3",
        "--quiet",
    )
    assert code == 0 and "planner symbolic" in out
    assert err == "barsym: warning: the symbolic planner asks no model; ignored: --model, --llm-seed\n"


@pytest.mark.ray
def test_ray_executor_gives_the_serial_results(kb, tasks):
    ray = pytest.importorskip("ray", reason="Ray is optional: pip install 'barsym[ray]'")
    chosen = tasks[::9]
    try:
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="ERROR",
            runtime_env={"env_vars": {"PYTHONPATH": str(REPO / "src")}},
        )
        for spec in (RunSpec("symbolic", world=WorldSpec("stochastic", 3)), RunSpec("bar", backend=FAKE)):
            serial = run_evaluation(spec, chosen, kb, name=spec.planner)
            remote = run_evaluation(spec, chosen, kb, name=spec.planner, executor="ray", workers=2)
            assert decided(serial.records) == decided(remote.records)
            assert format_table(serial.evaluation) == format_table(remote.evaluation)
    finally:
        ray.shutdown()


def test_pool_workers_report_their_goals(kb, tasks):
    seen: list[tuple[str, str]] = []
    spec = RunSpec("bar", backend=FAKE)
    chosen = tasks[:4]
    run_evaluation(spec, chosen, kb, name="bar", workers=2, on_goal=lambda key, text: seen.append((key, text)))
    assert {key for key, _ in seen} <= {t.key for t in chosen} and len({key for key, _ in seen}) >= 2
    assert any(re.match(r"goal \d+( of about \d+)?: ", text) for _, text in seen)


@pytest.mark.ray
def test_a_ray_address_nothing_answers_at_is_one_line_exit_2(capsys):
    pytest.importorskip("ray", reason="Ray is optional: pip install 'barsym[ray]'")
    code, out, err = run(
        capsys,
        "eval",
        "--dataset",
        BAR_DIR,
        "--planner",
        "symbolic",
        "--limit",
        "1",
        "--executor",
        "ray",
        "--ray-address",
        "127.0.0.1:1",
    )
    assert code == 2 and out == "" and err.count("\n") == 1 and "nothing answers there" in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_run_file_that_cannot_be_written_is_refused_before_any_task(capsys, tmp_path):
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o500)
    target = folder / "run.jsonl"
    code, out, err = run(capsys, "eval", "--dataset", BAR_DIR, "--planner", "symbolic", "--limit", "1", "--run", target)
    assert code == 2 and out == "" and f"--run {target}: cannot write there" in err and not target.exists()


def test_a_run_of_a_bundled_set_resumes_after_barsym_moved(capsys, tmp_path):
    """The bundled set's folder moves with every reinstall or checkout; a run of ``--dataset bar`` resumes by the
    set's name. A folder of the user's own that moved is another data set, and is still refused."""
    run_file = tmp_path / "run.jsonl"
    base = ["eval", "--dataset", "bar", "--planner", "symbolic", "--quiet", "--limit", "2", "--run", run_file]
    assert run(capsys, *base)[0] == 0
    lines = run_file.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["dataset_name"] == "bar"
    header["dataset"] = "/elsewhere/site-packages/barsym/datasets/bar"  # the same set, installed elsewhere
    run_file.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    code, out, err = run(capsys, *base)
    assert code == 0, err
    assert len(run_file.read_text().splitlines()) == len(lines)  # nothing planned again
    header["dataset"], header["dataset_name"] = "/elsewhere/mine", "/elsewhere/mine"
    run_file.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    code, out, err = run(capsys, *base)
    assert code == 2 and "other settings" in err


def test_a_run_made_with_another_adapter_file_is_not_resumed(capsys, tmp_path):
    """The header names the model a run's tasks ran by its files' SHA-256: a resume with another adapter (a
    retrained one under the same name) would make the header name a model the new tasks did not run."""
    from barsym.eval.runfile import RunFileError, check_resumable

    run_file = tmp_path / "run.jsonl"
    base = ["eval", "--dataset", "bar", "--llm-stand-in", "copy-facts", "--quiet", "--limit", "1", "--run", run_file]
    assert run(capsys, *base)[0] == 0
    lines = run_file.read_text().splitlines()
    header = json.loads(lines[0])
    files = {"gguf": "m.gguf", "gguf_sha256": "a" * 64, "adapter": "t.gguf", "adapter_sha256": "b" * 64}
    header["model"] = {**header["model"], **files}
    run_file.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    check_resumable(run_file, header)  # the same files: resumed
    retrained = {**header, "model": {**header["model"], "adapter_sha256": "c" * 64}}
    with pytest.raises(RunFileError, match=r"another adapter \(t.gguf, sha256 bbbbbbbbbbbb; now sha256 cccccccccccc\)"):
        check_resumable(run_file, retrained)
    bare = {**header, "model": {**header["model"], "adapter": "none", "adapter_sha256": None}}
    with pytest.raises(RunFileError, match=r"another adapter \(t.gguf; now none\)"):
        check_resumable(run_file, bare)
    old = {**header, "model": {"gguf": "m.gguf", "adapter": "shipped"}}  # a header from before the digests
    run_file.write_text("\n".join([json.dumps(old), *lines[1:]]) + "\n")
    check_resumable(run_file, header)
