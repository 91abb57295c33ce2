"""Writes ``tiny.ckpt``: a checkpoint as ``barsym distill`` writes one (barsym.distill.train's ``state``), made small.

The checkpoint tests read it without torch (CI has no [train] extra); run this where torch is installed
to make it again: ``python tests/data/checkpoints/make_tiny.py``. Two rank-2 LoRA tensors of one block,
an AdamW state after one step, its LambdaLR schedule, the data order's RNG, the counters and the
settings (``TrainConfig(steps=10, lora_rank=2, lora_layers=1)``).
"""

import random
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))
from barsym.distill.options import TrainConfig  # noqa: E402

PREFIX = "base_model.model.model.layers.29.self_attn.q_proj"


def main() -> None:
    torch.manual_seed(0)
    config = TrainConfig(steps=10, lora_rank=2, lora_layers=1)
    a = torch.nn.Parameter(torch.randn(2, 8))
    b = torch.nn.Parameter(torch.zeros(8, 2))
    optimizer = torch.optim.AdamW([a, b], lr=1e-3, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 2))
    (a.sum() + (b @ a).sum()).backward()
    optimizer.step()
    schedule.step()
    state = {
        "adapters": {
            f"{PREFIX}.lora_A.default.weight": a.detach().clone(),
            f"{PREFIX}.lora_B.default.weight": b.detach().clone(),
        },
        "optimizer": optimizer.state_dict(),
        "schedule": schedule.state_dict(),
        "rng": random.Random(1).getstate(),
        "order": [3, 1, 2],
        "losses": [1.5],
        "tokens": 42,
        "step": 1,
        "train_seconds": 3.5,
        "runs": 1,
        "config": config.model_dump(),
        "data": "0123456789abcdef",
        "warm_start": None,
    }
    torch.save(state, Path(__file__).with_name("tiny.ckpt"))


if __name__ == "__main__":
    main()
