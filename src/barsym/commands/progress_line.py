"""Progress lines that move on a terminal: an evaluation's task bar, a planner's goals, runs played.

They draw what the library reports as it works -- :func:`~barsym.eval.scale.run_evaluation`'s
callbacks (:meth:`EvalProgress.hooks` is all of them), the planners' progress events, the runs of an
execution -- and live with the commands that show them (``barsym eval``, ``plan``, ``execute`` and
``memory build``); a script or a bench run that calls the library can import them from here.

A 53-task run with a model takes minutes and one goal can take 20 s; a bar
redrawn only when a task finishes sits at ``[00:00<?`` through the first one
and shows a frozen ETA between the others. So :class:`ProgressLine` keeps its
own clock, redraws itself once a second from a small daemon thread (and at
most ten times a second on events), and its ETA counts down while a task
runs: with ``m`` the mean time of the tasks finished in this session and
``c`` the time the current one has taken, the remaining time is
``(left - 1) * m + (m - c)`` until the current task overruns the mean, and
after that ``(left - 1) * elapsed / (finished + 1)`` -- the mean as if it
ended now -- so the estimate is continuous and grows with a slow task instead
of standing still. A resumed run counts only the tasks it runs itself.

:class:`EvalProgress` is the eval bar: the task count, then what the planner
is doing now (``goal 4 of about 18: 1 stone pickaxe``, or the last task
finished for a pool). It is also a planner
:data:`~barsym.reasoning.progress.Progress` callback. When stderr is not a
terminal nothing at all is drawn, so piped output is the result alone.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from typing import TextIO

from ..reasoning.progress import event_text
from ..redact import escape_controls, raw_stream

POSTFIX = 64  # characters of "what is happening now" after the bar
#: the clock and the redraw period (tests set a fake clock, and None: no thread)
CLOCK = time.monotonic
TICK_SECONDS: float | None = 1.0
EVENT_REDRAW = 0.1  # at most ten redraws a second on events, however fast they come


def clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


class ProgressLine:
    """One status line on a terminal: ``label 40%|####      | 4/10 unit [00:12<00:18, 3.0 s/unit] postfix``."""

    def __init__(
        self,
        stream: TextIO,
        total: int,
        done: int = 0,
        unit: str = "task",
        label: str = "",
        clock=None,
        tick: float | None = -1.0,
    ):
        self.stream, self.total, self.n, self.unit, self.label = stream, total, done, unit, label
        self.clock = clock or CLOCK
        self.started = self.clock()
        self.finished = 0  # this session's (a resumed run's earlier tasks do not count for the rate)
        self.last = self.started
        self.postfix = ""
        self._drawn = -1e9
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread = None
        period = TICK_SECONDS if tick == -1.0 else tick
        if period:
            self._thread = threading.Thread(target=self._tick_loop, args=(period,), name="barsym-progress", daemon=True)
            self._thread.start()
        self.draw()

    def _tick_loop(self, period: float) -> None:
        while not self._stop.wait(period):
            self.draw()

    def remaining(self, now: float) -> float | None:
        left = self.total - self.n
        if left <= 0:
            return 0.0
        if not self.finished:
            return None
        mean = (self.last - self.started) / self.finished
        running = now - self.last
        if running <= mean:
            return (left - 1) * mean + (mean - running)
        return (left - 1) * (now - self.started) / (self.finished + 1)

    def render(self) -> str:
        now = self.clock()
        elapsed = now - self.started
        rate = ""
        if self.finished and self.last > self.started:
            per = (self.last - self.started) / self.finished  # of the finished ones: steady while one runs
            rate = f", {per:.1f} s/{self.unit}" if per >= 1 else f", {1 / per:.1f} {self.unit}s/s"
        share = self.n / self.total if self.total else 1.0
        head = f"{self.label} {100 * share:3.0f}%|" if self.label else f"{100 * share:3.0f}%|"
        tail = (
            f"| {self.n:,}/{self.total:,} {self.unit}s [{clock_text(elapsed)}<{clock_text(self.remaining(now))}{rate}]"
        )
        columns = shutil.get_terminal_size((100, 24)).columns
        width = max(10, min(40, columns - len(head) - len(tail) - POSTFIX - 2))  # the same width whatever follows
        filled = int(round(width * min(1.0, share)))
        line = head + "#" * filled + " " * (width - filled) + tail + (f" {self.postfix}" if self.postfix else "")
        return line[: max(20, columns - 1)]  # never wrapped: a wrapped line cannot be redrawn in place

    def draw(self, force: bool = True) -> None:
        with self._lock:
            now = self.clock()
            if not force and now - self._drawn < EVENT_REDRAW:
                return
            self._drawn = now
            self.stream.write("\r\033[K" + self.render())
            self.stream.flush()

    def update(self, count: int = 1, postfix: str | None = None, force: bool = False) -> None:
        """``count`` more done; redrawn at once when ``force`` (a task) or the last, else at most 10 times a second."""
        with self._lock:
            self.n += count
            self.finished += count
            self.last = self.clock()
            if postfix is not None:
                self.postfix = postfix
        self.draw(force=force or self.n >= self.total)

    def set_postfix(self, text: str) -> None:
        self.postfix = text
        self.draw(force=False)

    def clear(self) -> None:
        """Wipe the line (before printing a result under it); the next draw brings it back."""
        with self._lock:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        with self._lock:
            self.stream.write("\r\033[K")
            self.stream.flush()


def runs_progress(total: int, label: str = "execute", stream: TextIO | None = None) -> ProgressLine | None:
    """``barsym execute``'s counter of runs played, on a terminal only (None elsewhere: nothing drawn)."""
    stream = raw_stream(stream or sys.stderr)
    if not getattr(stream, "isatty", lambda: False)():
        return None
    return ProgressLine(stream, total, unit="run", label=label)


class StatusLine:
    """A line on stderr that rewrites itself, drawn only when stderr is a terminal (``enabled``).

    Its own control sequences go to the raw stream under barsym's escaping
    one; the text shown is escaped (task and item names come from the user)
    and cut to ``width`` so that it never wraps.
    """

    width = 150

    def __init__(self, stream: TextIO | None = None):
        self.stream = raw_stream(stream or sys.stderr)  # its own control sequences must reach the terminal
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._shown = False

    def show(self, text: str) -> None:
        self.stream.write("\r\033[K" + escape_controls(text)[: self.width])
        self.stream.flush()
        self._shown = True

    def wipe(self) -> None:
        if self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._shown = False


class TerminalProgress(StatusLine):
    """The planners' :class:`~barsym.reasoning.progress.ProgressEvent` as a status line (``barsym plan``).

    From the first moment (loading the model, preparing its prompt), then per
    goal -- "goal 4 of about 18: 1 stone pickaxe" -- with the LLM counters so
    far: a silent terminal during a fresh start looks like a hang; redirected
    output stays clean.
    """

    def __init__(self, stream: TextIO | None = None):
        super().__init__(stream)
        self.label = ""

    def task(self, label: str) -> None:
        self.label = label

    def __call__(self, event) -> None:
        if not self.enabled:
            return
        where = f"{self.label}: " if self.label else ""
        s = None if event.phase in ("loading", "priming") else event.stats
        counts = (
            f" ({s.llm_calls} LLM calls, {s.accepted_first_try + s.accepted_after_feedback} accepted, "
            f"{s.fallbacks} fallbacks)"
            if s is not None
            else ""
        )
        self.show(f"{where}{event_text(event)}{counts}")

    def bar(self, done: int, total: int, label: str = "", width: int = 30) -> None:
        """A bar for long loops over tasks (``memory build``): ``[#####-----] 12/53 label``; terminal only."""
        if self.enabled and total > 0:
            filled = round(width * done / total)
            self.show(f"[{'#' * filled}{'-' * (width - filled)}] {done}/{total} {label}")

    def clear(self) -> None:
        if self.enabled:
            self.wipe()


class EvalProgress(StatusLine):
    """``barsym eval``'s line: what the planner does before the first task, then the task bar."""

    width = POSTFIX

    def __init__(self, stream: TextIO | None = None):
        super().__init__(stream)
        self._bar: ProgressLine | None = None
        self._task = ""

    # -- the planner's events (in-process runs) --------------------------------------------------
    def __call__(self, event) -> None:
        if self.enabled:
            where = f"{self._task}: " if self._task else ""
            self._show(where + event_text(event))

    def task_started(self, key: str) -> None:
        """An in-process run starts ``key`` (its planner's goal events follow)."""
        self._task = key

    def goal(self, key: str, text: str) -> None:
        """What a worker is doing (pool runs): its task and goal."""
        if self.enabled:
            self._show(f"{key}: {text}")

    def hooks(self, on_task=None, on_start=None) -> dict:
        """:func:`~.scale.run_evaluation`'s progress callbacks, drawing this line; ``on_task(key)`` and
        ``on_start(total, done)`` are called too, before it (which task a recorded plan is for, a note)."""

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

    # -- the run's tasks ------------------------------------------------------------------------
    def start(self, total: int, done: int) -> None:
        if not self.enabled:
            return
        self.wipe()
        self._bar = ProgressLine(self.stream, total, done, unit="task", label="eval")

    def finished(self, record: dict) -> None:
        if self._bar is not None:
            self._bar.update(1, escape_controls(f"done {record.get('key', '')}")[:POSTFIX], force=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self.wipe()

    clear = close

    def _show(self, text: str) -> None:
        if self._bar is not None:
            self._bar.set_postfix(escape_controls(text)[:POSTFIX])
        elif self.enabled:
            self.show(text)  # before the bar exists (loading the model)
