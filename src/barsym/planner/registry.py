"""Planners by name, each registered as a callable with what it declares it supports.

A planner is anything with ``name`` and ``plan(goal, start) -> PlanResult``. An entry is a factory
``(kb, spec) -> planner`` (``spec`` a :class:`~barsym.reasoning.spec.PlannerSpec`, the options as one typed
value) and the :class:`Supports` it declares: facts in its prompts or not, start states, a server, stand-ins,
a temperature. :func:`check` is the one place these are checked: a request a planner does not support is one
line naming the planners that do (a ValueError, exit 2 at the command line), never silently dropped.

Why callables and declarations (issue 54, after unified-planning's ``supports``): the planners used to be
``"module:function"`` strings and what each supported was kept in name lists in three files, so adding a
planner meant editing about five lists. Now adding one is its module plus one :func:`register` call, and
:func:`llm_planners` and :func:`forward_planners` are read from the declarations.

The built-in model planners live above this package, so they are registered by
:mod:`barsym.reasoning` (its ``__init__``), each as a :class:`Lazy` factory imported when first built (``barsym
plan --planner symbolic`` loads no model code), and state consistency with them (:func:`register_consistency`);
this module loads that package the first time a name is looked up (:data:`CATALOG`), and the typed spec when a
planner is made by keywords (:data:`SPEC_MODULE`): the two modules named here as strings, no functions.
"""

from __future__ import annotations

import dataclasses
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


@dataclasses.dataclass(frozen=True)
class Supports:
    """What a planner declares it takes. ``model=False``: it asks no model, and the model's options are named
    in a warning as ignored rather than refused; the other fields say what a model planner refuses."""

    model: bool = True  # asks a language model (--model, --adapter, --llm-*)
    facts: bool = True  # --facts: the knowledge base's facts in its prompts (its default when it offers them)
    no_facts: bool = True  # --no-facts: prompts without them
    start_states: bool = True  # plans from a given state (--start, --inventory, --layer; a task's start)
    server: bool = True  # --llm-url: a model behind an OpenAI-compatible server
    stand_ins: bool = True  # --llm-stand-in: a chooser under the same grammar instead of the model
    temperature: bool = True  # --temperature: sampled decoding
    forward: bool = False  # its model writes the whole plan (--deadline; the game's vocabulary; default rules)
    facts_by_default: bool = False  # facts unless --no-facts (else none unless --facts)

    @property
    def default_facts(self) -> bool:
        """Facts in the prompt when the user does not say. None by default since issue 52: the taught model knows
        how items are made (BAR's 53, no facts: 86.9 % of its decompositions accepted first try, the stand-ins
        0 %), so the model decomposes and the graph checks, as BAR's design has it; ``--facts`` gives them."""
        return self.facts and self.facts_by_default


#: a model planner that writes whole plans: no facts mode (issue 52: a prompt that spells out the answer
#: measures the prompt, not the model)
FORWARD = Supports(facts=False, forward=True)
NO_MODEL = Supports(model=False, facts=False, server=False, stand_ins=False, temperature=False)


@dataclasses.dataclass(frozen=True)
class Lazy:
    """A factory imported the first time it is built (the model planners live above this package, and listing
    them, or ``--planner symbolic``, should load none of them): ``load`` returns the callable itself, so the
    registry calls the planner's factory directly, one call, not through a wrapper."""

    load: Callable[[], Callable]
    name: str = ""

    def __call__(self, kb: KnowledgeBase, spec) -> Planner:  # a factory still, for a caller that holds the entry
        return self.load()(kb, spec)


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str
    factory: Factory | Lazy
    supports: Supports
    plain: Callable[[KnowledgeBase, Rules | str | None], Planner] | None = None  # see build_plain


class Unsupported(ValueError):
    """A request the planner does not declare it supports (one line: what, and which planners do)."""


#: what each capability is called on the command line, and why a planner may leave it out
_ASKED = {
    "facts": ("--facts", " (a prompt that spells out the answer measures the prompt, not the model)"),
    "no_facts": ("--no-facts", ""),
    "start_states": ("a start state (--start, --inventory, --layer)", ""),
    "server": ("--llm-url", ""),
    "stand_ins": ("--llm-stand-in", ""),
    "temperature": ("--temperature", ""),
}

#: the module that registers the built-in planners above this package (imported on first look-up)
CATALOG = "barsym.reasoning"
#: the typed spec every planner is made from (loaded when a planner is made: it lives above this package)
SPEC_MODULE = "barsym.reasoning.spec"
_registry: dict[str, Entry] = {}
_follow: Lazy | None = None  # state consistency after a planner (--consistency, durable rules): the catalog's
_loaded = False
DEFAULT_PLANNER = "bar"


def _entries() -> dict[str, Entry]:
    global _loaded
    if not _loaded:
        _loaded = True
        importlib.import_module(CATALOG)
    return _registry


def register(
    name: str,
    factory: Factory | Lazy,
    supports: Supports = Supports(),
    plain: Callable[[KnowledgeBase, Rules | str | None], Planner] | None = None,
) -> None:
    """Add a planner: ``factory(kb, spec)`` builds it, ``supports`` says what it takes (:func:`check`); a planner
    that asks no model may give ``plain(kb, rules)``, what ``factory`` builds from a spec with every option at
    its default (:func:`build_plain`)."""
    _entries()  # the built-ins first, in their order
    _registry[name] = Entry(name, factory, supports, plain)


def register_consistency(follow: Lazy) -> None:
    """What follows a planner with state consistency: ``follow.load()(planner, kb, spec, name=...)`` (the model's
    scorer and repairer live above this package; :mod:`barsym.reasoning` registers them with its planners)."""
    global _follow
    _follow = follow


def entry(name: str) -> Entry:
    try:
        return _entries()[name]
    except KeyError:
        raise KeyError(f"unknown planner {name!r}; known planners: {', '.join(planner_names())}") from None


def supports(name: str) -> Supports:
    return entry(name).supports


def planner_names() -> list[str]:
    return list(_entries())


def llm_planners() -> tuple[str, ...]:
    """The planners that ask a model (and take the --model/--llm-* options)."""
    return tuple(n for n, e in _entries().items() if e.supports.model)


def forward_planners() -> tuple[str, ...]:
    """The planners whose model writes the whole plan, unchecked (DEPS, chain-of-thought, the other baselines)."""
    return tuple(n for n, e in _entries().items() if e.supports.forward)


def check(
    name: str,
    *,
    facts: bool | None = None,
    start: bool = False,
    server: bool = False,
    stand_in: bool = False,
    temperature: bool = False,
) -> Supports:
    """The one check of a request against what planner ``name`` declares; :class:`Unsupported` in one line.

    ``facts``: True for ``--facts``, False for ``--no-facts``, None when not asked. A planner asking no model
    is not refused here: its model options are ignored, and the caller names them in a warning."""
    declared = supports(name)
    if not declared.model:
        return declared
    asked = {
        "facts": facts is True,
        "no_facts": facts is False,
        "start_states": start,
        "server": server,
        "stand_ins": stand_in,
        "temperature": temperature,
    }
    for capability, wanted in asked.items():
        if wanted and not getattr(declared, capability):
            what, why = _ASKED[capability]
            able = [n for n, e in _entries().items() if e.supports.model and getattr(e.supports, capability)]
            doing = f"the planners that do: {', '.join(able)}" if able else "no planner does"
            raise Unsupported(f"the {name} planner does not take {what}{why}; {doing}")
    return declared


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


def symbolic_plain(kb: KnowledgeBase, rules: Rules | str | None = None) -> Planner:
    """``symbolic`` with every option at its default (:func:`build_plain`): what :func:`symbolic_from_spec` builds
    from a default context."""
    return symbolic_planner(kb, rules=rules)


def symbolic_from_spec(kb: KnowledgeBase, spec) -> Planner:
    """``symbolic`` as the registry builds it, from a :class:`~barsym.reasoning.spec.PlannerSpec`'s context."""
    context = spec.context
    return symbolic_planner(
        kb, rules=context.rules, graph=context.graph, validator=context.validator, prefer=context.prefer
    )


def make_planner(name: str, kb: KnowledgeBase, **options) -> Planner:
    """Build the planner called ``name`` from keyword options; KeyError names the known ones.

    The options become one :class:`~barsym.reasoning.spec.PlannerSpec` (a key it would not read is a TypeError
    in one line) and :func:`build` makes the planner. ``consistency=True`` follows any planner with BAR's state
    consistency (module b; options ``anchors``, ``scores``, ``t``, ``k``, ``repairer``, ``fallback``,
    ``rounds``), as ``bar-sc`` does for ``llm-only``.
    """
    entry(name)  # an unknown name: KeyError before the options are read
    spec = importlib.import_module(SPEC_MODULE).PlannerSpec
    return build(kb, spec.of(name, options))


def build(kb: KnowledgeBase, spec) -> Planner:
    """The one factory: the planner ``spec`` names, after :func:`check`, with state consistency, its stand-in's label
    and its start states composed here (not patched in by the callers). The model is the factory's to ask for
    (:func:`barsym.reasoning.calls.backends.backend_for`, the one backend builder), unless the spec's context hands one."""
    name = spec.planner
    found = entry(name)
    given = spec.llm.model_fields_set
    stand_in = spec.llm.llm_stand_in
    declared = check(
        name,
        facts=spec.llm.facts if "facts" in given else None,
        server=bool(spec.llm.llm_url),
        stand_in=bool(stand_in),
        temperature="temperature" in given and bool(spec.llm.temperature),
    )
    if stand_in and not declared.model:
        raise Unsupported(f"--llm-stand-in applies to the LLM planners ({', '.join(llm_planners())}), not {name}")
    if spec.llm.facts is None:  # not asked: the planner's own default
        spec = spec.model_copy(update={"llm": spec.llm.model_copy(update={"facts": declared.default_facts})})
    factory = found.factory.load() if isinstance(found.factory, Lazy) else found.factory
    planner = factory(kb, spec)
    durable = rules_for(kb, spec.rules).profile.durability  # the repairer adds worn tools' copies
    if (spec.consistency or durable) and name != "bar-sc":
        planner = _consistency().load()(planner, kb, spec, name=f"{name}+sc")
    if stand_in and declared.model:
        planner = StandInPlanner(planner, f"{planner.name}[{stand_in}]")
    if not declared.start_states:
        planner = NoStartPlanner(planner)
    return planner


def build_plain(kb: KnowledgeBase, name: str, rules: Rules | str | None = None) -> Planner | None:
    """Planner ``name`` with no option set, as :func:`build` makes it from the default spec
    (``PlannerSpec(planner=name, context=PlannerContext(rules=rules))``), without the spec: the option models are
    pydantic's, and ``barsym plan --planner symbolic`` starts without pydantic (issue 54). None when the spec is
    needed: a planner that asks a model or registered no ``plain``, or rules that wear tools (state consistency
    follows the planner, and reads the spec)."""
    found = entry(name)
    if found.plain is None or found.supports.model or rules_for(kb, rules).profile.durability:
        return None
    planner = found.plain(kb, rules)
    return planner if found.supports.start_states else NoStartPlanner(planner)


def _consistency() -> Lazy:
    _entries()  # the catalog registers it with the built-in planners
    if _follow is None:
        raise LookupError("no state consistency registered (barsym.planner.registry.register_consistency)")
    return _follow


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


class NoStartPlanner:
    """A planner that declares no start states: planning from one is :class:`Unsupported`, not a silent empty start."""

    def __init__(self, inner: Planner):
        self.inner, self.name = inner, inner.name

    def plan(self, goal: Goal, start: State | None = None) -> PlanResult:
        if start is not None and start != State():
            check(self.name.split("[")[0], start=True)
        return self.inner.plan(goal)

    def __getattr__(self, attr: str):
        return getattr(self.inner, attr)
