"""A model and a context that barsym owns, on llama-cpp-python's public C bindings.

Why not ``llama_cpp.Llama``: barsym's decoder needs to evaluate a batch with
logits at chosen positions, drop KV entries past a point, and save or load one
sequence's state. ``Llama`` does these only through private attributes
(``_ctx``, ``_batch``, ``_requires_eval``, writes to ``input_ids``), which move
between releases, and it cannot load a model with extra buffer types off, the
switch that keeps llama.cpp off its AMX kernels (see :mod:`.runtime_check`).
The ``llama_cpp`` module's C functions (``llama_model_load_from_file``,
``llama_decode``, ``llama_memory_seq_rm``, ``llama_sampler_*`` ...) are the
library's documented low-level API, so everything here uses only those.

:class:`NativeModel` holds the weights and the vocabulary; :class:`NativeContext`
one sequence's KV cache, with the tokens it holds tracked on the Python side
(llama.cpp does not hand them back).
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..base import SAMPLER

__all__ = ["LoadProfile", "NativeContext", "NativeModel", "NonFiniteLogits", "backend_init", "system_info"]

_init_lock = threading.Lock()
_initialised = False
_log_sink: Any = None  # keeps the ctypes callback alive
_verbose = False


class NonFiniteLogits(RuntimeError):
    """An evaluation gave logits that are not finite (NaN, infinity): the weights are damaged."""


@dataclass(frozen=True)
class LoadProfile:
    """How llama.cpp is asked to place and run the weights.

    ``extra_buffers``: llama.cpp's extra buffer types (weights repacked for AMX
    or for wider SIMD kernels). ``ubatch``: tokens per micro-batch; 1 turns every
    matrix product into a matrix-vector product, the slowest and safest path.
    """

    name: str
    extra_buffers: bool
    ubatch: int | None = None

    def describe(self) -> str:
        parts = ["extra buffer types " + ("on" if self.extra_buffers else "off")]
        if self.ubatch:
            parts.append(f"micro-batches of {self.ubatch} token{'s' if self.ubatch > 1 else ''}")
        return ", ".join(parts)


def backend_init(llama_cpp: Any, verbose: bool = False) -> None:
    """Initialise llama.cpp once per process and route its log lines (dropped unless ``verbose``)."""
    global _initialised, _log_sink, _verbose
    _verbose = _verbose or verbose
    with _init_lock:
        if _initialised:
            return

        @llama_cpp.llama_log_callback
        def sink(level: int, text: bytes, user_data: Any) -> None:
            if _verbose and text:
                import sys

                sys.stderr.write(text.decode("utf-8", "replace"))

        _log_sink = sink
        llama_cpp.llama_log_set(sink, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
        _initialised = True


def system_info(llama_cpp: Any) -> str:
    """llama.cpp's own account of the build and the CPU features it will use."""
    backend_init(llama_cpp)
    raw = llama_cpp.llama_print_system_info()
    return (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)).strip()


class NativeModel:
    """Weights and vocabulary of one GGUF file."""

    def __init__(self, llama_cpp: Any, path: Path, profile: LoadProfile, verbose: bool = False):
        self.lc = lc = llama_cpp
        backend_init(lc, verbose)
        params = lc.llama_model_default_params()
        params.n_gpu_layers = 0
        params.use_extra_bufts = profile.extra_buffers
        self.path, self.profile = Path(path), profile
        self.model = lc.llama_model_load_from_file(str(path).encode("utf-8"), params)
        if not self.model:
            raise ValueError(f"llama.cpp could not load {path}")
        self.vocab = lc.llama_model_get_vocab(self.model)
        self.n_vocab = int(lc.llama_vocab_n_tokens(self.vocab))
        self._pieces: dict[tuple[int, bool], bytes] = {}

    def close(self) -> None:
        if self.model:
            self.lc.llama_model_free(self.model)
            self.model = None

    # ------------------------------------------------------------------ vocabulary
    def tokenize(self, text: str, add_bos: bool, special: bool) -> list[int]:
        data = text.encode("utf-8")
        size = len(data) + 8
        buf = (ctypes.c_int32 * size)()
        n = self.lc.llama_tokenize(self.vocab, data, len(data), buf, size, add_bos, special)
        if n < 0:
            size = -n
            buf = (ctypes.c_int32 * size)()
            n = self.lc.llama_tokenize(self.vocab, data, len(data), buf, size, add_bos, special)
        return list(buf[:n])

    def piece(self, token: int, special: bool = True) -> bytes:
        """The bytes ``token`` stands for (``special``: control tokens written out, as the grammar sees them)."""
        key = (token, special)
        found = self._pieces.get(key)
        if found is None:
            buf = ctypes.create_string_buffer(64)
            n = self.lc.llama_token_to_piece(self.vocab, token, buf, 64, 0, special)
            if n < 0:  # too long for the buffer: llama.cpp says how long, as -n (" " and 64 dashes is 65 bytes)
                buf = ctypes.create_string_buffer(-n)
                n = self.lc.llama_token_to_piece(self.vocab, token, buf, -n, 0, special)
            found = self._pieces[key] = buf.raw[: max(n, 0)]
        return found

    def detokenize(self, tokens: list[int], special: bool = False) -> str:
        """Text of ``tokens``; control tokens are left out unless ``special`` (replies never show them)."""
        return b"".join(self.piece(t, special=special) for t in tokens).decode("utf-8", "ignore")

    def token_text(self, token: int) -> str:
        raw = self.lc.llama_vocab_get_text(self.vocab, token) if token >= 0 else b""
        return (raw or b"").decode("utf-8", "replace")

    def is_eog(self, token: int) -> bool:
        return bool(self.lc.llama_vocab_is_eog(self.vocab, token))

    @property
    def bos(self) -> int:
        return int(self.lc.llama_vocab_bos(self.vocab))

    @property
    def eos(self) -> int:
        return int(self.lc.llama_vocab_eos(self.vocab))

    def metadata(self, key: str) -> str | None:
        buf = ctypes.create_string_buffer(1 << 16)
        n = self.lc.llama_model_meta_val_str(self.model, key.encode("utf-8"), buf, len(buf))
        if n < 0:
            return None
        if n >= len(buf):
            buf = ctypes.create_string_buffer(n + 1)
            self.lc.llama_model_meta_val_str(self.model, key.encode("utf-8"), buf, len(buf))
        return buf.value.decode("utf-8", "replace")


class NativeContext:
    """One sequence's KV cache on a :class:`NativeModel`, and the tokens it holds."""

    def __init__(self, model: NativeModel, n_ctx: int, n_threads: int, n_batch: int = 512, ubatch: int | None = None):
        self.model, self.lc = model, lc = model, model.lc
        params = lc.llama_context_default_params()
        self.n_batch = min(n_ctx, n_batch)
        params.n_ctx = n_ctx
        params.n_batch = self.n_batch
        params.n_ubatch = min(self.n_batch, ubatch or 512)
        params.n_threads = params.n_threads_batch = n_threads
        params.flash_attn_type = lc.LLAMA_FLASH_ATTN_TYPE_DISABLED
        params.no_perf = True
        self.params = params
        self.ctx = lc.llama_init_from_model(model.model, params)
        if not self.ctx:
            raise ValueError("llama.cpp could not create a context for the model")
        self.memory = lc.llama_get_memory(self.ctx)
        self._n_ctx = int(lc.llama_n_ctx(self.ctx))
        self.batch = lc.llama_batch_init(self.n_batch, 0, 1)
        self.tokens: list[int] = []  # what the KV cache holds for sequence 0, in order
        self.pinned = 0  # tokens at the start of the cache that every call keeps (a primed prefix)

    @property
    def n_ctx(self) -> int:
        return self._n_ctx

    def reply_room(self, prompt: list[int], wanted: int) -> int:
        """How many of ``wanted`` reply tokens fit after ``prompt``: a reply ends ("length") where the context does."""
        return min(wanted, self._n_ctx - len(prompt))

    def settings(self) -> str:
        """The context settings that change the KV layout or its numbers (part of a saved state's key)."""
        p = self.params
        return (
            f"n_batch={p.n_batch} n_ubatch={p.n_ubatch} type_k={p.type_k} type_v={p.type_v} "
            f"flash_attn={p.flash_attn_type}"
        )

    def close(self) -> None:
        if self.ctx:
            self.lc.llama_batch_free(self.batch)
            self.lc.llama_free(self.ctx)
            self.ctx = None

    # ------------------------------------------------------------------ the KV cache
    def kept_prefix(self, prompt: list[int]) -> int:
        """Prompt tokens whose KV entries are reused.

        With a pinned prefix that the prompt starts with: exactly the prefix, so
        every call evaluates the rest of its prompt as one batch and its logits
        do not depend on which call came before. Otherwise the longest common
        prefix with the cache, as llama-cpp-python does (at least one token is
        evaluated, for fresh logits).
        """
        cached, pinned = self.tokens, self.pinned
        if pinned and len(prompt) > pinned and cached[:pinned] == prompt[:pinned]:
            return pinned
        same = 0
        for a, b in zip(cached, prompt):
            if a != b:
                break
            same += 1
        return min(same, len(prompt) - 1)

    def truncate(self, keep: int) -> None:
        """Drop every KV entry from position ``keep`` on."""
        if keep < len(self.tokens):
            if keep == 0:
                self.lc.llama_memory_clear(self.memory, True)
            elif not self.lc.llama_memory_seq_rm(self.memory, 0, keep, -1):
                self.lc.llama_memory_clear(self.memory, True)
                keep = 0
            del self.tokens[keep:]
        if keep < self.pinned:
            self.pinned = 0  # the prefix is gone from the cache

    def evaluate(self, tokens: list[int], first_output: int) -> np.ndarray:
        """Append ``tokens`` to the cache; the logits after each of ``tokens[first_output:]``, one row each."""
        if len(self.tokens) + len(tokens) > self._n_ctx:
            raise ValueError(
                f"Requested tokens ({len(self.tokens) + len(tokens)}) exceed context window of {self._n_ctx}"
            )
        lc, batch, parts = self.lc, self.batch, []
        for start in range(0, len(tokens), self.n_batch):
            chunk = tokens[start : start + self.n_batch]
            n_past, outputs = len(self.tokens), 0
            batch.n_tokens = len(chunk)
            for i, token in enumerate(chunk):
                batch.token[i] = token
                batch.pos[i] = n_past + i
                batch.n_seq_id[i] = 1
                batch.seq_id[i][0] = 0
                wanted = start + i >= first_output
                batch.logits[i] = wanted
                outputs += wanted
            status = lc.llama_decode(self.ctx, batch)
            if status != 0:
                raise RuntimeError(f"llama_decode returned {status}")
            self.tokens.extend(chunk)
            if outputs:
                rows = np.ctypeslib.as_array(lc.llama_get_logits(self.ctx), shape=(outputs, self.model.n_vocab))
                if not np.isfinite(rows).all():  # a damaged model or adapter: never a reply read from NaN
                    raise NonFiniteLogits(f"the logits after {len(self.tokens)} tokens are not finite numbers")
                parts.append(rows.copy())
        if not parts:
            return np.empty((0, self.model.n_vocab), dtype=np.float32)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    # ------------------------------------------------------------------ saved states
    def state_bytes(self) -> bytes | None:
        """llama.cpp's state of sequence 0 (the KV cells of the cached tokens)."""
        size = self.lc.llama_state_seq_get_size(self.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = self.lc.llama_state_seq_get_data(self.ctx, buf, size, 0)
        return bytes(buf)[:written] if written else None

    def restore(self, tokens: list[int], data: bytes) -> bool:
        """Load a state saved by :meth:`state_bytes` for ``tokens``; False (cache empty) if llama.cpp refuses it."""
        lc = self.lc
        if len(tokens) >= self._n_ctx:
            return False
        self.truncate(0)
        src = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
        loaded = lc.llama_state_seq_set_data(self.ctx, src, len(data), 0)
        if loaded and lc.llama_memory_seq_pos_max(self.memory, 0) != len(tokens) - 1:
            loaded = 0
        if not loaded:
            lc.llama_memory_clear(self.memory, True)
            return False
        self.tokens = list(tokens)
        return True

    # ------------------------------------------------------------------ llama.cpp's own sampler
    def sampler(self, gbnf: str | None, temperature: float, seed: int) -> "Sampler":
        return Sampler(self, gbnf, temperature, seed)


class Sampler:
    """llama.cpp's sampler chain as llama-cpp-python's ``create_chat_completion`` builds it.

    Grammar first, then greedy for temperature 0, else top-k 40, typical 1.0,
    top-p 0.95, min-p 0.05, temperature and a seeded draw: the same chain, so the
    same text as before barsym owned its context.
    """

    TOP_K, TOP_P, MIN_P = SAMPLER["top_k"], SAMPLER["top_p"], SAMPLER["min_p"]

    def __init__(self, context: NativeContext, gbnf: str | None, temperature: float, seed: int):
        lc, vocab = context.lc, context.model.vocab
        self.lc, self.context = lc, context
        self.chain = lc.llama_sampler_chain_init(lc.llama_sampler_chain_default_params())
        if gbnf is not None:
            grammar = lc.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
            if not grammar:
                lc.llama_sampler_free(self.chain)
                raise ValueError("llama.cpp rejected the grammar")
            lc.llama_sampler_chain_add(self.chain, grammar)
        if temperature <= 0:
            lc.llama_sampler_chain_add(self.chain, lc.llama_sampler_init_greedy())
        else:
            for stage in (
                lc.llama_sampler_init_top_k(self.TOP_K),
                lc.llama_sampler_init_typical(1.0, 1),
                lc.llama_sampler_init_top_p(self.TOP_P, 1),
                lc.llama_sampler_init_min_p(self.MIN_P, 1),
                lc.llama_sampler_init_temp(temperature),
                lc.llama_sampler_init_dist(seed),
            ):
                lc.llama_sampler_chain_add(self.chain, stage)

    def sample(self) -> int:
        """The next token from the logits of the last evaluated position (accepted by the chain)."""
        return int(self.lc.llama_sampler_sample(self.chain, self.context.ctx, -1))

    def close(self) -> None:
        if self.chain:
            self.lc.llama_sampler_free(self.chain)
            self.chain = None

    def __enter__(self) -> "Sampler":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
