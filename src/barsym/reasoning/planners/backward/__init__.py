"""BAR's backward decomposition with the model: the decomposer (:mod:`.bar_decomposer`), ``bar`` and ``llm-only``
(:mod:`.llm_planners`), ``bar-sc`` and ``--consistency`` (:mod:`.bar_sc`)."""
