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
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from enum import Enum

from ..reasoning.calls.progress import event_text
from .spec import RunSpec, planner_for, run_task

__all__ = ["Executor", "ExecutorError", "iter_records"]


class Executor(str, Enum):
    LOCAL = "local"  # this process (one worker) or a process pool (--workers N)
    RAY = "ray"  # Ray tasks on a local or remote cluster


class ExecutorError(RuntimeError):
    """The executor cannot be used (Ray not installed, no cluster at the address)."""


def task_key(task: dict) -> str:
    return f"{task['group']}/{task['name']}"


def iter_records(
    spec: RunSpec,
    tasks: Sequence[dict],
    *,
    executor: Executor | str = Executor.LOCAL,
    workers: int = 1,
    ray_address: str | None = None,
    planner=None,
    on_task: Callable[[str], None] | None = None,
    on_goal: Callable[[str, str], None] | None = None,
    api_key: str | None = None,
) -> Iterator[dict]:
    """One record per task, as each finishes. ``planner``: the in-process planner of a serial run.

    ``api_key``: the server's key, passed to each worker and Ray task as an argument (not in the
    spec, not in ``os.environ``, which Ray's raylet, GCS server and workers would inherit).

    ``on_task(key)``: a serial run is starting a task (its planner reports goals itself);
    ``on_goal(key, text)``: what a pool worker's planner is doing (``goal 3 of about 12: ...``).
    """
    executor = Executor(executor)
    if executor is Executor.RAY:
        yield from _ray(spec, tasks, workers, ray_address, api_key)
    elif workers <= 1:
        for data in tasks:
            if on_task is not None:
                on_task(task_key(data))
            yield run_task(spec, data, planner, api_key=api_key)
    else:
        yield from _pool(spec, tasks, workers, on_goal, api_key)


class _Worker:
    """A pool worker's state: where its planner's progress events go, and the task it is on."""

    events = None  # a multiprocessing queue to the parent, or None
    key = ""
    api_key: str | None = None  # the server's key, from the parent as an initializer argument

    def __call__(self, event) -> None:
        if _Worker.events is not None:
            try:
                _Worker.events.put_nowait((_Worker.key, event_text(event)))
            except Exception:  # a full queue: the bar misses one update, the run goes on
                pass

    enabled = True  # the LLM planners count goals for the progress line only when it is drawn


def _worker_start(spec_data: dict, events=None, api_key: str | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _Worker.events = events
    _Worker.api_key = api_key


def _in_worker(spec_data: dict, task: dict) -> dict:
    spec = RunSpec.from_dict(spec_data)
    _Worker.key = task_key(task)
    planner = planner_for(spec, progress=_Worker() if _Worker.events is not None else None, api_key=_Worker.api_key)
    return run_task(spec, task, planner)


def _forward(events, on_goal, stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            key, text = events.get(timeout=0.2)
        except queue.Empty:
            continue
        except (EOFError, OSError):
            return
        on_goal(key, text)


def _pool(
    spec: RunSpec, tasks: Sequence[dict], workers: int, on_goal=None, api_key: str | None = None
) -> Iterator[dict]:
    context = multiprocessing.get_context("spawn")
    spec_data = spec.to_dict()
    events = context.Queue(1000) if on_goal is not None else None
    stop = threading.Event()
    if events is not None:
        threading.Thread(target=_forward, args=(events, on_goal, stop), daemon=True).start()
    pool = ProcessPoolExecutor(
        max_workers=min(workers, max(1, len(tasks))),
        mp_context=context,
        initializer=_worker_start,
        initargs=(spec_data, events, api_key),
    )
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
                    raise ExecutorError(
                        "a worker process died (killed, or out of memory); the tasks it "
                        "finished are kept; run again to go on"
                    ) from None
                yield record
    finally:
        stop.set()
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        _stop_processes(processes)


def _stop_processes(processes, grace: float = 3.0) -> None:
    """End the workers (a running task is not waited for) and reap them, so none is left with PPID 1.

    SIGTERM first, then SIGKILL for any still there after ``grace`` seconds
    (one stuck inside a C call that ignores it).
    """
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(grace)
        if process.is_alive():
            process.kill()
            process.join(grace)


def _ray_task(spec_data: dict, task: dict, api_key: str | None = None) -> dict:
    spec = RunSpec.from_dict(spec_data)
    planner_for(spec, api_key=api_key)  # kept in the Ray worker process between tasks
    return run_task(spec, task, api_key=api_key)


#: HTTP/2's client connection preface and an empty SETTINGS frame: what any gRPC client sends first
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
PROBE_SECONDS = 5.0


def _speaks_grpc(sock, timeout: float) -> bool:
    """The peer answers HTTP/2's preface with a SETTINGS frame, as Ray's GCS and Ray Client (gRPC) servers do."""
    sock.settimeout(timeout)
    try:
        sock.sendall(_H2_PREFACE)
        head = b""
        while len(head) < 9:
            chunk = sock.recv(9 - len(head))
            if not chunk:
                return False
            head += chunk
    except OSError:
        return False
    return head[3] == 0x04 and head[5:9] == b"\x00\x00\x00\x00"  # type SETTINGS on stream 0


def _probe(address: str, timeout: float = PROBE_SECONDS) -> None:
    """A gRPC server answers at a Ray address (``host:port`` or ``ray://host:port``), or ExecutorError.

    Without this check ``ray.init`` waits for minutes on an address nothing
    listens at, or where something that is not Ray listens (a web server),
    printing its own retries. Both Ray's GCS and Ray Client speak gRPC, so a
    peer that does not answer HTTP/2's preface within ``timeout`` is not Ray.
    """
    import socket

    client = address.startswith("ray://")
    rest = address[len("ray://") :] if client else address
    host, _, port = rest.rpartition(":") if ":" in rest else (rest, "", "")
    try:
        number = int(port) if port else (10001 if client else 6379)
    except ValueError:
        raise ExecutorError(f"--ray-address {address!r}: expected HOST:PORT or ray://HOST:PORT") from None
    try:
        sock = socket.create_connection((host.strip("[]") or "127.0.0.1", number), timeout=timeout)
    except OSError as exc:
        raise ExecutorError(
            f"--ray-address {address}: nothing answers there ({exc.strerror or exc}); "
            f"is the Ray head running ('ray start --head')?"
        ) from None
    with sock:
        if not _speaks_grpc(sock, timeout):
            raise ExecutorError(
                f"--ray-address {address}: something answers there, but not Ray (it gave no "
                f"gRPC answer within {timeout:g} s); give the Ray head's address (ray status shows it)"
            )


def _import_ray():
    """Ray, or ExecutorError: not installed, or installed but broken (a failed import of its own)."""
    try:
        import ray
    except ImportError as exc:
        if getattr(exc, "name", None) == "ray":
            raise ExecutorError("--executor ray needs Ray: pip install 'barsym[ray]'") from None
        raise ExecutorError(
            f"--executor ray: Ray is installed but cannot be imported ({_one_line(exc)}); "
            "reinstall it: pip install --force-reinstall 'barsym[ray]'"
        ) from None
    except (Exception, SystemExit) as exc:  # a broken install may raise anything, even exit
        raise ExecutorError(
            f"--executor ray: Ray is installed but cannot be imported ({_one_line(exc)}); "
            "reinstall it: pip install --force-reinstall 'barsym[ray]'"
        ) from None
    return ray


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:160]}"


#: times a task whose Ray worker died (killed, out of memory) is run again before the run stops
RAY_RETRIES = 1


def _ray(
    spec: RunSpec, tasks: Sequence[dict], workers: int, address: str | None, api_key: str | None = None
) -> Iterator[dict]:
    import signal as signals

    ray = _import_ray()
    _quiet_raylet_messages()
    if not ray.is_initialized():
        if address and address != "auto":
            _probe(address)
        handler = signals.getsignal(signals.SIGTERM)  # ray.init may put its own in; ours ends the run as 143
        try:
            if address:
                ray.init(address=address, log_to_driver=False, logging_level="ERROR")
            else:
                ray.init(num_cpus=max(1, workers), include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
            raise ExecutorError(
                f"cannot connect to Ray at {address or 'a new local cluster'}: {' '.join(str(exc).split())[:200]}"
            ) from None
        finally:
            if handler is not None:
                signals.signal(signals.SIGTERM, handler)
    # a worker that dies is retried by Ray itself (max_retries); an exception the task raised is not
    remote = ray.remote(num_cpus=1, max_retries=RAY_RETRIES, retry_exceptions=False)(_ray_task)
    spec_data = spec.to_dict()
    pending = {remote.remote(spec_data, task, api_key): task for task in tasks}
    died = _died_errors(ray)
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(done[0])
            try:
                yield ray.get(done[0])
            except died as exc:
                raise ExecutorError(
                    f"the Ray worker running {task_key(task)} died again after {RAY_RETRIES} "
                    f"retry ({type(exc).__name__}: killed, or out of memory); the tasks it "
                    "finished are kept; run again to go on"
                ) from None
    finally:
        # only the tasks still running are cancelled: cancelling one whose result is on its way races with
        # its completion inside Ray ("Tried to complete task that was not pending"), which aborts the
        # driver with status 1 instead of the 143 of a SIGTERM (seen in 2 of 7 runs of the SIGTERM test)
        if pending:
            _, running = ray.wait(list(pending), num_returns=len(pending), timeout=0)
            for ref in running:
                ray.cancel(ref, force=True)


def _quiet_raylet_messages() -> None:
    """Keep the raylet's own messages ("A worker died or was killed ...") off barsym's stdout.

    Ray's driver prints them from a background thread to ``sys.stdout``, even
    with ``log_to_driver=False``, in the middle of barsym's tables; barsym
    says what happened itself, in one line. Ray has no option for it, so its
    printer is wrapped; if Ray's internals move, nothing is wrapped and the
    messages show as before.
    """
    try:
        from ray._private import worker as ray_worker
    except Exception:
        return
    original = getattr(ray_worker, "print_to_stdstream", None)
    if original is None or getattr(original, "barsym_quiet", False):
        return

    def quiet(data, *args, **kwargs):
        if isinstance(data, dict) and data.get("pid") == "raylet":
            return None
        return original(data, *args, **kwargs)

    quiet.barsym_quiet = True
    ray_worker.print_to_stdstream = quiet


def _died_errors(ray) -> tuple[type, ...]:
    """Ray's exceptions for a task whose worker or node went away (not an exception the task raised)."""
    exceptions = getattr(ray, "exceptions", None)
    names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "OutOfMemoryError")
    found = tuple(getattr(exceptions, n) for n in names if isinstance(getattr(exceptions, n, None), type))
    return found or (RuntimeError,)
