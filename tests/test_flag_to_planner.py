"""A command-line flag reaches its planner and its model in a few plain calls, as one typed value (issue 54).

Before, ``barsym plan`` walked 14 calls from its arguments to the model (typed -> dict -> ``**kwargs`` -> typed
again). Here the walk is traced with :func:`sys.setprofile` from ``plan``'s ``run(args)`` -- the frame that holds
the argparse Namespace -- to the constructions it leads to: the in-process model's (``LlamaCppBackend``, replaced
by a stand-in chooser so that no model loads) and the planner's. Every frame between is counted, barsym's or not,
and each is checked for an options dict or ``**kwargs`` of options crossing it; from ``build_planner`` on, each
carries the one :class:`~barsym.reasoning.spec.PlannerSpec` (or, for the model, its typed settings).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import barsym.llm.llamacpp.backend as llamacpp
from barsym.cli import build_parser
from barsym.commands import plan
from barsym.llm.settings import ModelSettings
from barsym.llm.stand_in import make_stand_in
from barsym.reasoning.calls import backends
from barsym.reasoning.spec import PlannerSpec

SRC = Path(__file__).resolve().parents[1] / "src" / "barsym"
MOST = 6  # calls from run(args) to a construction, the construction included


class Built(Exception):
    """The planner is built: the walk traced is over."""


def fake_llama(model=None, *, options=None, prefix_cache=True, verbose=False, state_dir=None, adapter=None):
    """The in-process model's place (``LlamaCppBackend``'s parameters): a chooser under the same grammar, so no
    GGUF is read."""
    return make_stand_in("copy-facts", options)


def arguments(frame) -> dict:
    """A frame's parameters as it was called (its ``*args`` and ``**kwargs`` included)."""
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
    return {name: frame.f_locals[name] for name in code.co_varnames[:count] if name in frame.f_locals}


def walk(argv: list[str], monkeypatch, tmp) -> tuple[list[str], dict[str, list]]:
    """Run ``barsym`` ``argv`` and return the chain of calls below ``run(args)`` to each construction traced:
    ``"model"`` (the backend's) and ``"planner"`` (what the planner's factory made), each frame's name and
    arguments."""
    monkeypatch.setattr(backends, "_backends", {})
    monkeypatch.setenv("BARSYM_CACHE_DIR", str(tmp))  # the model's prefix states: none are written by a stand-in
    monkeypatch.setattr(llamacpp, "LlamaCppBackend", fake_llama)
    made: dict = {}

    def built(planner, kb, store):  # run's next step after build_planner: the walk is over, nothing is planned
        sys.setprofile(None)
        made["planner"] = planner
        raise Built

    monkeypatch.setattr(plan, "remembering", built)
    inits: dict[int, list] = {}
    chains: dict[str, list] = {}

    def chain(frame) -> list:
        frames = []
        while frame is not None and frame.f_code is not plan.run.__code__:
            frames.append(frame)
            frame = frame.f_back
        if frame is None:  # not on the way from run(args)
            return None
        return [(f.f_code.co_qualname, arguments(f)) for f in reversed(frames)]

    def profile(frame, event, arg):
        if event != "call":
            return
        if frame.f_code is fake_llama.__code__ and "model" not in chains:
            chains["model"] = chain(frame)
            assert chains["model"] is not None
        elif frame.f_code.co_name == "__init__" and "self" in frame.f_locals:
            inits.setdefault(id(frame.f_locals["self"]), chain(frame))

    args = build_parser().parse_args(argv)
    args.argv = argv
    sys.setprofile(profile)
    try:
        with pytest.raises(Built):
            plan.run(args)
    finally:
        sys.setprofile(None)
    planner = made["planner"]
    while type(planner).__name__ in ("StandInPlanner", "NoStartPlanner", "ConsistencyPlanner"):
        planner = planner.inner  # the registry's wrappers and state consistency: the factory's planner inside
    chains["planner"] = inits[id(planner)]
    return [name for name, _ in chains["planner"]], chains


def settings_of(value) -> bool:
    """A mapping that carries planner options (a dict of them, or a ``**kwargs`` holding some)."""
    keys = set(PlannerSpec.model_fields) | set(ModelSettings.model_fields) | {"deadline", "deps_rounds", "facts"}
    return isinstance(value, dict) and bool(set(value) & keys)


@pytest.mark.parametrize(
    "planner",
    ["bar", "llm-only", "bar-sc", "deps", "cot", "reverse-chain", "self-refine", "tot", "plan-and-solve"],
)
def test_a_flag_reaches_the_model_and_the_planner_in_six_calls(planner, monkeypatch, tmp_path):
    argv = ["plan", "stick", "--planner", planner, "--llm-seed", "3", "-q"]
    names, chains = walk(argv, monkeypatch, tmp_path)
    for what, frames in chains.items():
        shown = " -> ".join(name for name, _ in frames)
        assert len(frames) <= MOST, f"{what}: {len(frames)} calls: {shown}"
        assert frames[0][0] == "build_planner", shown
        for name, given in frames:
            crossing = [k for k, v in given.items() if settings_of(v)]
            assert crossing == [], f"{what}: {name} is handed options as a mapping ({crossing}): {shown}"
        # the one typed value: the spec from build_planner to the planner's factory, then its typed settings
        specs = [name for name, given in frames if any(isinstance(v, PlannerSpec) for v in given.values())]
        assert specs[:2] == [frames[0][0], frames[1][0]], shown
        assert all(v.llm.seed == 3 for _, given in frames for v in given.values() if isinstance(v, PlannerSpec))
    model = chains["model"]
    assert model[-2][0] == "make_backend" and model[-3][0] == "backend_for"  # the one builder, then the library's
    assert isinstance(model[-3][1]["settings"], ModelSettings) and model[-3][1]["settings"].seed == 3


def test_consistency_follows_a_planner_within_the_same_walk(monkeypatch, tmp_path):
    argv = ["plan", "stick", "--planner", "bar", "--consistency", "-q"]
    names, chains = walk(argv, monkeypatch, tmp_path)
    assert len(chains["model"]) <= MOST and len(chains["planner"]) <= MOST
    assert names[:2] == ["build_planner", "build"]


def test_one_function_is_named_build_planner():
    named = [
        path.relative_to(SRC)
        for path in SRC.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "build_planner"
    ]
    assert [str(p) for p in named] == ["commands/planner_arguments.py"]


def test_the_registry_names_no_function_by_a_string():
    """Planners and state consistency are registered as callables; no ``"module:function"`` is loaded by name."""
    text = (SRC / "planner" / "registry.py").read_text(encoding="utf-8")
    strings = [n.value for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    assert [s for s in strings if s.startswith("barsym.") and ":" in s] == []


def test_one_backend_builder():
    """Only :func:`barsym.reasoning.calls.backends.backend_for` calls the library's constructor (and nothing else in
    barsym makes a model's backend: the stand-in, the server's client and the in-process model all come from it)."""
    callers = sorted(
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", None))
        in ("make_backend", "make_stand_in", "LlamaCppBackend", "OpenAIHTTPBackend")
    )
    assert callers == [
        "llm/__init__.py",
        "llm/__init__.py",
        "reasoning/calls/backends.py",
        "reasoning/calls/backends.py",
        "reasoning/calls/backends.py",
    ]
