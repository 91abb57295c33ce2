"""Check in a child process that llama.cpp can evaluate the model, before this process tries.

A native crash cannot be caught: on some CPUs (Intel Xeons with AMX under a
hypervisor) llama.cpp's AMX matrix kernels die with SIGSEGV on the first batch
of two or more tokens, and the user sees exit 139 and nothing else. So before
the first in-process evaluation of a (llama-cpp-python version, llama.cpp
build and CPU features, model file, load profile) combination, a short child
process loads the model the same way and evaluates a small batch. Its verdict
is remembered (in the backend's state folder, else for this process), and the
first profile that survives is used; when that is not the preferred one, one
line says what was done and why. Only a pass is taken from the state folder
(it saves the child process); a remembered failure -- true, forged or damaged --
is checked again, so a fact on disk can never change how the model is run.

Profiles, fastest first (:func:`profiles_for`): without llama.cpp's extra
buffer types (they hold the AMX-packed weights, and bring SmolLM2's Q4_1
weights nothing measurable elsewhere: ``bench/bench_runtime.py``), then with
one-token micro-batches as well (every product a matrix-vector one, the path
that works where batches crash).

Run as ``python -m barsym.llm.llamacpp.runtime_check --model PATH --profile NAME`` it is
the child itself. ``BARSYM_PROBE_FAULT=NAME`` makes the child for that profile
kill itself with SIGSEGV, which is how the tests show the fallback on a
machine whose CPU does not crash; it dies before loading the model (the
parent sees the same signal death, and the tests do not pay for a load that
is thrown away).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..base import BackendUnavailableError
from .native import LoadProfile
from .remembered import recall, remember

__all__ = [
    "FAULT_ENV",
    "PROFILES",
    "RuntimeFallbackWarning",
    "RuntimeVerdict",
    "choose_profile",
    "cpu_flags",
    "profiles_for",
]

FAULT_ENV = "BARSYM_PROBE_FAULT"
UNLOADABLE = 3  # the child's exit status when the file does not load at all (not a crash: the caller's error)
PROBE_TIMEOUT_S = 120.0
FORMAT = 1
PROFILES = {
    "extra-buffers": LoadProfile("extra-buffers", extra_buffers=True),
    "plain": LoadProfile("plain", extra_buffers=False),
    "one-token-batches": LoadProfile("one-token-batches", extra_buffers=False, ubatch=1),
}
UNLOADABLE_PROBLEM = "the model file does not load"
_PROBE_TEXT = "craft 1 wooden_pickaxe: 3 planks, 2 stick, 1 crafting_table"
_memo: dict[tuple[str, ...], str] = {}  # key -> problem ("" = passed)
_memo_lock = threading.Lock()


class RuntimeFallbackWarning(UserWarning):
    """The preferred way of running the model failed its check; a slower, safer one is used."""


@dataclass(frozen=True)
class RuntimeVerdict:
    profile: LoadProfile
    failures: tuple[str, ...]  # "profile: what happened", for every profile tried before it
    source: str  # "probed", "remembered" or "process"


def cpu_flags(cpuinfo: str | None = None) -> frozenset[str]:
    """The CPU's feature flags as the kernel lists them (``/proc/cpuinfo``); empty where unknown."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(errors="replace")
        except OSError:
            return frozenset()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def has_amx(flags: frozenset[str]) -> bool:
    return any(flag.startswith("amx") for flag in flags)


def profiles_for(flags: frozenset[str]) -> list[LoadProfile]:
    """Profiles to try, fastest first: never extra buffer types, on any CPU.

    On an AMX CPU they hold the AMX-packed weights whose kernels crash under a
    hypervisor; elsewhere they bring the embedded Q4_1 model nothing measurable
    (``bench/bench_runtime.py``). Leaving them off everywhere also keeps the
    same kernels on both kinds of machine. ``flags`` is part of the verdict's key.
    """
    return [PROFILES["plain"], PROFILES["one-token-batches"]]


def _probe(model: Path, profile: LoadProfile, threads: int) -> str:
    """'' if a child process evaluated a batch with ``profile``; else what went wrong, in a few words."""
    command = [
        sys.executable,
        "-m",
        "barsym.llm.llamacpp.runtime_check",
        "--model",
        str(model),
        "--profile",
        profile.name,
        "--threads",
        str(threads),
    ]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return f"the check did not finish in {PROBE_TIMEOUT_S:.0f} s"
    except OSError as exc:
        return f"the check could not start ({exc.strerror})"
    if done.returncode == 0 and done.stdout.strip().endswith("ok"):
        return ""
    if done.returncode == UNLOADABLE:
        return UNLOADABLE_PROBLEM
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        return f"llama.cpp crashed ({name}) evaluating a batch"
    detail = " ".join((done.stderr or done.stdout).split())[-200:]
    return f"the check failed (exit {done.returncode}: {detail or 'no message'})"


def choose_profile(
    model: Path,
    model_id: str,
    library: str,
    system: str,
    threads: int,
    folder: Path | None = None,
    flags: frozenset[str] | None = None,
) -> RuntimeVerdict:
    """The first profile whose child-process check passes (each verdict remembered per combination)."""
    flags = cpu_flags() if flags is None else flags
    failures: list[str] = []
    for profile in profiles_for(flags):
        key = (str(FORMAT), model_id, library, system, ",".join(sorted(flags)), profile.name)
        problem, source = _verdict(key, model, profile, threads, folder)
        if problem == UNLOADABLE_PROBLEM:
            return RuntimeVerdict(profile, tuple(failures), "unloadable")  # loading in-process says why
        if not problem:
            verdict = RuntimeVerdict(profile, tuple(failures), source)
            if failures:
                _warn(model, verdict)
            return verdict
        failures.append(f"{profile.name}: {problem}")
    raise BackendUnavailableError(
        f"llama.cpp cannot run {model.name} on this CPU: {'; '.join(failures)}. Plan without the model "
        "(--planner symbolic) or point --llm-url at a model server."
    )


def _verdict(
    key: tuple[str, ...], model: Path, profile: LoadProfile, threads: int, folder: Path | None
) -> tuple[str, str]:
    """(problem or '', where the verdict came from): this process, a saved file, or a new check."""
    with _memo_lock:
        if key in _memo:
            return _memo[key], "process"
    saved = recall(folder, "runtime", *key)  # the state folder's remembered facts (.remembered)
    if saved is not None and saved.get("problem") == "" and saved.get("profile") == profile.name:
        problem, source = "", "remembered"  # a pass only skips the check; a remembered crash is checked again
    else:
        problem, source = _probe(model, profile, threads), "probed"
        if problem == UNLOADABLE_PROBLEM:
            return problem, source  # nothing learnt about the CPU: not remembered
        remember(folder, "runtime", {"profile": profile.name, "problem": problem}, *key)
    with _memo_lock:
        _memo[key] = problem
    return problem, source


def _warn(model: Path, verdict: RuntimeVerdict) -> None:
    first = verdict.failures[0]
    name, _, problem = first.partition(": ")
    warnings.warn(
        f"{problem} with {PROFILES[name].describe()} ({model.name}); running it with "
        f"{verdict.profile.describe()} instead (checked in a child process, remembered)",
        RuntimeFallbackWarning,
        stacklevel=3,
    )


def _child(argv: list[str]) -> int:
    """The check itself: load the model with the profile and evaluate one batch and one more token."""
    parser = argparse.ArgumentParser(prog="python -m barsym.llm.llamacpp.runtime_check")
    parser.add_argument("--model", required=True)
    parser.add_argument("--profile", required=True, choices=sorted(PROFILES))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    import llama_cpp
    import numpy as np

    from .native import NativeContext, NativeModel, NonFiniteLogits

    profile = PROFILES[args.profile]
    if profile.name in os.environ.get(FAULT_ENV, "").split(","):
        os.kill(os.getpid(), signal.SIGSEGV)  # a simulated crash (the real one comes at the first batch)
    try:
        model = NativeModel(llama_cpp, Path(args.model), profile)
        context = NativeContext(model, n_ctx=128, n_threads=max(1, args.threads), ubatch=profile.ubatch)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return UNLOADABLE
    tokens = model.tokenize(_PROBE_TEXT, add_bos=True, special=False)
    try:
        rows = context.evaluate(tokens, first_output=0)
        context.evaluate([int(np.argmax(rows[-1]))], first_output=0)
    except NonFiniteLogits:
        print("non-finite logits", file=sys.stderr)
        return 1
    context.close()
    model.close()
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1:]))
