"""The distilled weights written back into a copy of the original GGUF (the ``gguf`` package).

Why not llama.cpp's converter: the original file already holds everything
llama.cpp needs besides the weights -- the tokenizer, the chat template
barsym renders prompts with, the rope and norm settings -- and SmolLM2 is a
plain llama model. So the new file is the original one with its metadata
copied key by key and only the trained tensors replaced: the attention and
MLP projections the adapters were merged into, quantized to Q8_0 by default
(F16 and F32 on request). The embedding and the norms, which LoRA does not
touch, keep their original bytes.

llama.cpp stores a llama model's query and key projections with the rows of
each head reordered for its rope kernel; transformers undoes that when it
loads a GGUF, so it is redone here (:func:`to_gguf_rows`). :func:`check_layout`
compares the base model's tensors with the file's before anything is written,
so a wrong mapping is an error, never a silently broken model.
"""

from __future__ import annotations

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
OUT_TYPES = ("q8_0", "f16", "f32")


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


def write_gguf(
    source: str,
    weights: dict[str, np.ndarray],
    out: str,
    out_type: str = "q8_0",
    name: str = "barsym distilled",
    metadata: dict[str, str] | None = None,
) -> None:
    """Copy ``source`` to ``out`` with the tensors in ``weights`` replaced (quantized to ``out_type``) and
    the string keys in ``metadata`` added (or replaced): what barsym should know about the model."""
    from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter
    from gguf.quants import quantize

    if out_type not in OUT_TYPES:
        raise ValueError(f"--out-type must be one of {', '.join(OUT_TYPES)}, got {out_type!r}")
    reader = GGUFReader(source)
    arch = reader.fields["general.architecture"].contents()
    writer = GGUFWriter(out, arch)
    for key, field in reader.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture" or key in (metadata or {}):
            continue
        value = field.contents()
        if key == "general.name":
            value = name
        kind = field.types[0]
        sub = field.types[-1] if kind == GGUFValueType.ARRAY else None
        writer.add_key_value(key, value, kind, sub)
    for key, text in (metadata or {}).items():
        writer.add_string(key, text)
    qtype = {"q8_0": GGMLQuantizationType.Q8_0, "f16": GGMLQuantizationType.F16, "f32": GGMLQuantizationType.F32}[
        out_type
    ]
    for tensor in reader.tensors:
        if tensor.name in weights:
            data = weights[tensor.name]
            if qtype == GGMLQuantizationType.F16:
                writer.add_tensor(tensor.name, data.astype(np.float16))
            elif qtype == GGMLQuantizationType.F32:
                writer.add_tensor(tensor.name, data)
            else:
                writer.add_tensor(tensor.name, quantize(data, qtype), raw_dtype=qtype)
        else:
            writer.add_tensor(tensor.name, tensor.data, raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
