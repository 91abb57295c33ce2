"""``barsym distill``: teach the small embedded model from the symbolic oracle.

The symbolic planner and the simulator know the right answer to every
question barsym's LLM planners ask; the 135M model does not. This package
turns the oracle's answers into training examples in exactly the prompts the
planners send (:mod:`.oracle`, built by running the planners themselves
against a backend that answers with the oracle), keeps the benchmark goals out
of them (:mod:`.goals`), fine-tunes the model with LoRA on the CPU
(:mod:`.train`, needs the ``[train]`` extra) and writes the merged weights
back into a copy of the original GGUF (:mod:`.gguf_out`), so ``--model``
loads it like the packaged one.

Nothing here is imported at run time by the planners; torch, transformers,
peft and gguf are imported only inside :mod:`.train` and :mod:`.gguf_out`.
"""

TRAIN_EXTRA = "barsym[train]"
TRAIN_MODULES = ("torch", "transformers", "peft", "gguf")
TRAIN_HINT = "pip install 'barsym[train]'"


def missing_train_extra() -> str | None:
    """The [train] extra's modules this install lacks, as words; None when all are there."""
    from ..llm.install import importable

    missing = [m for m in TRAIN_MODULES if not importable(m)]
    if not missing:
        return None
    return f"{missing[0]} is not installed" if len(missing) == 1 else f"{', '.join(missing)} are not installed"
