"""LLM reasoning: everything barsym asks a language model, above the planner and the backends, by role.

- :mod:`.planners`: the planners that think with the model, by family -- :mod:`.planners.backward` (BAR's
  backward decomposition: ``bar`` and ``llm-only`` in :mod:`~.planners.backward.llm_planners`, the decomposer,
  ``bar-sc`` and ``--consistency`` in :mod:`~.planners.backward.bar_sc`) and :mod:`.planners.forward` (the
  model writes the whole plan: ``deps``, ``cot`` and the four added baselines on their shared loop);
- :mod:`.scoring`: the model's side of state consistency (BAR module b): the step scorer and the repairer;
- :mod:`.prose`: reading a plan written in free prose into steps;
- :mod:`.prompts`: every prompt the model is given (BAR's few-shot turns, DEPS', the baselines') and the
  knowledge base's facts for them (computed by the rule book);
- :mod:`.grammars`: what the model may write and how it is read (BAR's reply grammar, forward plans' lines);
- :mod:`.calls`: what every call goes through -- the one gateway (:class:`~.calls.model_calls.ModelGateway`),
  the one backend builder (:func:`~.calls.backends.backend_for`), the call log (``barsym logs``) and progress;
- here: the options (:mod:`.options`), the one typed spec a planner is made from (:mod:`.spec`) and the loops'
  limits (:mod:`.loop_limits`).

Import direction: ``commands`` and ``eval`` use this package; it uses ``planner``, ``consistency``,
``llm``, ``kb``, ``graph`` and ``model``, and none of them imports it (the planner registry loads this
package by name, once, the first time a planner is looked up). Inside it, imports flow one way too:
planners -> scoring, prose -> prompts -> grammars -> the spec and options here -> calls
(``tests/test_layers.py``).

**The built-in planners** are registered here (:func:`barsym.planner.registry.register`), each as a
:class:`~barsym.planner.registry.Lazy` factory (:func:`_lazy`) that imports its planner's module when the
planner is first built, so listing the planners (every command's ``--planner`` help) or running ``--planner
symbolic`` loads no model code; here rather than in a module of their own so that the light path loads one
module fewer. Adding a planner: its module (a factory ``(kb, spec) -> planner``) and one ``register`` line at
the end of this file (or a call in the user's own code). The order is the help's; ``bar`` is the default.
What they declare (:class:`~barsym.planner.registry.Supports`): ``bar``, ``llm-only`` and ``bar-sc`` take
facts in their prompts or not (the model decomposes one goal, the graph checks it); the forward planners,
whose model writes the whole plan (``deps``, ``cot`` and the baselines), take none: with every item's recipe
in the prompt they copied it (issue 52), which measures the prompt, not the model.
"""

from __future__ import annotations

from importlib import import_module

from ..planner.registry import (
    FORWARD,
    NO_MODEL,
    Lazy,
    Supports,
    register,
    register_consistency,
    symbolic_from_spec,
    symbolic_plain,
)


def __getattr__(name: str):
    """``model_consistency`` without importing the model side at package import; ``step_scorer``, the module that
    moved to :mod:`.scoring.step_scorer` (issue 54), still reachable as ``barsym.reasoning.step_scorer``."""
    if name == "model_consistency":
        from .planners.backward.bar_sc import model_consistency

        return model_consistency
    if name == "step_scorer":
        from .scoring import step_scorer

        return step_scorer
    raise AttributeError(name)


def _lazy(module: str, function: str) -> Lazy:
    """The factory ``function`` of this package's ``module``, imported the first time the planner is built."""
    return Lazy(lambda: getattr(import_module(f"{__name__}.{module}"), function), f"{module}.{function}")


#: the model decomposes one goal at a time and the graph checks it: facts in the prompt or not
DECOMPOSER = Supports()

register("bar", _lazy("planners.backward.llm_planners", "bar_planner"), DECOMPOSER)
register("llm-only", _lazy("planners.backward.llm_planners", "llm_only_planner"), DECOMPOSER)
register("symbolic", symbolic_from_spec, NO_MODEL, plain=symbolic_plain)
register("bar-sc", _lazy("planners.backward.bar_sc", "bar_sc_planner"), DECOMPOSER)
register("deps", _lazy("planners.forward.deps", "deps_planner"), FORWARD)
register("cot", _lazy("planners.forward.cot", "cot_planner"), FORWARD)
register("reverse-chain", _lazy("planners.forward.reverse_chain", "reverse_chain_planner"), FORWARD)
register("self-refine", _lazy("planners.forward.self_refine", "self_refine_planner"), FORWARD)
register("tot", _lazy("planners.forward.tree_of_thoughts", "tot_planner"), FORWARD)
register("plan-and-solve", _lazy("planners.forward.plan_and_solve", "plan_and_solve_planner"), FORWARD)
register_consistency(
    _lazy("planners.backward.bar_sc", "with_consistency")
)  # --consistency, and every planner under durable rules
