"""How an evaluation run stops: SIGTERM as a clean exit, Ctrl-C kept working, and how to go on after a stop.

A run with a pool of workers or Ray must unwind through its executors'
cleanup whatever ends it, or workers are left running with PPID 1; and a
user who stopped a long run wants to be told how to resume it from its run
file. These are the library's, so a script driving :func:`~barsym.eval.scale.run_evaluation`
behaves as ``barsym eval`` does.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path

from .runfile import RunFileError, read_run

#: the exit status of a run ended by SIGTERM (128 + 15, what a shell reports for a process it killed)
TERMINATED = 128 + signal.SIGTERM


@contextlib.contextmanager
def terminated_as_exit():
    """SIGTERM ends the run like Ctrl-C does: cleanup runs (workers stopped and reaped), exit status 143.

    Python's default for SIGTERM is to die on the spot, which leaves a pool's
    workers and multiprocessing's resource tracker running with PPID 1. As a
    ``SystemExit(143)`` raised in the main thread it unwinds through the
    executors' ``finally`` blocks instead; 143 (128 + 15) is what a shell
    reports for a process killed by SIGTERM, with any executor.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def ended(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, ended)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def reassert_sigint() -> None:
    """Install Python's SIGINT handler again at the C level, after code that may have replaced it.

    A native library loading a model (llama.cpp, OpenMP, Ray's core) may set
    its own SIGINT disposition with ``sigaction``; Python still believes its
    handler is in place (``signal.getsignal`` reads Python's table), and
    Ctrl-C is then lost. Setting the handler Python has on record again puts
    it back where the kernel looks.
    """
    if threading.current_thread() is threading.main_thread():
        current = signal.getsignal(signal.SIGINT)
        if current is not None:
            signal.signal(signal.SIGINT, current)


def resume_hint(run_file: Path | None) -> str:
    """After Ctrl-C: how to resume (the run file and what it kept), or how to make a run resumable."""
    if run_file is None:
        return "no task was kept: run with --run FILE.jsonl to keep each finished task and resume after a stop"
    try:
        kept = len({r["key"] for r in read_run(run_file)[1]})
    except (RunFileError, OSError):
        kept = 0
    return f"resume with --run {run_file} ({kept} finished task(s) kept in it; the same command again runs the rest)"
