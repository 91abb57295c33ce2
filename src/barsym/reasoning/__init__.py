"""LLM reasoning: everything barsym asks a language model, above the planner and the backends.

The planners that think with the model live here, each checked (or, where the
method says so, not) by the symbolic layer below:

- :mod:`.bar_decomposer`: BAR's backward decomposition of one goal by the model, under a reply
  grammar (:mod:`.reply_grammar`) and the few-shot prompts (:mod:`.prompts`), checked by the
  planner's verifier, with retries and the symbolic fallback;
- :mod:`.llm_planners`: the ``bar`` and ``llm-only`` planners;
- :mod:`.step_scorer` and :mod:`.forward_repairer`: the model's side of state consistency (BAR
  module b), and :mod:`.bar_sc`: ``bar-sc`` and ``--consistency`` (:func:`model_consistency`);

and what every call goes through:

- :mod:`.backends`: the backends every planner shares, one per process and settings;
- :mod:`.model_calls`: the one gateway every model call goes through (:class:`~.model_calls.ModelGateway`):
  priming the prefix, reuse, the one counters type, backend health, the call log;
- :mod:`.facts`: the knowledge base's facts about a goal, for its prompt (computed by the rule book);
- :mod:`.call_log`: every model call (prompt, grammar, reply, verdict, time) in a SQLite file,
  shown by ``barsym logs``;
- :mod:`.progress`: typed progress events and the goal names users know.

Import direction: ``commands`` and ``eval`` use this package; it uses ``planner``, ``consistency``,
``llm``, ``kb``, ``graph`` and ``model``, and none of them imports it (the planner registry loads this
package by name, once, the first time a planner is looked up).

**The built-in planners** are registered here (:func:`barsym.planner.registry.register`), each as a small
function (:func:`_lazy`) that imports its planner's module of this package when the planner is first built, so listing the planners (every
command's ``--planner`` help) or running ``--planner symbolic`` loads no model code; here rather than in a
module of their own so that the light path loads one module fewer. Adding a planner: its module (a factory
``(kb, spec) -> planner``) and one ``register`` line at the end of this file (or a call in the user's own code). The order is
the help's; ``bar`` is the default. What they declare (:class:`~barsym.planner.registry.Supports`): ``bar``,
``llm-only`` and ``bar-sc`` take facts in their prompts (on unless ``--no-facts``: the model decomposes one
goal, the graph checks it); the forward planners, whose model writes the whole plan (``deps``, ``cot`` and the
baselines), take none: with every item's recipe in the prompt they copied it (issue 52), which measures the
prompt, not the model.
"""

from __future__ import annotations

from importlib import import_module

from ..planner.registry import FORWARD, NO_MODEL, Lazy, Supports, register, register_consistency, symbolic_from_spec


def __getattr__(name: str):
    """``model_consistency`` without importing the model side at package import."""
    if name == "model_consistency":
        from .bar_sc import model_consistency

        return model_consistency
    raise AttributeError(name)


def _lazy(module: str, function: str) -> Lazy:
    """The factory ``function`` of this package's ``module``, imported the first time the planner is built."""
    return Lazy(lambda: getattr(import_module(f"{__name__}.{module}"), function), f"{module}.{function}")


#: the model decomposes one goal at a time and the graph checks it: facts in the prompt or not
DECOMPOSER = Supports()

register("bar", _lazy("llm_planners", "bar_planner"), DECOMPOSER)
register("llm-only", _lazy("llm_planners", "llm_only_planner"), DECOMPOSER)
register("symbolic", symbolic_from_spec, NO_MODEL)
register("bar-sc", _lazy("bar_sc", "bar_sc_planner"), DECOMPOSER)
register("deps", _lazy("deps", "deps_planner"), FORWARD)
register("cot", _lazy("cot", "cot_planner"), FORWARD)
register("reverse-chain", _lazy("reverse_chain", "reverse_chain_planner"), FORWARD)
register("self-refine", _lazy("self_refine", "self_refine_planner"), FORWARD)
register("tot", _lazy("tree_of_thoughts", "tot_planner"), FORWARD)
register("plan-and-solve", _lazy("plan_and_solve", "plan_and_solve_planner"), FORWARD)
register_consistency(_lazy("bar_sc", "with_consistency"))  # --consistency, and every planner under durable rules
