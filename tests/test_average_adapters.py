"""``tools/average_adapters.py``: the mean of LoRA adapters' weight changes, cut back to one rank."""

from __future__ import annotations

import pytest
from tool_modules import tool

np = pytest.importorskip("numpy")


def _average():
    return tool("average_adapters").average


def _adapter(rng, rank: int, alpha: float, out: int = 12, inp: int = 8) -> tuple[dict, float]:
    name = "blk.0.attn_q.weight"
    tensors = {f"{name}.lora_a": rng.normal(size=(rank, inp)), f"{name}.lora_b": rng.normal(size=(out, rank))}
    return tensors, alpha


def _delta(tensors: dict, alpha: float) -> np.ndarray:
    a, b = tensors["blk.0.attn_q.weight.lora_a"], tensors["blk.0.attn_q.weight.lora_b"]
    return (alpha / a.shape[0]) * (b @ a)


def test_the_average_is_the_mean_weight_change_at_scale_one_when_the_rank_holds_it():
    average = _average()
    rng = np.random.default_rng(0)
    one, two = _adapter(rng, 2, 32.0), _adapter(rng, 3, 8.0)
    soup = average([one, two], rank=5)
    mean = (_delta(*one) + _delta(*two)) / 2
    assert np.allclose(_delta(soup, 5.0), mean, atol=1e-4)
    assert soup["blk.0.attn_q.weight.lora_a"].shape == (5, 8) and soup["blk.0.attn_q.weight.lora_b"].shape == (12, 5)


def test_a_smaller_rank_keeps_the_best_approximation_of_that_rank():
    average = _average()
    rng = np.random.default_rng(1)
    one, two = _adapter(rng, 4, 16.0), _adapter(rng, 4, 16.0)
    mean = (_delta(*one) + _delta(*two)) / 2
    s = np.linalg.svd(mean, compute_uv=False)
    cut = _delta(average([one, two], rank=3), 3.0)
    assert np.isclose(np.linalg.norm(mean - cut), np.sqrt((s[3:] ** 2).sum()), atol=1e-4)
    assert np.allclose(_delta(average([one, one], rank=4), 4.0), _delta(*one), atol=1e-4)


def test_adapters_of_other_weights_are_refused_in_one_line():
    average = _average()
    rng = np.random.default_rng(2)
    one = _adapter(rng, 2, 4.0)
    other = ({k.replace("attn_q", "attn_k"): v for k, v in one[0].items()}, 4.0)
    with pytest.raises(SystemExit, match="adapt different weights"):
        average([one, other], rank=2)
