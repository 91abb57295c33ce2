"""LoRA fine-tuning of the embedded GGUF on the oracle's examples, on the CPU (the ``[train]`` extra).

**What is trained.** transformers loads the GGUF itself (dequantizing its
Q4_1 weights to float32) with its tokenizer; peft puts LoRA adapters of rank
``r`` on every attention and MLP projection. Only the reply is scored: the
loss is the cross-entropy of the oracle's reply tokens (and the end-of-turn
token), given the prompt the planner sends, rendered with the GGUF's own chat
template exactly as barsym's runtime renders it (:mod:`barsym.llm.llamacpp.chat_prompt`).

**Why it fits a 2-core CPU.** Every prompt of one planner starts with the same
fixed prefix (system message and few-shot turns, 300-1,000 tokens), which is
also why barsym's runtime caches it. Training does the same: the prefix's
key/value cache is computed once per kind without gradients and each example
runs only its own tail (goal, facts, dialogue, reply: 20-400 tokens) on top of
a copy of it. The adapters change the prefix's keys and values too, so the
cache is recomputed every ``refresh`` steps; between refreshes the gradient
does not flow through the prefix (a documented approximation, measured in
docs/distill.md by what the result does). The logits are computed only at the
reply's positions (the 49k-word output layer is a quarter of the model).
With ``lora_layers=N`` only the last N blocks get adapters: the backward pass
then stops at the lowest of them, and the prefix caches of the blocks below
never go stale (measured on this machine, 2 shared cores: a 128-token tail
costs ~16 s forward and backward with adapters on all 30 blocks).

torch, transformers and peft are imported here only, when training starts.
"""

from __future__ import annotations

import copy
import math
import os
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from .adapter_start import peft_adapters
from .options import TrainConfig
from .train_checkpoint import (
    check_resumable,
    load_adapters,
    load_checkpoint,
    warm_start_record,
)

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass
class Encoded:
    kind: str
    tail: list[int]  # the tokens after the kind's shared prefix
    scored_from: int  # index in ``tail`` of the first reply token
    cut: int = 0  # tokens cut from the tail's end because it was longer than --seq-len


def load_base(gguf_path: str):
    """The GGUF as a transformers model (float32) and its tokenizer."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = os.path.split(os.path.abspath(gguf_path))
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    return model, tokenizer


class ChatRenderer:
    """The GGUF's chat template, rendered with jinja2 as llama-cpp-python's Jinja2ChatFormatter does."""

    def __init__(self, template: str, bos: str, eos: str):
        import jinja2

        env = jinja2.Environment(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True)
        self.template = env.from_string(template)
        self.bos, self.eos = bos, eos

    def prompt(self, messages) -> str:
        return self.template.render(
            messages=messages, add_generation_prompt=True, bos_token=self.bos, eos_token=self.eos
        )


def encode(examples, tokenizer, renderer: ChatRenderer, seq_len: int) -> tuple[dict[str, list[int]], list[Encoded]]:
    """Each kind's shared prompt prefix, and every example as its tail after that prefix."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    rows = []
    for ex in examples:
        prompt = tokenizer.encode(renderer.prompt(ex["messages"]), add_special_tokens=False)
        reply = tokenizer.encode(ex["reply"], add_special_tokens=False) + [end]
        rows += [(ex["kind"], prompt, reply)] * max(1, int(ex.get("repeat", 1)))  # an example taught n times
    prefixes: dict[str, list[int]] = {}
    for kind, prompt, _ in rows:
        if kind not in prefixes:
            prefixes[kind] = prompt
        else:
            known = prefixes[kind]
            n = next((i for i, (a, b) in enumerate(zip(known, prompt)) if a != b), min(len(known), len(prompt)))
            prefixes[kind] = known[:n]
    for kind, prefix in prefixes.items():  # leave at least the last prompt token to the tail
        prefixes[kind] = prefix[: max(0, min(len(prefix), min(len(p) for k, p, _ in rows if k == kind) - 1))]
    out = []
    for kind, prompt, reply in rows:
        tail = prompt[len(prefixes[kind]) :] + reply
        scored_from = len(tail) - len(reply)
        cut = max(0, len(tail) - seq_len)
        if cut:  # keep the reply's start: cut the tail's end
            tail = tail[:seq_len]
        if scored_from < len(tail):
            out.append(Encoded(kind, tail, scored_from, cut))
    return prefixes, out


def cut_note(rows: list[Encoded], seq_len: int) -> str | None:
    """One line when some replies lose their end to ``--seq-len``, or None when every example is whole.

    A cut example is never taught how its reply ends: with long plans that is the goal's own
    step and ``done``, the lines a planner most often gets wrong, so the trainer says so."""
    cut = [r for r in rows if r.cut]
    if not cut:
        return None
    longest = max(len(r.tail) + r.cut for r in cut)
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(Counter(r.kind for r in cut).items()))
    return (
        f"{len(cut)} of {len(rows)} examples ({kinds}) are longer than --seq-len {seq_len} and lose their reply's "
        f"end; --seq-len {longest} keeps every one whole"
    )


def data_digest(rows: list[Encoded]) -> str:
    """What the examples are, as a short hash: a resumed run must go on with the data it started with."""
    import hashlib

    h = hashlib.sha256()
    for row in rows:
        h.update(f"{row.kind}:{row.scored_from}:{','.join(map(str, row.tail))};".encode())
    return h.hexdigest()[:16]


def train(
    examples,
    gguf_path: str,
    config: TrainConfig,
    log: Callable[[str], None] = print,
    before=None,
    *,
    resume: str | None = None,
    warm_start: str | None = None,
    checkpoint: Callable[[object, dict], None] | None = None,
):
    """Fine-tune; returns (the peft model with its adapters, a summary dict).

    ``before(model)`` sees the base model. ``resume``: a checkpoint :func:`train` handed to
    ``checkpoint`` before (adapters, optimizer, schedule, data order, counters): training goes on
    from its step to ``config.steps``, and the summary adds up both runs. ``checkpoint(model,
    state)`` is called every ``config.checkpoint_minutes`` and at the end, so a run that is
    stopped -- by ``--minutes`` or by the machine -- loses at most that much.

    ``warm_start``: such a checkpoint's adapters only, to teach on from them with other examples
    (a second stage with another mix); the optimizer, schedule and step count start afresh, and
    the summary names the checkpoint with its steps and seconds so a card can add the stages up."""
    import torch
    from gguf import GGUFReader
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(config.seed)
    if config.threads:
        torch.set_num_threads(config.threads)
    started = time.perf_counter()
    # checkpoints first, never unpickled (.checkpoint): a planted or damaged one is refused before the model loads
    warm_saved = load_checkpoint(warm_start, config, resume=False) if warm_start is not None else None
    resume_saved = load_checkpoint(resume, config, resume=True) if resume is not None else None
    model, tokenizer = load_base(gguf_path)
    reader = GGUFReader(gguf_path)
    template = _field_text(reader, "tokenizer.chat_template") or tokenizer.chat_template
    renderer = ChatRenderer(template, tokenizer.bos_token or "", tokenizer.eos_token or "")
    if before is not None:
        before(model)
    prefixes, rows = encode(examples, tokenizer, renderer, config.seq_len)
    digest = data_digest(rows)
    log(
        f"loaded the model in {time.perf_counter() - started:.0f} s; {len(rows)} examples, shared prefixes "
        + ", ".join(f"{k} {len(p)}" for k, p in prefixes.items())
        + " tokens"
    )
    note = cut_note(rows, config.seq_len)
    if note is not None:
        log(note)
    blocks = model.config.num_hidden_layers
    top = list(range(blocks - min(config.lora_layers, blocks), blocks)) if config.lora_layers else None
    model = get_peft_model(
        model,
        LoraConfig(
            r=config.lora_rank,
            lora_alpha=config.lora_alpha,
            lora_dropout=0.0,
            target_modules=list(LORA_TARGETS),
            layers_to_transform=top,
            task_type="CAUSAL_LM",
        ),
    )
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=0.0)
    warmup = max(1, config.steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: (
            min(1.0, (s + 1) / warmup) * max(0.05, 0.5 * (1 + math.cos(math.pi * min(1.0, s / max(1, config.steps)))))
        ),
    )
    rng = random.Random(config.seed)
    order: list[int] = []
    losses: list[float] = []
    tokens, done, earlier_seconds, runs = 0, 0, 0.0, 1
    warm: dict | None = None
    if warm_saved is not None:
        warm = warm_start_record(warm_saved, config, warm_start)
        if "sha256" in warm_saved:  # an adapter GGUF (.adapter_start): its tensors under the peft model's names
            warm_saved["adapters"] = peft_adapters(warm_saved, model.state_dict().keys(), model.config)
            log(f"warm start from the adapter {warm_start} (sha256 {warm_saved['sha256'][:12]})")
        else:
            log(f"warm start from {warm_start}: its adapters after {warm['steps']} steps on other examples")
        load_adapters(model, warm_saved, warm_start)
    if resume is not None:
        saved = resume_saved
        check_resumable(saved, config, digest)
        load_adapters(model, saved, resume)
        optimizer.load_state_dict(saved["optimizer"])
        schedule.load_state_dict(saved["schedule"])
        rng.setstate(saved["rng"])
        order, losses, tokens, done = list(saved["order"]), list(saved["losses"]), saved["tokens"], saved["step"]
        earlier_seconds, runs = saved["train_seconds"], saved.get("runs", 1) + 1
        warm = saved.get("warm_start")
        log(f"resumed from {resume}: step {done}, {tokens} tail tokens, {earlier_seconds:.0f} s of training so far")
    caches: dict = {}
    training_started = last_saved = time.perf_counter()

    def state(step: int) -> dict:
        trained = {k: v.detach().clone() for k, v in model.state_dict().items() if "lora_" in k}
        return {
            "adapters": trained,
            "optimizer": optimizer.state_dict(),
            "schedule": schedule.state_dict(),
            "rng": rng.getstate(),
            "order": list(order),
            "losses": list(losses),
            "tokens": tokens,
            "step": step,
            "train_seconds": earlier_seconds + time.perf_counter() - training_started,
            "runs": runs,
            "config": config.model_dump(),
            "data": digest,
            "warm_start": warm,
        }

    def autocast():
        """bfloat16 matrix products where asked (--precision bf16: several times faster on CPUs with AMX or
        AVX512-BF16); the adapters, their gradients and the optimizer stay float32."""
        return torch.autocast("cpu", dtype=torch.bfloat16, enabled=config.precision == "bf16")

    step = done
    for step in range(done + 1, config.steps + 1):
        if (step - done - 1) % config.refresh == 0:
            with autocast():
                caches = _prefix_caches(model, prefixes)
        optimizer.zero_grad()
        total = 0.0
        drawn = []
        for _ in range(config.accumulate):
            if not order:
                order = list(range(len(rows)))
                rng.shuffle(order)
            drawn.append(rows[order.pop()])
        for batch in _batches(drawn, config.batch):
            with autocast():
                loss = _loss(model, batch, caches.get(batch[0].kind))
            (loss * len(batch) / config.accumulate).backward()
            total += loss.item() * len(batch) / config.accumulate
            tokens += sum(len(row.tail) for row in batch)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        losses.append(total)
        elapsed = time.perf_counter() - training_started
        if step % 5 == 0 or step == done + 1 or step == config.steps:
            recent = sum(losses[-5:]) / len(losses[-5:])
            log(
                f"step {step}/{config.steps}: loss {recent:.3f}, {tokens / (earlier_seconds + elapsed):.0f} tokens/s, {elapsed:.0f} s"
            )
        if checkpoint is not None and time.perf_counter() - last_saved > 60 * config.checkpoint_minutes:
            checkpoint(model, state(step))
            last_saved = time.perf_counter()
        if config.stop_at is not None and step >= config.stop_at:
            log(f"stopping after step {step} of {config.steps}, as --stop-at asks")
            break
        if config.minutes is not None and elapsed > 60 * config.minutes:
            log(f"stopping after {step} steps: the time limit of {config.minutes:g} min is reached")
            break
    final = state(step)
    if checkpoint is not None:
        checkpoint(model, final)
    summary = {
        "steps": step,
        "runs": runs,
        "examples": len(rows),
        "data_digest": digest,
        "tail_tokens": tokens,
        "first_loss": losses[0] if losses else None,
        "last_loss": sum(losses[-5:]) / max(1, len(losses[-5:])),
        "train_seconds": round(final["train_seconds"], 1),
        "lora_rank": config.lora_rank,
        "lora_alpha": config.lora_alpha,
        "lora_layers": config.lora_layers or model.config.num_hidden_layers,
        "learning_rate": config.learning_rate,
        "seq_len": config.seq_len,
        "cut_examples": sum(1 for r in rows if r.cut),
        "accumulate": config.accumulate,
        "batch": config.batch,
        "precision": config.precision,
        "seed": config.seed,
    }
    if warm is not None:
        summary["warm_start"] = warm
    return model, summary


def _field_text(reader, key: str) -> str | None:
    field = reader.fields.get(key)
    if field is None:
        return None
    return bytes(field.parts[field.data[0]]).decode("utf-8")


def _prefix_caches(model, prefixes: dict[str, list[int]]) -> dict:
    import torch

    caches = {}
    with torch.no_grad():
        for kind, prefix in prefixes.items():
            if prefix:
                out = model(input_ids=torch.tensor([prefix]), use_cache=True)
                caches[kind] = (out.past_key_values, len(prefix))
    return caches


def _batches(rows: list[Encoded], size: int) -> list[list[Encoded]]:
    """The step's examples as forward passes: of one kind each (they share its prefix cache), at most ``size``
    each, in the order drawn within a kind; similar lengths together, so little of a batch is padding."""
    by_kind: dict[str, list[Encoded]] = {}
    for row in rows:
        by_kind.setdefault(row.kind, []).append(row)
    out = []
    for group in by_kind.values():
        group = sorted(group, key=lambda r: len(r.tail))
        out += [group[i : i + size] for i in range(0, len(group), size)]
    return out


def _loss(model, rows: list[Encoded], cache):
    """The mean over ``rows`` of each reply's mean token cross-entropy, in one forward pass.

    Tails are padded on the right to the longest: a real token never attends to a pad after it, and
    the pads' own outputs are not scored. The prefix cache is copied and repeated for the batch."""
    import torch

    width = max(len(row.tail) for row in rows)
    ids = torch.tensor([row.tail + [0] * (width - len(row.tail)) for row in rows])
    past, start = (copy.deepcopy(cache[0]), cache[1]) if cache is not None else (None, 0)
    if past is not None and len(rows) > 1:
        past.batch_repeat_interleave(len(rows))
    positions = torch.arange(start, start + width).unsqueeze(0).expand(len(rows), -1)
    mask = torch.tensor([[1] * (start + len(row.tail)) + [0] * (width - len(row.tail)) for row in rows])
    body = model.get_base_model().model
    hidden = body(
        input_ids=ids,
        past_key_values=past,
        position_ids=positions,
        use_cache=past is not None,
        attention_mask=mask,
    ).last_hidden_state
    # position t predicts token t+1: score each row's reply tokens from ``scored_from``
    picked, targets, owner = [], [], []
    for i, row in enumerate(rows):
        first = max(1, row.scored_from)
        picked.append(hidden[i, first - 1 : len(row.tail) - 1])
        targets += row.tail[first:]
        owner += [i] * (len(row.tail) - first)
    logits = model.get_base_model().lm_head(torch.cat(picked))
    each = torch.nn.functional.cross_entropy(logits.float(), torch.tensor(targets), reduction="none")
    who = torch.tensor(owner)
    per_row = torch.zeros(len(rows)).index_add(0, who, each) / torch.bincount(who, minlength=len(rows)).clamp(min=1)
    return per_row.mean()
