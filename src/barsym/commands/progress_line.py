"""Progress on stderr: rich's live lines on a terminal, and the commands' progress objects that choose them.

What the library reports as it works -- :func:`~barsym.eval.scale.run_evaluation`'s callbacks
(:meth:`EvalProgress.hooks` is all of them), the planners' :class:`~barsym.reasoning.calls.progress.ProgressEvent`,
the runs of an execution -- is shown by the commands that run them (``eval``, ``plan``, ``parse``,
``execute``, ``memory build``), which import this module only when they show something; a script
or a bench run can use it too.

On a terminal rich draws (``rich.progress``): a bar for tasks and runs, a spinner line with the time
so far for a planner's goals, redrawn by rich's thread four times a second -- so the clock moves
while one 20 s goal is planned -- and wiped when the work ends. The bar's ETA counts down while a
task runs (:func:`remaining`: with ``m`` the mean time of the tasks finished in this session and
``c`` the time the current one has taken, ``(left - 1) * m + (m - c)`` until the current task
overruns the mean, then ``(left - 1) * elapsed / (finished + 1)``, the mean as if it ended now;
rich's own estimate stands still between tasks). A resumed run counts only the tasks it runs.
Piped, :mod:`.progress_piped` prints lines instead. Shown text is escaped (task and item names
come from the user) and rich's markup is off.
"""

from __future__ import annotations

import io
import sys
import time
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Column
from rich.text import Text

from ..reasoning.calls.progress import event_text
from ..redact import escape_controls, raw_stream
from .progress_piped import PhaseLines, task_line

POSTFIX = 64  # characters of "what is happening now" after the bar
#: the clock (tests set a fake one) and rich's redraws a second (tests set None: read by hand with ``render``)
CLOCK = time.monotonic
REFRESH: float | None = 4.0


def on_terminal(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())


def clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    hours, rest = divmod(max(0, int(seconds)), 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


def remaining(left: int, finished: int, started: float, last: float, now: float) -> float | None:
    """The countdown ETA (see the module docstring); None before a task of this session has finished."""
    if left <= 0:
        return 0.0
    if not finished:
        return None
    mean = (last - started) / finished
    if now - last <= mean:
        return (left - 1) * mean + (mean - (now - last))
    return (left - 1) * (now - started) / (finished + 1)


class Countdown(ProgressColumn):
    """``[elapsed<remaining, 3.0 s/task]`` from the task's fields ``started``, ``finished`` (this session) and ``last``."""

    def __init__(self, unit: str):
        super().__init__(table_column=Column(no_wrap=True))  # one line: a wrapped one cannot be redrawn in place
        self.unit = unit

    def render(self, task) -> Text:
        now, fields = task.get_time(), task.fields
        started, finished, last = fields["started"], fields["finished"], fields["last"]
        rate = ""
        if finished and last > started:
            per = (last - started) / finished  # of the finished ones: steady while one runs
            rate = f", {per:.1f} s/{self.unit}" if per >= 1 else f", {1 / per:.1f} {self.unit}s/s"
        eta = clock_text(remaining(int((task.total or 0) - task.completed), finished, started, last, now))
        return Text(f"[{clock_text(now - started)}<{eta}{rate}]")


def _text(field: str, ratio: int | None = None) -> TextColumn:
    return TextColumn(field, markup=False, table_column=Column(no_wrap=True, overflow="ellipsis", ratio=ratio))


def _live(stream: TextIO, columns: list, clock, refresh: float | None) -> Progress:
    """A rich Progress on ``stream`` that leaves nothing behind and never captures stdout (a result printed while
    it runs must reach stdout, piped or not)."""
    console = Console(file=stream, highlight=False, markup=False, emoji=False)
    return Progress(
        *columns,
        console=console,
        auto_refresh=refresh is not None,
        refresh_per_second=refresh or 1,
        transient=True,
        redirect_stdout=False,
        redirect_stderr=False,
        get_time=clock,
    )


def _plain(progress: Progress | None, width: int = 160) -> str:
    """What ``progress`` draws now, as plain text (what a test reads)."""
    if progress is None:
        return ""
    console = Console(file=io.StringIO(), width=width, color_system=None, markup=False, highlight=False)
    with console.capture() as captured:
        console.print(progress.get_renderable())
    return captured.get().rstrip("\n")


class ProgressLine:
    """A bar on a terminal: ``label ━━━━━━━━━━  40% 4/10 tasks [00:12<00:18, 3.0 s/task] postfix``."""

    def __init__(self, stream: TextIO, total: int, done: int = 0, unit: str = "task", label: str = "", clock=None):
        self.clock, self.total = clock or CLOCK, total
        no_wrap = Column(no_wrap=True)
        columns = [_text("{task.description}"), BarColumn(bar_width=30), TaskProgressColumn(table_column=no_wrap)]
        columns += [MofNCompleteColumn(table_column=no_wrap), _text(f"{unit}s"), Countdown(unit)]
        self.progress = _live(stream, [*columns, _text("{task.fields[postfix]}", ratio=1)], self.clock, REFRESH)
        now = self.clock()
        self.task = self.progress.add_task(label, total=total, completed=done, postfix="", started=now, finished=0)
        self.progress.update(self.task, last=now)
        self.progress.start()
        self._shown = True

    @property
    def n(self) -> int:
        return int(self.progress.tasks[0].completed)

    def update(self, count: int = 1, postfix: str | None = None, force: bool = False) -> None:
        """``count`` more done; drawn at once when ``force`` (a task) or the last, else by rich's thread."""
        changes: dict = {"finished": self.progress.tasks[0].fields["finished"] + count, "last": self.clock()}
        if postfix is not None:
            changes["postfix"] = escape_controls(postfix)[:POSTFIX]
        self.progress.update(self.task, advance=count, **changes)
        self._again(force or self.n >= self.total)

    def set_postfix(self, text: str) -> None:
        self.progress.update(self.task, postfix=escape_controls(text)[:POSTFIX])
        self._again(False)

    def _again(self, force: bool) -> None:
        if not self._shown:  # wiped for a result (clear): drawn again, under it
            self.progress.start()
            self._shown = True
        elif force:
            self.progress.refresh()

    def render(self, width: int = 160) -> str:
        return _plain(self.progress, width)

    def clear(self) -> None:
        """Wipe the line while a result is printed to stdout; the next update draws it again."""
        if self._shown:
            self.progress.stop()
            self._shown = False

    close = clear


def runs_progress(total: int, label: str = "execute", stream: TextIO | None = None) -> ProgressLine | None:
    """``barsym execute``'s counter of runs played, on a terminal only (None elsewhere: nothing drawn)."""
    stream = raw_stream(stream or sys.stderr)
    return ProgressLine(stream, total, unit="run", label=label) if on_terminal(stream) else None


def task_bar(total: int, label: str, stream: TextIO | None = None) -> ProgressLine | None:
    """A bar of tasks on a terminal (``memory build``); None when stderr is piped (the command prints lines)."""
    stream = raw_stream(stream or sys.stderr)
    return ProgressLine(stream, total, unit="task", label=label) if on_terminal(stream) else None


class StatusLine:
    """What is happening now, with a spinner and the time so far, on a terminal; on another stream it draws nothing
    and ``lines`` (:class:`~.progress_piped.PhaseLines`) says the long phases instead."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, clock=None):
        self.out = stream  # piped lines go here (None: sys.stderr as it is when printed)
        self.stream = raw_stream(stream or sys.stderr)  # rich's control sequences must reach the terminal
        self.enabled = on_terminal(self.stream)
        self.clock = clock or CLOCK
        self.lines = PhaseLines(stream, quiet or self.enabled, self.clock, 1.0 if REFRESH else None)
        self._progress: Progress | None = None

    def show(self, text: str) -> None:
        if not self.enabled:
            return
        text = escape_controls(text)
        if self._progress is None:
            columns = [SpinnerColumn(), _text("{task.description}", ratio=1), TimeElapsedColumn()]
            self._progress = _live(self.stream, columns, self.clock, REFRESH)
            self._status = self._progress.add_task(text, total=None)
            self._progress.start()
        else:
            self._progress.update(self._status, description=text)

    def render(self, width: int = 160) -> str:
        return _plain(self._progress, width)

    def wipe(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


class TerminalProgress(StatusLine):
    """The planners' events as a status line (``barsym plan``, ``parse``): from the first moment (loading the model,
    preparing its prompt), then per goal -- "goal 4 of about 18: 1 stone pickaxe" -- with the LLM counters so far."""

    label = ""

    def task(self, label: str) -> None:
        self.label = label

    def say(self, text: str) -> None:
        """A phase of the command's own (``parsing FILE``)."""
        self.show(text)
        self.lines.say(text)

    def __call__(self, event) -> None:
        where = f"{self.label}: " if self.label else ""
        if not self.enabled:
            self.lines(event, where)
            return
        s = None if event.phase in ("loading", "priming") else event.stats
        counts = "" if s is None else f" ({s.llm_calls} LLM calls, "
        if s is not None:
            counts += f"{s.accepted_first_try + s.accepted_after_feedback} accepted, {s.fallbacks} fallbacks)"
        self.show(f"{where}{event_text(event)}{counts}")

    def clear(self) -> None:
        self.wipe()
        self.lines.close()


class EvalProgress(StatusLine):
    """``barsym eval``: what the planner does before the first task, then the task bar; piped, the long phases
    before the first task, then one line per task (:func:`~.progress_piped.task_line`); none with ``quiet``."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, clock=None):
        super().__init__(stream, quiet, clock)
        self.quiet = quiet
        self._bar: ProgressLine | None = None
        self._task = ""
        self._total = self._done = 0
        self._started = False

    def __call__(self, event) -> None:
        """A planner's event (in-process runs)."""
        if not self.enabled:
            if not self._started:  # piped, the tasks are lines of their own once they start
                self.lines(event)
        elif self._bar is not None:
            self._bar.set_postfix(f"{self._task}: {event_text(event)}" if self._task else event_text(event))
        else:
            self.show(event_text(event))  # before the bar exists (loading the model)

    def task_started(self, key: str) -> None:
        """An in-process run starts ``key`` (its planner's goal events follow)."""
        self._task = key

    def goal(self, key: str, text: str) -> None:
        """What a worker is doing (pool runs): its task and goal."""
        if self._bar is not None:
            self._bar.set_postfix(f"{key}: {text}")

    def hooks(self, on_task=None, on_start=None) -> dict:
        """:func:`~.scale.run_evaluation`'s progress callbacks; ``on_task(key)`` and ``on_start(total, done)`` are
        called too, before this line's (which task a recorded plan is for, a note)."""

        def started(total: int, done: int) -> None:
            if on_start is not None:
                on_start(total, done)
            self.start(total, done)

        def task(key: str) -> None:
            if on_task is not None:
                on_task(key)
            self.task_started(key)

        return {
            "on_start": started,
            "on_record": self.finished,
            "on_task": task if on_task is not None or self.enabled else None,
            "on_goal": self.goal if self.enabled else None,
        }

    def start(self, total: int, done: int) -> None:
        self._total, self._done, self._started = total, done, True
        self.lines.close()  # from now on, piped, a line per task
        if self.enabled:
            self.wipe()
            self._bar = ProgressLine(self.stream, total, done, unit="task", label="eval", clock=self.clock)

    def finished(self, record: dict) -> None:
        self._done += 1
        if self._bar is not None:
            self._bar.update(1, f"done {record.get('key', '')}", force=True)
        elif not self.enabled and not self.quiet:
            print(task_line(self._done, self._total, record), file=self.out or sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self.wipe()
        self.lines.close()

    clear = close
