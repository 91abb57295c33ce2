"""Progress that moves: the eval bar's clock and ETA between events, execute's run counter, Ctrl-C's hint.

Every clock here is a fake one the test moves by hand; nothing asserts how long anything took.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from barsym.commands import progress_line as progress_bar
from barsym.commands.progress_line import EvalProgress, ProgressLine, clock_text
from barsym.eval.runfile import read_run
from cli_run import run
from testdata import BAR_DIR, REPO


class Terminal:
    """A stderr that says it is a terminal and keeps what was drawn."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

    def isatty(self):
        return True

    def last(self) -> str:
        """The line on screen now (what the last redraw wrote)."""
        return self.text.rsplit("\r\033[K", 1)[-1]


class Clock:
    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fake_clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(progress_bar, "CLOCK", clock)
    monkeypatch.setattr(progress_bar, "TICK_SECONDS", None)  # the test redraws by hand, as the timer would
    monkeypatch.setenv("COLUMNS", "160")  # the line is cut to the terminal's width: one width for every machine
    return clock


def elapsed_and_remaining(line: str) -> tuple[str, str]:
    return re.search(r"\[([\d:]+)<([\d:?]+)", line).groups()


def test_the_clock_moves_while_the_first_goal_is_planned(fake_clock):
    screen = Terminal()
    line = ProgressLine(screen, total=10, unit="task", label="eval")
    assert "0/10 tasks [00:00<?]" in screen.last()
    fake_clock.now += 20  # a 20 s goal: no event at all
    line.draw()  # what the timer thread does every second
    assert elapsed_and_remaining(screen.last()) == ("00:20", "?")  # was: [00:00<? for the whole 20 s


def test_the_eta_counts_down_between_tasks_and_grows_with_a_slow_one(fake_clock):
    screen = Terminal()
    line = ProgressLine(screen, total=5, unit="task", label="eval")
    fake_clock.now += 10
    line.update(1)  # one task in 10 s: 4 left, 40 s
    assert elapsed_and_remaining(screen.last()) == ("00:10", "00:40")
    seen = []
    for _ in range(3):  # the next task runs: the estimate goes down with the clock
        fake_clock.now += 3
        line.draw()
        seen.append(elapsed_and_remaining(screen.last()))
    assert seen == [("00:13", "00:37"), ("00:16", "00:34"), ("00:19", "00:31")]
    fake_clock.now += 11  # 20 s into a task where the mean is 10: 3 left at the mean as if it ended now (30 / 2)
    line.draw()
    assert elapsed_and_remaining(screen.last()) == ("00:30", "00:45")
    fake_clock.now += 10
    line.draw()
    assert elapsed_and_remaining(screen.last()) == ("00:40", "01:00")  # still moving (3 * 40 / 2)
    line.close()


def test_a_resumed_run_counts_only_its_own_tasks_for_the_eta(fake_clock):
    screen = Terminal()
    line = ProgressLine(screen, total=10, done=8, unit="task")
    assert "8/10 tasks [00:00<?]" in screen.last()
    fake_clock.now += 5
    line.update(1)
    assert "9/10 tasks [00:05<00:05" in screen.last()


def test_the_timer_thread_redraws_without_events():
    screen = Terminal()
    line = ProgressLine(screen, total=3, unit="task", tick=0.01)
    try:
        for _ in range(2000):  # waits for the thread's redraws, however slow the machine (no time asserted)
            if screen.text.count("\r\033[K") >= 3:
                break
            time.sleep(0.01)
    finally:
        line.close()
    assert screen.text.count("\r\033[K") >= 3


def test_eval_bar_shows_the_time_spent_on_a_goal(fake_clock):
    """The planner's goal events update the line; the clock keeps moving between them."""
    screen = Terminal()
    progress = EvalProgress(screen)
    progress.start(4, 0)
    progress.task_started("stone/furnace")
    progress.goal("stone/furnace", "goal 1 of about 9: 1 furnace")
    fake_clock.now += 7
    progress._bar.draw()
    assert elapsed_and_remaining(screen.last()) == ("00:07", "?") and "goal 1 of about 9: 1 furnace" in screen.last()
    progress.finished({"key": "stone/furnace"})
    assert "1/4 tasks [00:07<00:21" in screen.last()
    progress.close()
    assert screen.text.endswith("\r\033[K")


def test_eval_bar_moves_while_a_fake_planner_plans(fake_clock, kb):
    """A whole (in-process) evaluation with a planner that takes 20 s a task: mid-plan the line shows the time."""
    from barsym.eval import load_dataset
    from barsym.eval.scale import run_evaluation
    from barsym.eval.spec import RunSpec
    from barsym.planner import make_planner

    screen = Terminal()
    progress = EvalProgress(screen)
    seen = []

    class SlowPlanner:
        name = "symbolic"
        inner = make_planner("symbolic", kb)

        def plan(self, goal, start=None):
            fake_clock.now += 20  # planning the goal ...
            progress._bar.draw()  # ... while the timer redraws the line
            seen.append(elapsed_and_remaining(screen.last()))
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


def test_clock_text():
    assert [clock_text(s) for s in (None, 0, 59.9, 61, 3600 + 62)] == ["?", "00:00", "00:59", "01:01", "1:01:02"]


def test_execute_shows_its_runs_at_once_and_as_they_go(fake_clock, monkeypatch, capsys, tmp_path):
    plan = tmp_path / "logs.jsonl"
    plan.write_text('{"type": "mine", "obj_name": "logs", "obj_num": 1, "tool": null}\n')
    screen = Terminal()
    ticks = iter(range(10**6))

    def clock():  # each look at the clock is a fifth of a second later: every update may redraw
        return 1000.0 + 0.2 * next(ticks)

    monkeypatch.setattr(progress_bar, "CLOCK", clock)
    monkeypatch.setattr(progress_bar, "raw_stream", lambda stream: screen)
    code, out, _ = run(capsys, "execute", plan, "--runs", "500")
    assert code == 0 and "500 runs in the stochastic world" in out
    draws = [part for part in screen.text.split("\r\033[K") if part]
    assert draws[0].startswith("execute   0%|") and "0/500 runs [00:00<?]" in draws[0]  # before the first run
    counts = [int(re.search(r"\| ([\d,]+)/500 runs", d).group(1).replace(",", "")) for d in draws]
    assert counts == sorted(counts) and counts[-1] == 500 and len(set(counts)) > 10
    assert screen.text.endswith("\r\033[K")  # wiped at the end


def test_execute_draws_nothing_when_stderr_is_not_a_terminal(capsys, tmp_path):
    plan = tmp_path / "logs.jsonl"
    plan.write_text('{"type": "mine", "obj_name": "logs", "obj_num": 1, "tool": null}\n')
    code, _, err = run(capsys, "execute", plan, "--runs", "50")
    assert code == 0 and err == ""


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
