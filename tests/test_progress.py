"""Progress that moves: the eval bar's clock and ETA between events, execute's run counter, Ctrl-C's hint, and the
lines that stand in for them when stderr is not a terminal.

On a terminal rich draws the lines (:mod:`barsym.commands.progress_line`); a test reads the line as rich would draw
it now (``render()``). Every clock here is a fake one the test moves by hand; nothing asserts how long anything took.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from barsym.commands import progress_line as progress_bar
from barsym.commands.progress_line import EvalProgress, ProgressLine, TerminalProgress, clock_text
from barsym.eval.runfile import read_run
from barsym.reasoning.calls.progress import Phase, ProgressEvent
from cli_run import run
from testdata import BAR_DIR, REPO


class Terminal(io.StringIO):
    """A stderr that says it is a terminal and keeps what was drawn."""

    def isatty(self):
        return True


class Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fake_clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_bar, "CLOCK", clock)
    monkeypatch.setattr(progress_bar, "REFRESH", None)  # the test reads the line by hand, as rich's thread draws it
    return clock


def elapsed_and_remaining(line: str) -> tuple[str, str]:
    return re.search(r"\[([\d:]+)<([\d:?]+)", line).groups()


def test_the_clock_moves_while_the_first_goal_is_planned(fake_clock):
    line = ProgressLine(Terminal(), total=10, unit="task", label="eval")
    assert "0/10 tasks [00:00<?]" in line.render()
    fake_clock.now += 20  # a 20 s goal: no event at all
    assert elapsed_and_remaining(line.render()) == ("00:20", "?")  # was: [00:00<? for the whole 20 s
    line.close()


def test_the_eta_counts_down_between_tasks_and_grows_with_a_slow_one(fake_clock):
    line = ProgressLine(Terminal(), total=5, unit="task", label="eval")
    fake_clock.now += 10
    line.update(1)  # one task in 10 s: 4 left, 40 s
    assert elapsed_and_remaining(line.render()) == ("00:10", "00:40") and "10.0 s/task" in line.render()
    seen = []
    for _ in range(3):  # the next task runs: the estimate goes down with the clock
        fake_clock.now += 3
        seen.append(elapsed_and_remaining(line.render()))
    assert seen == [("00:13", "00:37"), ("00:16", "00:34"), ("00:19", "00:31")]
    fake_clock.now += 11  # 20 s into a task where the mean is 10: 3 left at the mean as if it ended now (30 / 2)
    assert elapsed_and_remaining(line.render()) == ("00:30", "00:45")
    fake_clock.now += 10
    assert elapsed_and_remaining(line.render()) == ("00:40", "01:00")  # still moving (3 * 40 / 2)
    line.close()


def test_a_resumed_run_counts_only_its_own_tasks_for_the_eta(fake_clock):
    line = ProgressLine(Terminal(), total=10, done=8, unit="task")
    assert "8/10 tasks [00:00<?]" in line.render()
    fake_clock.now += 5
    line.update(1)
    assert "9/10 tasks [00:05<00:05" in line.render()
    line.close()


def test_riches_thread_redraws_without_events(monkeypatch):
    monkeypatch.setattr(progress_bar, "REFRESH", 100.0)
    screen = Terminal()
    line = ProgressLine(screen, total=3, unit="task")
    try:
        for _ in range(2000):  # waits for the thread's redraws, however slow the machine (no time asserted)
            if screen.getvalue().count("\r") >= 3:
                break
            time.sleep(0.01)
    finally:
        line.close()
    assert screen.getvalue().count("\r") >= 3


def test_the_line_is_wiped_for_a_result_and_drawn_again_after_it(fake_clock):
    screen = Terminal()
    line = ProgressLine(screen, total=3, unit="run", label="execute")
    line.clear()  # a result is printed to stdout now
    wiped = len(screen.getvalue())
    line.update(1)
    assert "1/3" in screen.getvalue()[wiped:]  # drawn again, under the result
    line.close()
    assert "\x1b[?25h" in screen.getvalue()  # rich hid the cursor while it drew, and shows it again


def test_eval_bar_shows_the_time_spent_on_a_goal(fake_clock):
    """The planner's goal events update the line; the clock keeps moving between them."""
    progress = EvalProgress(Terminal())
    progress.start(4, 0)
    progress.task_started("stone/furnace")
    progress.goal("stone/furnace", "goal 1 of about 9: 1 furnace")
    fake_clock.now += 7
    line = progress._bar.render()
    assert elapsed_and_remaining(line) == ("00:07", "?") and "goal 1 of about 9: 1 furnace" in line
    progress.finished({"key": "stone/furnace"})
    assert "1/4 tasks [00:07<00:21" in progress._bar.render()
    progress.close()


def test_eval_bar_moves_while_a_fake_planner_plans(fake_clock, kb):
    """A whole (in-process) evaluation with a planner that takes 20 s a task: mid-plan the line shows the time."""
    from barsym.eval import load_dataset
    from barsym.eval.scale import run_evaluation
    from barsym.eval.spec import RunSpec
    from barsym.planner import make_planner

    progress = EvalProgress(Terminal())
    seen = []

    class SlowPlanner:
        name = "symbolic"
        inner = make_planner("symbolic", kb)

        def plan(self, goal, start=None):
            fake_clock.now += 20  # planning the goal ... while the line is drawn
            seen.append(elapsed_and_remaining(progress._bar.render()))
            return self.inner.plan(goal)

    tasks = load_dataset(BAR_DIR, kb)[:3]
    run_evaluation(
        RunSpec("symbolic"),
        tasks,
        kb,
        name="symbolic",
        planner=SlowPlanner(),
        **progress.hooks(),  # what a script calling the library passes to get the bar
    )
    progress.close()
    assert seen == [("00:20", "?"), ("00:40", "00:20"), ("01:00", "00:00")]


def test_task_names_are_escaped_and_not_read_as_markup(fake_clock):
    progress = TerminalProgress(Terminal())
    progress.task("task 1/1 g/\x1b[2J[bold]x")

    class Stats:
        goals = llm_calls = accepted_first_try = accepted_after_feedback = fallbacks = 1

    progress(ProgressEvent(Phase.GOAL, "1 stick", 1, 3, Stats()))
    shown = progress.render()
    assert "g/\\x1b[2J[bold]x: goal 1 of about 3: 1 stick (1 LLM calls, 2 accepted, 1 fallbacks)" in shown
    progress.clear()


def test_clock_text():
    assert [clock_text(s) for s in (None, 0, 59.9, 61, 3600 + 62)] == ["?", "00:00", "00:59", "01:01", "1:01:02"]


def test_execute_shows_its_runs_at_once_and_as_they_go(fake_clock, monkeypatch, capsys, tmp_path):
    plan = tmp_path / "logs.jsonl"
    plan.write_text('{"type": "mine", "obj_name": "logs", "obj_num": 1, "tool": null}\n')
    screen = Terminal()
    drawn = []
    real = ProgressLine.update

    def update(self, count=1, postfix=None, force=False):  # what the line says after each run
        real(self, count, postfix, force)
        drawn.append(self.render())

    monkeypatch.setattr(ProgressLine, "update", update)
    monkeypatch.setattr(sys, "stderr", screen)  # a terminal: barsym puts its escaping stream over it
    code, out, _ = run(capsys, "execute", plan, "--runs", "500")
    assert code == 0 and "500 runs in the stochastic world" in out
    first = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue()).split("\r")[0]  # colours and moves left out
    assert first.startswith("execute ") and re.search(r" 0/500 runs \[00:00<\?\]", first)  # before the first run
    counts = [int(re.search(r"(\d+)/500 runs", d).group(1)) for d in drawn]
    assert counts == list(range(1, 501)) and drawn[-1].startswith("execute") and "100%" in drawn[-1]
    assert screen.getvalue().endswith("\x1b[2K")  # wiped at the end


def test_execute_draws_nothing_when_stderr_is_not_a_terminal(capsys, tmp_path):
    plan = tmp_path / "logs.jsonl"
    plan.write_text('{"type": "mine", "obj_name": "logs", "obj_num": 1, "tool": null}\n')
    code, _, err = run(capsys, "execute", plan, "--runs", "50")
    assert code == 0 and err == ""


# ------------------------------------------------------------------ piped: a line per task or phase, --quiet: none


def test_a_piped_eval_says_each_task_as_it_ends_and_quiet_says_nothing(capsys):
    code, out, err = run(capsys, "eval", "--dataset", "bar", "--planner", "symbolic", "--limit", "3")
    lines = err.splitlines()
    assert code == 0 and len(lines) == 3 and "\r" not in err and "\x1b" not in err
    assert re.fullmatch(r"barsym: eval 1/3 stone/cobblestone: planned, valid, \d+\.\d s", lines[0])
    assert lines[2].startswith("barsym: eval 3/3 ")
    code, out, err = run(capsys, "eval", "--dataset", "bar", "--planner", "symbolic", "--limit", "3", "--quiet")
    assert code == 0 and err == ""


def test_a_piped_plan_says_each_long_phase_and_then_every_ten_seconds(kb, fake_clock, monkeypatch):
    """``plan`` with a model, stderr piped: the goals get a line once they have gone on for 5 s, and one more at most
    every 10 s (a 65 s plan printed nothing until it was done); a long model load is said when it is over, so that
    a setting found unusable while loading is still one line."""
    from barsym.model import Goal
    from barsym.planner import make_planner
    from barsym.testing.fakes import FactsModel

    class Piped(io.StringIO):  # notes the clock at each line
        times: list[float] = []

        def write(self, text):
            self.times += [fake_clock.now] * text.count("\n")
            return super().write(text)

    from barsym.commands import progress_piped

    monkeypatch.setattr(progress_piped, "AFTER_SECONDS", 5.0)  # as barsym runs (conftest puts it off)
    piped = Piped()
    progress = TerminalProgress(piped)

    def wait(seconds):  # time passes; the daemon thread looks once a second
        for _ in range(seconds):
            fake_clock.now += 1
            progress.lines.tick()

    class Slow(FactsModel):
        def execute(self, request):
            wait(6)  # each answer takes 6 s
            return super().execute(request)

    bar = make_planner("bar", kb, backend=Slow(), progress=progress, llm_mode="vocab", log=False)
    progress(ProgressEvent(Phase.LOADING, "loading the model m.gguf"))
    wait(7)  # a slow load: said when it is over (an error in it would be the one line), with its time
    assert piped.getvalue() == ""
    bar.plan(Goal(item="stone_pickaxe"))  # the prompt is quick: no line for it
    lines = piped.getvalue().splitlines()
    assert lines[0] == "barsym: loading the model m.gguf ... (7.0 s)"
    goals = [int(re.fullmatch(r"barsym: goal (\d+) of about \d+: .+", x).group(1)) for x in lines[1:]]
    times = piped.times[1:]
    assert goals[0] == 1 and len(goals) >= 2 and goals == sorted(set(goals))
    assert all(10 <= b - a for a, b in zip(times, times[1:])) and len(goals) < bar.decomposer.caller.stats.llm_calls
    progress.clear()
    quiet = io.StringIO()
    silent = TerminalProgress(quiet, quiet=True)
    silent(ProgressEvent(Phase.LOADING, "loading the model m.gguf"))
    silent.say("parsing plan.txt")
    fake_clock.now += 60
    silent.lines.tick()
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("command", ["plan", "parse", "eval"])
def test_quiet_is_a_flag_of_the_long_commands(capsys, command):
    with pytest.raises(SystemExit):
        run(capsys, command, "-h")
    assert "--quiet" in capsys.readouterr().out


def test_a_resumed_eval_says_how_many_tasks_it_kept(capsys, tmp_path):
    path = tmp_path / "run.jsonl"
    base = ["eval", "--dataset", "bar", "--planner", "symbolic", "--quiet", "--run", path]
    assert run(capsys, *base, "--limit", "2")[0] == 0
    code, _, err = run(capsys, *base, "--limit", "3")
    assert code == 0 and err == f"barsym: resuming {path}: 2 of 3 task(s) kept, 1 to run\n"


def test_ctrl_c_without_a_run_file_says_how_to_keep_tasks(capsys, monkeypatch):
    from barsym.eval import scale

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("barsym.commands.eval.run_evaluation", interrupted)
    assert scale.run_evaluation is not interrupted
    code, out, err = run(capsys, "eval", "--dataset", "bar", "--planner", "symbolic", "--limit", "1")
    assert code == 130 and out == ""
    assert err == (
        "barsym: interrupted; no task was kept: run with --run FILE.jsonl to keep each finished task and "
        "resume after a stop\n"
    )


def test_sigint_to_a_real_eval_names_the_run_file_to_resume_with(tmp_path):
    """A real ``barsym eval`` process, Ctrl-C'd (SIGINT) once its first task is in the run file."""
    path = tmp_path / "run.jsonl"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    # every plan executed 20000 times: slow enough per task to be caught part-way, 53 tasks
    argv = [
        "eval",
        "--dataset",
        str(BAR_DIR),
        "--planner",
        "symbolic",
        "--world",
        "stochastic",
        "--runs",
        "20000",
        "--quiet",
        "--run",
        str(path),
    ]
    process = subprocess.Popen(
        [sys.executable, "-c", "from barsym.cli import main; raise SystemExit(main())", *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(6000):  # until the header and one record are on disk (up to ten minutes on a busy machine)
            if path.is_file() and path.read_bytes().count(b"\n") >= 2 or process.poll() is not None:
                break
            time.sleep(0.1)
        assert process.poll() is None, "the run ended before it could be interrupted"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    kept = len({r["key"] for r in read_run(path)[1]})
    assert process.returncode == 130 and 1 <= kept < 53
    assert err == (
        f"barsym: interrupted; resume with --run {path} ({kept} finished task(s) kept in it; the same "
        "command again runs the rest)\n"
    ), err
    # and resumed (on the tasks already done, so nothing long runs again), it says what it kept
    first = read_run(path)[1][0]["key"]
    done = subprocess.run(
        [sys.executable, "-c", "from barsym.cli import main; raise SystemExit(main())", *argv, "--tasks", first],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stderr == f"barsym: resuming {path}: 1 of 1 task(s) kept, 0 to run\n"
