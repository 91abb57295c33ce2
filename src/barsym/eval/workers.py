"""Where tasks run: in this process, in a pool of processes, or as Ray tasks.

Every executor calls :func:`~.spec.run_task` on the same plain-data spec and
task, so the results do not depend on where a task ran; they differ only in
how records come back (in task order in-process, in finishing order
elsewhere -- the caller puts them back in task order).

Worker processes are *spawned*, not forked: a forked child would share the
parent's llama.cpp threads and model memory in states fork does not promise
to keep usable, and spawning is what a Ray worker does too. Each worker
loads the knowledge base and builds its own planner (and model) once, on its
first task, and keeps them for the next. Workers ignore Ctrl-C: the parent
stops them, so an interrupt is one line, not one traceback per worker.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from enum import Enum

from .spec import RunSpec, planner_for, run_task

__all__ = ["Executor", "ExecutorError", "iter_records"]


class Executor(str, Enum):
    LOCAL = "local"  # this process (one worker) or a process pool (--workers N)
    RAY = "ray"  # Ray tasks on a local or remote cluster


class ExecutorError(RuntimeError):
    """The executor cannot be used (Ray not installed, no cluster at the address)."""


def iter_records(spec: RunSpec, tasks: Sequence[dict], *, executor: Executor | str = Executor.LOCAL,
                 workers: int = 1, ray_address: str | None = None, planner=None) -> Iterator[dict]:
    """One record per task, as each finishes. ``planner``: the in-process planner of a serial run."""
    executor = Executor(executor)
    if executor is Executor.RAY:
        yield from _ray(spec, tasks, workers, ray_address)
    elif workers <= 1:
        for data in tasks:
            yield run_task(spec, data, planner)
    else:
        yield from _pool(spec, tasks, workers)


def _worker_start(spec_data: dict) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("BARSYM_WORKER", str(os.getpid()))


def _in_worker(spec_data: dict, task: dict) -> dict:
    return run_task(RunSpec.from_dict(spec_data), task)


def _pool(spec: RunSpec, tasks: Sequence[dict], workers: int) -> Iterator[dict]:
    context = multiprocessing.get_context("spawn")
    spec_data = spec.to_dict()
    pool = ProcessPoolExecutor(max_workers=min(workers, max(1, len(tasks))), mp_context=context,
                               initializer=_worker_start, initargs=(spec_data,))
    try:
        # at most two tasks queued per worker: a resumed run loses little, and finishing order stays close
        queue = list(tasks)
        running = set()
        while queue or running:
            while queue and len(running) < 2 * workers:
                running.add(pool.submit(_in_worker, spec_data, queue.pop(0)))
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                try:
                    record = future.result()
                except BrokenProcessPool:
                    raise ExecutorError("a worker process died (killed, or out of memory); the tasks it "
                                        "finished are kept; run again to go on") from None
                yield record
    finally:
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:  # a running task is not waited for
            if process.is_alive():
                process.terminate()


def _ray_task(spec_data: dict, task: dict) -> dict:
    spec = RunSpec.from_dict(spec_data)
    planner_for(spec)  # kept in the Ray worker process between tasks
    return run_task(spec, task)


def _ray(spec: RunSpec, tasks: Sequence[dict], workers: int, address: str | None) -> Iterator[dict]:
    try:
        import ray
    except ImportError:
        raise ExecutorError("--executor ray needs Ray: pip install 'barsym[ray]'") from None
    if not ray.is_initialized():
        try:
            if address:
                ray.init(address=address, log_to_driver=False, logging_level="ERROR")
            else:
                ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False,
                         logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ExecutorError(f"cannot connect to Ray at {address or 'a new local cluster'}: "
                                f"{' '.join(str(exc).split())[:200]}") from None
    remote = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
    spec_data = spec.to_dict()
    pending = [remote.remote(spec_data, task) for task in tasks]
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
