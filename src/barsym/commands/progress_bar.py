"""``barsym eval``'s progress bar: tasks done, rate and ETA, and the goal being decomposed.

A 53-task run with a model takes minutes; one status line that only names
the current goal does not say how far the run is or when it will end. On a
terminal this draws a tqdm bar over the tasks (a resumed run starts where
its file left off, so the ETA counts only the tasks still to run) and,
after it, what the planner is doing now: loading the model, or ``goal 4 of
about 18: 1 stone pickaxe`` for an in-process run, the last task finished
for a pool. When stderr is not a terminal nothing at all is drawn, so piped
or redirected output is the result alone.

It is also a planner :data:`~barsym.reasoning.progress.Progress` callback,
so the same object receives the planner's events.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from ..eval.workers import event_text
from .common import escape_controls, raw_stream


POSTFIX = 64  # characters of "what is happening now" after the bar


class EvalProgress:
    def __init__(self, stream: TextIO | None = None):
        self.stream = raw_stream(stream or sys.stderr)
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar = None
        self._status = ""  # shown before the bar exists (loading the model)
        self._task = ""
        self._drawn = 0.0

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

    # -- the run's tasks ------------------------------------------------------------------------
    def start(self, total: int, done: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        self._clear_status()
        self._bar = tqdm(total=total, initial=done, file=self.stream, unit="task", dynamic_ncols=True,
                         smoothing=0.05, leave=False, bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} tasks "
                         "[{elapsed}<{remaining}, {rate_fmt}] {postfix}")
        self._bar.set_description("eval", refresh=False)

    def finished(self, record: dict) -> None:
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(escape_controls(f"done {record.get('key', '')}")[:POSTFIX].ljust(POSTFIX))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._clear_status()

    clear = close

    def _show(self, text: str) -> None:
        text = escape_controls(text)[:POSTFIX]
        if self._bar is not None:
            now = time.monotonic()
            fresh = now - self._drawn >= 0.1  # at most ten redraws a second, however fast goals go
            self._bar.set_postfix_str(text.ljust(POSTFIX), refresh=fresh)  # padded: the bar keeps its width
            if fresh:
                self._drawn = now
        elif self.enabled:
            self.stream.write("\r\033[K" + text)
            self.stream.flush()
            self._status = text

    def _clear_status(self) -> None:
        if self._status:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._status = ""
