"""The planners whose model writes the whole plan, first step first, on one loop (:mod:`.forward_loop`): ``deps``
(:mod:`.deps`), ``cot`` (:mod:`.cot`) and the four added baselines (:mod:`.baseline_loop`: ``reverse-chain``,
``self-refine``, ``tot``, ``plan-and-solve``), with their summaries (:mod:`.stats`)."""
