"""The in-process backend: llama.cpp through llama-cpp-python's C bindings, and the model files it runs.

:class:`~.backend.LlamaCppBackend` (``barsym.llm.LlamaCppBackend``) is the backend; the rest is its
plumbing: the model and context barsym owns (:mod:`.native`), the chat template (:mod:`.chat_prompt`),
the two decoders (:mod:`.span_decoder`, :mod:`.token_decoder`), the saved few-shot prefix
(:mod:`.prefix_state`, :mod:`.backend_spans`), the child-process check before the first evaluation
(:mod:`.runtime_check`), and the files: the default GGUF (:mod:`.embedded`) and the shipped LoRA
adapter with its card (:mod:`.adapter`, ``taught/``).

Importing this package imports none of them: :mod:`.embedded` and :mod:`.adapter` only find files,
and a command that asks them (``barsym model``, a run's header) loads neither numpy nor ``llama_cpp``;
the backend's modules bring numpy, and ``llama_cpp`` is imported when a backend is made.
"""
