"""Planners by name, so the CLI and the evaluation can run any of them.

A planner is anything with ``name`` and ``plan(goal) -> PlanResult``. Each
entry maps a name to a factory ``(kb, spec) -> planner``, imported lazily
from a dotted path so that the LLM planners (``bar``, the default, and
``llm-only``) cost nothing until they are used and pull no model code into
``barsym plan --planner symbolic`` (``bar-sc``, BAR with state consistency, lives in
:mod:`barsym.consistency` and is imported the same way; the baselines ``deps``,
``cot``, ``reverse-chain``, ``self-refine``, ``tot`` and ``plan-and-solve``, whose model writes the
plan unchecked, live in :mod:`barsym.reasoning`). A built-in planner's keyword options become
one typed :class:`~barsym.reasoning.spec.PlannerSpec` (a key none of its option models has is
refused in one line rather than dropped unseen), and :func:`build`, the one factory, makes the
planner from it. To add one, call :func:`register` (its factory takes ``(kb, **options)``) or add
a line to ``_BUILTIN``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Protocol

from ..graph import CraftGraph
from ..kb import KnowledgeBase, Rules, rules_for
from ..model import Goal
from ..sim import State
from .backward import BackwardPlanner
from .result import PlanResult
from .symbolic import SymbolicDecomposer


class Planner(Protocol):
    name: str

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult: ...


Factory = Callable[..., Planner]

#: name -> "module:function" or a factory; the first entry is the default.
_BUILTIN: dict[str, str | Factory] = {
    "bar": "barsym.reasoning.llm_planners:bar_planner",
    "llm-only": "barsym.reasoning.llm_planners:llm_only_planner",
    "symbolic": "barsym.planner.registry:symbolic_from_spec",
    "bar-sc": "barsym.reasoning.bar_sc:bar_sc_planner",
    "deps": "barsym.reasoning.deps:deps_planner",
    "cot": "barsym.reasoning.cot:cot_planner",
    "reverse-chain": "barsym.reasoning.reverse_chain:reverse_chain_planner",
    "self-refine": "barsym.reasoning.self_refine:self_refine_planner",
    "tot": "barsym.reasoning.tree_of_thoughts:tot_planner",
    "plan-and-solve": "barsym.reasoning.plan_and_solve:plan_and_solve_planner",
}
_registry: dict[str, str | Factory] = dict(_BUILTIN)
DEFAULT_PLANNER = "bar"
#: planners that talk to a language model (and take the --model/--llm-* options)
#: the baselines of BAR's table added beside DEPS and chain-of-thought (barsym.reasoning.baseline_loop)
BASELINES = ("reverse-chain", "self-refine", "tot", "plan-and-solve")
LLM_PLANNERS = ("bar", "llm-only", "bar-sc", "deps", "cot", *BASELINES)
#: planners whose model writes the whole plan, unchecked (DEPS, chain-of-thought and the other baselines)
FORWARD_PLANNERS = ("deps", "cot", *BASELINES)


#: the typed spec every built-in planner is made from (``module:Model``, loaded only when a planner is made:
#: it lives above this package, with the model's settings)
SPEC = "barsym.reasoning.spec:PlannerSpec"


_graphs: dict[tuple[int, str], tuple[KnowledgeBase, CraftGraph]] = {}


def graph_for(kb: KnowledgeBase, rules: Rules | str | None = None) -> CraftGraph:
    """One crafting graph per knowledge base, rule profile and process (its costs take ~50 ms to settle)."""
    rules = rules_for(kb, rules)
    key = (id(kb), rules.name)
    cached = _graphs.get(key)
    if cached is None or cached[0] is not kb:
        cached = _graphs[key] = (kb, CraftGraph(kb, rules))
    return cached[1]


def symbolic_planner(kb: KnowledgeBase, *, rules=None, graph=None, validator=None, prefer=None) -> Planner:
    """BAR's loop with the crafting graph answering every goal (``prefer``: the knowledge base's by default)."""
    rules = rules_for(kb, rules)
    if not rules.can_gather:  # choices depend on the inventory alone: search it
        from .search import SearchPlanner

        return SearchPlanner(kb, rules, validator=validator)
    graph = graph or graph_for(kb, rules)
    prefer = kb.prefer if prefer is None else prefer
    decomposer = SymbolicDecomposer(kb, graph=graph, prefer=prefer, rules=rules)
    return BackwardPlanner(kb, decomposer, graph=graph, validator=validator, name="symbolic", rules=rules)


def symbolic_from_spec(kb: KnowledgeBase, spec) -> Planner:
    """``symbolic`` as the registry builds it, from a :class:`~barsym.reasoning.spec.PlannerSpec`'s context."""
    context = spec.context
    return symbolic_planner(
        kb, rules=context.rules, graph=context.graph, validator=context.validator, prefer=context.prefer
    )


def _load(path: str):
    """The object a ``"module:attribute"`` string names, imported now (the planners above this package)."""
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def register(name: str, factory: str | Factory) -> None:
    _registry[name] = factory


def planner_names() -> list[str]:
    return list(_registry)


def make_planner(name: str, kb: KnowledgeBase, **options) -> Planner:
    """Build the planner called ``name`` from keyword options; KeyError names the known ones.

    A built-in planner's options become one :class:`~barsym.reasoning.spec.PlannerSpec` (a key it would not read
    is a TypeError in one line) and :func:`build` makes the planner; a planner added by :func:`register` is
    handed the options as they are. ``consistency=True`` follows any planner with BAR's state consistency
    (module b; options ``anchors``, ``scores``, ``t``, ``k``, ``repairer``, ``fallback``, ``rounds``), as
    ``bar-sc`` does for ``llm-only``.
    """
    try:
        factory = _registry[name]
    except KeyError:
        raise KeyError(f"unknown planner {name!r}; known planners: {', '.join(planner_names())}") from None
    if factory is not _BUILTIN.get(name):  # a planner registered by the user reads what it likes
        return (_load(factory) if isinstance(factory, str) else factory)(kb, **options)
    return build(kb, _load(SPEC).of(name, options))


def build(kb: KnowledgeBase, spec) -> Planner:
    """The one factory of the built-in planners: the planner ``spec`` names, with its model, stand-in and state
    consistency composed here (not patched in by the callers)."""
    name = spec.planner
    factory = _registry[name]
    if isinstance(factory, str):
        factory = _load(factory)
    stand_in = spec.llm.llm_stand_in
    if stand_in:  # a chooser under the same grammar instead of the model (barsym.llm.stand_in)
        if name not in LLM_PLANNERS:
            raise ValueError(f"--llm-stand-in applies to the LLM planners ({', '.join(LLM_PLANNERS)}), not {name}")
        from ..llm.stand_in import make_stand_in

        spec = spec.with_context(backend=make_stand_in(stand_in))
    elif spec.context.backend is None and (name in LLM_PLANNERS or spec.consistency):
        # an OpenAI-compatible server with a key or model name gets its own client (else the shared backend)
        server = _load("barsym.reasoning.backends:server_backend")(spec.llm)
        if server is not None:
            spec = spec.with_context(backend=server)
    planner = factory(kb, spec)
    durable = rules_for(kb, spec.rules).profile.durability  # the repairer adds worn tools' copies
    if (spec.consistency or durable) and name != "bar-sc":
        with_consistency = _load("barsym.reasoning.bar_sc:with_consistency")
        planner = with_consistency(planner, kb, spec, name=f"{name}+sc")
    if stand_in:
        planner = StandInPlanner(planner, f"{planner.name}[{stand_in}]")
    return planner


def planner_label(name: str, options: dict | None) -> str:
    """How tables name a planner: ``bar``, or ``bar[copy-facts]`` when a stand-in made its plans."""
    stand_in = (options or {}).get("llm_stand_in")
    return f"{name}[{stand_in}]" if stand_in else name


class StandInPlanner:
    """A planner whose model is a stand-in: its results say so in ``planner`` (``bar[copy-facts]``)."""

    def __init__(self, inner: Planner, name: str):
        self.inner, self.name = inner, name

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult:
        result = self.inner.plan(goal, start) if start is not None else self.inner.plan(goal)
        result.planner = self.name
        return result

    def __getattr__(self, attr: str):  # the wrapped planner's counters, decomposer, trace settings
        return getattr(self.inner, attr)
