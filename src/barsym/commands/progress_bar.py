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
from typing import TextIO

from .common import escape_controls, raw_stream


class EvalProgress:
    def __init__(self, stream: TextIO | None = None):
        self.stream = raw_stream(stream or sys.stderr)
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar = None
        self._status = ""  # shown before the bar exists (loading the model)

    # -- the planner's events (in-process runs) --------------------------------------------------
    def __call__(self, event) -> None:
        if not self.enabled:
            return
        if event.phase in ("loading", "priming"):
            text = f"{event.text} ..."
        else:
            of = f" of about {event.estimate}" if event.estimate else ""
            text = f"goal {event.number}{of}: {event.text}"
        self._show(text)

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

    def task_started(self, key: str) -> None:
        self._show(escape_controls(key))

    def finished(self, record: dict) -> None:
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix_str(f"done {escape_controls(record.get('key', ''))}"[:60])

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        self._clear_status()

    clear = close

    def _show(self, text: str) -> None:
        text = escape_controls(text)[:70]
        if self._bar is not None:
            self._bar.set_postfix_str(text)
        elif self.enabled:
            self.stream.write("\r\033[K" + text)
            self.stream.flush()
            self._status = text

    def _clear_status(self) -> None:
        if self._status:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._status = ""
