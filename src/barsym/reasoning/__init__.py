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
``llm``, ``kb``, ``graph`` and ``model``, and none of them imports it (the planner registry names
its planners as lazy ``"module:function"`` strings).
"""


def __getattr__(name: str):
    """``model_consistency`` without importing the model side at package import."""
    if name == "model_consistency":
        from .bar_sc import model_consistency

        return model_consistency
    raise AttributeError(name)
