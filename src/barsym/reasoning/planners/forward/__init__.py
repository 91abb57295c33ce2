"""The planners whose model writes the whole plan, first step first: ``deps`` (:mod:`.deps`), ``cot``
(:mod:`.cot`) and the four added baselines on their loop (:mod:`.baseline_loop`: ``reverse-chain``, ``self-refine``,
``tot``, ``plan-and-solve``), with their summaries (:mod:`.stats`)."""
