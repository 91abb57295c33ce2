"""The LLM side of planning that is not a backend: what the model is told, and what is kept of it.

- :mod:`.facts`: the knowledge base's facts about a goal, for its prompt (computed by the rule book);
- :mod:`.call_log`: every model call (prompt, grammar, reply, verdict, time) in a SQLite file,
  shown by ``barsym logs``;
- :mod:`.progress`: typed progress events and the goal names users know.

Import direction: ``planner`` and ``commands`` use this package; it uses ``kb``, ``graph`` and
``model`` only, never ``planner`` (the planner passes in the conventions it needs).
"""
