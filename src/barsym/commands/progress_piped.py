"""Progress when stderr is not a terminal: ``barsym:`` lines, one per task or per long phase, instead of a live line.

Under CI, ``nohup`` or ``2> log`` nothing can be redrawn, and before these lines a 65 s ``plan``, a
118 s ``tot`` or a 53-task ``eval`` printed nothing at all until it was done. Now an evaluation says
each task as it ends (:func:`task_line`), and a planner or a parse says each phase that goes on for
:data:`AFTER_SECONDS` -- the goals, the parse -- and while it lasts one more line at most every
:data:`EVERY_SECONDS` (:class:`PhaseLines`). Setting up (loading the model, its prompt) is said once
it is over, with the time it took, if that was long: a model, adapter or server found unusable there
is still the one line the user reads, however slow the machine. Quick work prints nothing;
``--quiet`` prints none.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from ..reasoning.calls.progress import event_text
from ..redact import escape_controls

#: a phase that has gone on this long gets a line, and one more at most this often while it lasts
AFTER_SECONDS = 5.0
EVERY_SECONDS = 10.0
#: the phases of setting up: said when they are over (an error in them is the line the user reads)
SETUP = ("loading", "priming")


class PhaseLines:
    """A planner's :class:`~barsym.reasoning.calls.progress.ProgressEvent` and a command's own phases (:meth:`say`) as lines.

    A daemon thread looks once a second (``period``; None: a test calls :meth:`tick` by hand).
    """

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, clock=None, period: float | None = 1.0):
        self.stream, self.quiet, self.clock, self.period = stream, quiet, clock or time.monotonic, period
        self._phase: str | None = None
        self._text = self._shown = ""
        self._since = self._said = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def say(self, text: str, phase: str | None = None) -> None:
        """What is happening now (``phase``: what a change of makes a new phase; default the text itself)."""
        if self.quiet:
            return
        done = None
        with self._lock:
            if (phase or text) != self._phase:
                now = self.clock()
                if self._phase in SETUP and self._text and now - self._since >= AFTER_SECONDS:
                    done = f"{self._text} ({now - self._since:.1f} s)"  # set up, and it took long: said now
                self._phase, self._since, self._shown = phase or text, now, ""
            self._text = text
        if done:
            self._print(done)
        if self._thread is None and self.period:
            self._thread = threading.Thread(target=self._loop, name="barsym-phase-lines", daemon=True)
            self._thread.start()

    def __call__(self, event, where: str = "") -> None:
        phase = str(getattr(event.phase, "value", event.phase))
        if phase != "done":
            self.say(f"{where}{event_text(event)}", phase)

    def tick(self) -> None:
        """Print the phase's line if it is due."""
        with self._lock:
            now, text = self.clock(), self._text
            if not text or self._phase in SETUP or now - self._since < AFTER_SECONDS:
                return
            if self._shown and (text == self._shown or now - self._said < EVERY_SECONDS):
                return
            self._shown, self._said = text, now
        self._print(text)

    def _print(self, text: str) -> None:
        try:
            print(f"barsym: {text}", file=self.stream or sys.stderr, flush=True)
        except (OSError, ValueError):  # stderr closed at exit: a progress line is not worth an error
            pass

    def close(self) -> None:
        """No more lines: the work is done."""
        self._stop.set()
        with self._lock:
            self._text = ""
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _loop(self) -> None:
        while not self._stop.wait(self.period):
            self.tick()


def task_line(number: int, total: int, record: dict) -> str:
    """An evaluation's finished task: ``barsym: eval 3/53 stone/furnace: planned, valid, 12.3 s``."""
    seconds = record.get("seconds")
    took = f", {seconds:.1f} s" if isinstance(seconds, (int, float)) else ""
    if record.get("planned"):
        verdict = record.get("verdict")
        outcome = f"planned{f', {verdict}' if verdict else ''}"
    else:
        outcome = f"no plan ({escape_controls(str(record.get('error') or 'no reason recorded'))[:80]})"
    return f"barsym: eval {number}/{total} {escape_controls(str(record.get('key', '')))}: {outcome}{took}"
