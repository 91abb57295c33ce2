"""A planner as one typed, frozen value: what ``make_planner``'s keyword options, a run file's ``options`` and the
command line all become before any planner is built.

Why: the options used to travel as a dict that every factory read key by key, each with a default of its own, so
a default was stated twice (in the option models and at the reader), a key a factory did not read went into a
catch-all keyword parameter unseen, and the unknown-key check had to be kept apart from the readers. A
:class:`PlannerSpec` is made once (:meth:`PlannerSpec.of`, which refuses a key the planner would not read in one
line) and read by one factory (:func:`barsym.planner.registry.build`); each planner's factory takes the spec and
reads typed fields. Plain data (:attr:`PlannerSpec.llm` ... :attr:`PlannerSpec.world_seed`) is kept apart from the
objects a caller hands over (:class:`PlannerContext`: a backend, a progress callback, a graph), which are never
written into a run file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..consistency.config import ConsistencyConfig
from ..planner.registry import check, forward_planners, llm_planners, supports
from .options import BASELINE_OWNERS, BaselineOptions, DepsOptions, ForwardOptions, PlannerLLMOptions

#: the keys of the consistency configuration a flat option mapping may hold (``seed`` is the model's too)
CONFIG_KEYS = tuple(ConsistencyConfig.model_fields)
#: each planner's own option models, beside the model's settings and state consistency's that every planner takes;
#: ForwardOptions (--deadline) besides for every planner that declares itself ``forward`` (:func:`own_models`)
OWN_MODELS: dict[str, tuple[type[BaseModel], ...]] = {
    "deps": (DepsOptions,),
    "self-refine": (BaselineOptions,),
    "tot": (BaselineOptions,),
}


def own_models(planner: str) -> tuple[type[BaseModel], ...]:
    """The option models planner ``planner`` reads besides everyone's."""
    forward = (ForwardOptions,) if supports(planner).forward else ()
    return (*OWN_MODELS.get(planner, ()), *forward)


#: the seed of DEPS' feedback runs (a caller's, not a command-line option)
OWN_KEYS = {"deps": {"world_seed"}}


@dataclasses.dataclass(frozen=True)
class PlannerContext:
    """What a caller hands a planner besides options: objects and context, never data for a run file.

    ``log``: True for the default call log, False or None for none, or an open CallLog.
    """

    backend: Any = None
    progress: Any = None
    graph: Any = None
    validator: Any = None
    log: Any = True
    command: str = ""
    rules: Any = None
    prefer: Any = None
    max_goals: int | None = None

    def call_log(self):
        """The call log the planner writes to: the default one (``barsym logs``) for True, else the given one or None."""
        if self.log is True:
            from .calls.call_log import open_log

            return open_log()
        return self.log or None


CONTEXT_KEYS = frozenset(f.name for f in dataclasses.fields(PlannerContext)) | {"consistency"}


class PlannerSpec(BaseModel):
    """One planner: its name, the model's settings, state consistency and its own options, plus the context."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)

    planner: str
    llm: PlannerLLMOptions = Field(default_factory=PlannerLLMOptions)
    #: follow the planner with state consistency (``--consistency``; ``bar-sc`` always does)
    consistency: bool = False
    #: state consistency's configuration as given: its ``model_fields_set`` says what was set (see :meth:`repair`)
    repair_config: ConsistencyConfig = Field(default_factory=ConsistencyConfig)
    deps: DepsOptions = Field(default_factory=DepsOptions)
    forward: ForwardOptions = Field(default_factory=ForwardOptions)
    baselines: BaselineOptions = Field(default_factory=BaselineOptions)
    world_seed: int = 0
    context: PlannerContext = Field(default_factory=PlannerContext)

    @classmethod
    def of(cls, planner: str, keywords: Mapping[str, Any]) -> PlannerSpec:
        """The spec flat keyword options describe (``make_planner``'s, a run file's); TypeError in one line for a key
        the planner would not read."""
        own = own_models(planner)
        known = {k for m in (PlannerLLMOptions, ConsistencyConfig, *own) for k in m.model_fields}
        allowed = known | CONTEXT_KEYS | OWN_KEYS.get(planner, set())
        unknown = sorted(set(keywords) - allowed)
        if unknown:
            raise TypeError(
                f"the {planner} planner takes no option {', '.join(map(repr, unknown))}; its options are "
                f"{', '.join(sorted(allowed))}"
            )

        def part(model: type[BaseModel]) -> dict:
            return {k: keywords[k] for k in model.model_fields if k in keywords}

        # None is "not set" for the consistency keys, as the command line hands them
        config = {k: keywords[k] for k in CONFIG_KEYS if keywords.get(k) is not None}
        context = {k: keywords[k] for k in keywords if k in CONTEXT_KEYS - {"consistency"}}
        try:
            return cls(
                planner=planner,
                llm=PlannerLLMOptions(**part(PlannerLLMOptions)),
                consistency=bool(keywords.get("consistency")),
                repair_config=ConsistencyConfig(**config),
                deps=DepsOptions(**part(DepsOptions)) if DepsOptions in own else DepsOptions(),
                forward=ForwardOptions(**part(ForwardOptions)) if ForwardOptions in own else ForwardOptions(),
                baselines=BaselineOptions(**part(BaselineOptions)) if BaselineOptions in own else BaselineOptions(),
                world_seed=keywords.get("world_seed", 0),
                context=PlannerContext(**context),
            )
        except ValidationError as exc:  # one line naming the flag, as the command line says it
            raise ValueError(one_line(exc)) from None

    def repair(self, defaults: Mapping[str, Any] | None = None) -> ConsistencyConfig:
        """State consistency's configuration: ``defaults`` (``bar-sc``'s) under what was set."""
        given = self.repair_config
        return ConsistencyConfig(**{**(defaults or {}), **given.model_dump(include=given.model_fields_set)})

    def with_context(self, **changes: Any) -> PlannerSpec:
        """The same spec with some of the context replaced (the backend a stand-in or a server gives)."""
        return self.model_copy(update={"context": dataclasses.replace(self.context, **changes)})

    @property
    def rules(self):
        return self.context.rules

    @property
    def asks_model(self) -> bool:
        """The planner asks a model: its own, or state consistency's scorer, repairer or needs where its configuration
        uses one (``--consistency`` with the simulator's scores and the symbolic repairer asks none, and no model is
        loaded, recorded or named in the plan's footer)."""
        return supports(self.planner).model or (self.consistency and self.repair().uses_llm)

    def run_options(self) -> dict:
        """The spec as a run file keeps it (plain data; :meth:`of` reads it back): the model's settings and what
        was set of the rest; empty for a planner that asks no model (its defaults are all there is)."""
        if not self.asks_model:
            return {}
        settings = {
            k: v
            for k, v in self.llm.model_dump().items()
            if v is not None or k not in ("api_key", "llm_model", "facts")
        }  # the server's key and model name only when set
        config = self.repair_config
        extra = config.model_dump(mode="json", include=config.model_fields_set - {"seed"})
        if self.consistency:
            extra["consistency"] = True
        for part in (self.forward, self.deps, self.baselines):
            extra.update(part.model_dump(include=part.model_fields_set, exclude_none=True))
        return {**settings, **extra}

    def with_seed(self, seed: int) -> PlannerSpec:
        """The same planner with the model's seed (and state consistency's, which follows it) set to ``seed``."""
        llm = self.llm.model_copy(update={"seed": seed})
        return self.model_copy(
            update={"llm": llm, "repair_config": self.repair_config.model_copy(update={"seed": seed})}
        )


#: a warning's worth of options a planner would not use: why, and the (model, field) pairs a user set
Ignored = tuple[str, list[tuple[type[BaseModel], str]]]


def choose(
    name: str,
    kb,
    llm: PlannerLLMOptions,
    config: ConsistencyConfig,
    deps: DepsOptions,
    *,
    consistency: bool = False,
    rules=None,
    forward: ForwardOptions | None = None,
    baselines: BaselineOptions | None = None,
) -> tuple[PlannerSpec, Ignored | None]:
    """The one typed spec the command line's option models make for planner ``name`` (never a dict on the way).

    Each model's ``model_fields_set`` is what the user set. Options the planner would not use are
    returned (``ignored``) to be named in one warning rather than dropped unseen; options that
    cannot work with it (DEPS' rounds for bar, another rule profile for a forward planner's grammar)
    are a ValueError naming the option. The spec is the one :meth:`PlannerSpec.of` reads back from
    :meth:`PlannerSpec.run_options` (a run file's), so a run and its resumption build the same planner.
    """
    forward = forward or ForwardOptions()
    baselines = baselines or BaselineOptions()
    timed_planners = forward_planners()  # --deadline (ForwardOptions): the planners whose model writes whole plans
    if forward.model_dump(include=forward.model_fields_set, exclude_none=True) and name not in timed_planners:
        raise ValueError(
            f"--deadline applies to --planner {', '.join(timed_planners[:-1])} and {timed_planners[-1]} only"
        )
    chosen, ignored = deps.model_dump(include=deps.model_fields_set, exclude_none=True), None
    if name != "deps":
        if "feedback_world" in chosen or "deps_rounds" in chosen:
            raise ValueError(f"--{next(iter(chosen)).replace('_', '-')} applies to --planner deps only")
        if "selector" in chosen and name in llm_planners():
            ignored = ("executes no plan", [(DepsOptions, "selector")])
    for key in baselines.model_dump(include=baselines.model_fields_set, exclude_none=True):
        if BASELINE_OWNERS[key] != name:
            raise ValueError(f"--{key.replace('_', '-')} applies to --planner {BASELINE_OWNERS[key]} only")
    given = llm.model_fields_set
    check(  # what the planner declares it supports (barsym.planner.registry): refused here, before any work
        name,
        facts=llm.facts if "facts" in given else None,
        server=llm.llm_url is not None,
        stand_in=llm.llm_stand_in is not None,
        temperature="temperature" in given and bool(llm.temperature),
    )
    if name in forward_planners() and "llm_mode" in given and llm.llm_mode != "graph":
        raise ValueError(
            f"--llm-mode applies to bar and llm-only; the {name} planner's grammar is always the game's vocabulary"
        )
    context = PlannerContext(rules=rules)
    if name not in llm_planners() and not consistency:
        given = [(type(m), n) for m in (llm, config, deps) for n in type(m).model_fields if n in m.model_fields_set]
        given = [(m, n) for m, n in given if (m, n) != (ConsistencyConfig, "seed")]
        return PlannerSpec(planner=name, context=context), ("asks no model", given) if given else None
    if name in forward_planners() and rules is not None and rules.name != kb.default_profile:
        raise ValueError(
            f"the {name} planner's grammar and checks play by the {kb.default_profile} rules; for "
            f"--rules {rules.name} use --planner bar, llm-only, bar-sc or symbolic"
        )
    # the facts the planner is given, resolved: a run file's header says it, so a run made before a planner's
    # default changed (the forward planners lost theirs in issue 54) is not resumed under the new one
    facts = llm.facts if llm.facts is not None else supports(name).default_facts
    spec = PlannerSpec(
        planner=name,
        llm=llm.model_copy(update={"facts": facts}),
        consistency=consistency,
        repair_config=config,
        deps=deps if name == "deps" else DepsOptions(),
        forward=forward,
        baselines=baselines,
        context=context,
    )
    return spec.with_seed(llm.seed), ignored  # state consistency's seed follows the model's, as in a run file


def one_line(exc: ValidationError) -> str:
    """A bad option value as the line a user reads, naming its flag: ``--tot-breadth must be from 1 to 8, got 0``."""
    error = exc.errors()[0]
    if not error["loc"]:  # a check across fields (``--model`` with ``--llm-url``): its own words
        return str(error["msg"]).removeprefix("Value error, ")
    name = str(error["loc"][0])
    field = next((m.model_fields[name] for m in MODELS if name in m.model_fields), None)
    extra = field.json_schema_extra if field is not None and isinstance(field.json_schema_extra, dict) else {}
    flag = str(extra.get("flag") or "--" + name.replace("_", "-"))
    bounds = {
        k: getattr(m, k) for m in (field.metadata if field else ()) for k in ("ge", "gt", "le", "lt") if hasattr(m, k)
    }
    low, high = bounds.get("ge", bounds.get("gt")), bounds.get("le", bounds.get("lt"))
    if low is not None and high is not None and error["type"].startswith(("greater", "less")):
        return f"{flag} must be from {low} to {high}, got {error.get('input')}"
    return f"{flag}: {str(error['msg']).removeprefix('Value error, ')}, got {error.get('input')!r}"


#: the models whose fields a flat option mapping holds, for :func:`one_line`
MODELS: tuple[type[BaseModel], ...] = (
    PlannerLLMOptions,
    ConsistencyConfig,
    DepsOptions,
    ForwardOptions,
    BaselineOptions,
)
