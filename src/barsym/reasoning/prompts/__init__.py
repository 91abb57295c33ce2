"""Every prompt the model is given: BAR's few-shot turns (:mod:`.few_shot`), DEPS' (:mod:`.deps_prompts`), the
added baselines' (:mod:`.baseline_prompts`), and the knowledge base's facts for them (:mod:`.facts`,
:mod:`.plan_facts`). Kept byte-identical by the golden prompt tests (``tests/golden/prompts``)."""
