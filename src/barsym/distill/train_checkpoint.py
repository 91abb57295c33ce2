"""Whether a checkpoint fits this training run (``barsym distill --resume/--warm-start``): the settings it was made
with, the data it was trained on, its adapters' shapes, and what a warm start records of it.

Split from :mod:`.train` (the training loop) along that seam: ``barsym distill`` checks a checkpoint here
before the model loads, and the loop reads the adapters in; the file itself is read by :mod:`.checkpoint`.
"""

from __future__ import annotations

import os

from .options import TrainConfig


def warm_start_record(saved: dict, config: TrainConfig, path: str) -> dict:
    """What a warm start begins from (file, steps, seconds, its data), once its adapters fit this run's shape; from
    an adapter GGUF (:mod:`.adapter_start`): the file and its sha256 (its card has the rest)."""
    check_fits(saved, config, resume=False)
    if "sha256" in saved:
        return {"file": os.path.basename(path), "adapter_sha256": saved["sha256"]}
    return {
        "file": os.path.basename(path),
        "steps": saved.get("step", 0),
        "train_seconds": round(saved.get("train_seconds", 0.0), 1),
        "runs": saved.get("runs", 1),
        "data_digest": saved.get("data"),
    }


def load_checkpoint(path: str, config: TrainConfig, resume: bool) -> dict:
    """A checkpoint read safely (:func:`.checkpoint.load`: never unpickled) that fits this run's settings; for a
    warm start also an adapter GGUF (:func:`.adapter_start.adapter_checkpoint`)."""
    from .adapter_start import adapter_checkpoint, is_adapter
    from .checkpoint import load

    saved = adapter_checkpoint(path) if not resume and is_adapter(path) else load(path, resume)
    check_fits(saved, config, resume)
    return saved


def check_fits(saved: dict, config: TrainConfig, resume: bool) -> None:
    """What of a checkpoint can be checked before the model loads: the settings it was made with (the adapters'
    shape; for ``resume`` also the batches and seed) and, to go on, a step below ``config.steps``."""
    if not resume:
        _check_settings(saved, config, ("lora_rank", "lora_alpha", "lora_layers"))
        return
    _check_settings(saved, config, ("lora_rank", "lora_alpha", "lora_layers", "seq_len", "accumulate", "seed"))
    if saved.get("step", 0) >= config.steps:
        raise ValueError(f"the checkpoint is at step {saved.get('step')}: give --steps above it to train further")


def check_resumable(saved: dict, config: TrainConfig, digest: str) -> None:
    """A checkpoint goes on only with the data it was made with (its settings: :func:`check_fits`)."""
    if saved.get("data") != digest:
        raise ValueError("the checkpoint was trained on other examples: resume with the same --data file")


def _check_settings(saved: dict, config: TrainConfig, keys: tuple[str, ...]) -> None:
    """The checkpoint was made with this run's value of every one of ``keys``, or one line naming the flag."""
    before = saved.get("config", {})
    for key in keys:
        if before.get(key) != getattr(config, key):
            flag = "--train-seed" if key == "seed" else "--" + key.replace("_", "-")
            raise ValueError(f"the checkpoint was made with {flag} {before.get(key)}, not {getattr(config, key)}")


def load_adapters(model, saved: dict, path: str) -> None:
    """A checkpoint's adapter weights into ``model``; ValueError when it holds adapters the model lacks."""
    try:
        missing = model.load_state_dict(saved["adapters"], strict=False)
    except RuntimeError as exc:  # a tensor of another shape: made for another model
        raise ValueError(f"{path}: its adapters do not fit this model ({' '.join(str(exc).split())[:160]})") from None
    if missing.unexpected_keys:
        raise ValueError(f"{path}: adapters this model does not have ({missing.unexpected_keys[0]} ...)")
