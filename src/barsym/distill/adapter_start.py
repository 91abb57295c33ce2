"""A warm start from an adapter GGUF (``barsym distill --warm-start ADAPTER.gguf``), the shipped one included.

Why: a checkpoint (``OUT.ckpt``) lives beside the run that wrote it and is gone with that machine, while the
adapter ships in the wheel. Its tensors are the trained adapters (in f16, so up to rounding), so a next stage
can begin from exactly what users run. A warm start never carries the optimizer, so nothing else is missing.

The file is read with the ``gguf`` package, never unpickled. Its settings are read off the file itself: the rank
from ``lora_a``'s rows, ``adapter.lora.alpha``, and the blocks it adapts (the top ``lora_layers`` of the model);
a run with other ``--lora-rank/--lora-alpha/--lora-layers`` is refused by the same check as a checkpoint's
(:func:`.train_checkpoint.check_fits`). The names and row order are :mod:`.gguf_out`'s, undone.
"""

from __future__ import annotations

import hashlib
import os
import re

# numpy, gguf and torch are imported where used: ``barsym distill`` asks :func:`is_adapter` of a --resume or
# --warm-start file before it knows whether the [train] extra is there

__all__ = ["adapter_checkpoint", "from_gguf_rows", "is_adapter", "peft_adapters"]

#: llama.cpp's adapter tensor names, as :func:`.gguf_out.lora_tensors` writes them
_GGUF_KEY = re.compile(r"^blk\.(\d+)\.(\w+)\.weight\.lora_([ab])$")


def is_adapter(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a GGUF file (an adapter, if it is to be warm-started from) rather than a checkpoint."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"GGUF"
    except OSError:
        return False


def from_gguf_rows(weight, heads: int):
    """The inverse of :func:`.gguf_out.to_gguf_rows`: llama.cpp's rope row order back to transformers'."""
    rows, cols = weight.shape
    return weight.reshape(heads, rows // heads // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


def adapter_checkpoint(path: str | os.PathLike) -> dict:
    """An adapter GGUF as a warm start reads a checkpoint: ``adapters`` (by GGUF name, float32), the ``config``
    it was made with and what the card records of it (its sha256). ValueError: not a LoRA adapter."""
    try:
        import numpy as np
        from gguf import GGUFReader
    except ImportError:
        raise ValueError("reading an adapter GGUF needs the gguf package: pip install 'barsym[train]'") from None
    try:
        reader = GGUFReader(str(path))
    except Exception as exc:  # the gguf package raises several types for a damaged file
        raise ValueError(f"not a readable GGUF ({' '.join(str(exc).split())[:120]})") from None
    from .gguf_out import PROJECTIONS

    fields = reader.fields
    kind = fields["adapter.type"].contents() if "adapter.type" in fields else None
    if kind != "lora" or "adapter.lora.alpha" not in fields:
        raise ValueError(
            "a GGUF but not a LoRA adapter (adapter.type is not lora); give an adapter barsym distill wrote"
        )
    adapters: dict[str, object] = {}
    blocks, ranks = set(), set()
    for tensor in reader.tensors:
        found = _GGUF_KEY.match(tensor.name)
        if found is None or found.group(2) not in PROJECTIONS.values():
            raise ValueError(f"a tensor no barsym adapter has: {tensor.name}")
        data = np.array(tensor.data, dtype=np.float32).reshape(tuple(reversed([int(n) for n in tensor.shape])))
        adapters[tensor.name] = data
        blocks.add(int(found.group(1)))
        if found.group(3) == "a":
            ranks.add(len(data))  # lora_a: rank rows
    if len(ranks) != 1:
        raise ValueError(f"its adapters have ranks {sorted(ranks)}; barsym trains one rank for all")
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return {
        "adapters": adapters,
        "config": {
            "lora_rank": ranks.pop(),
            "lora_alpha": float(fields["adapter.lora.alpha"].contents()),
            "lora_layers": len(blocks),
        },
        "blocks": sorted(blocks),
        "sha256": digest.hexdigest(),
    }


def peft_adapters(saved: dict, state_keys, config) -> dict:
    """``saved``'s adapters (:func:`adapter_checkpoint`) under the peft model's keys (``state_keys``), as torch
    tensors, the query and key ``B`` rows back in transformers' order (``config``: the model's, for its heads).
    ValueError when a key has no tensor."""
    import numpy as np
    import torch

    from .gguf_out import adapter_name

    out = {}
    for key in state_keys:
        named = adapter_name(key, config)
        if named is None:
            continue
        name, heads = named
        if name not in saved["adapters"]:
            raise ValueError(f"the adapter has no {name}: it adapts other blocks than --lora-layers says")
        w = saved["adapters"][name]
        out[key] = torch.from_numpy(np.ascontiguousarray(w if heads is None else from_gguf_rows(w, heads)))
    return out
