"""What ``barsym distill`` is asked to do, as two models: the training's settings and the run's files.

:class:`TrainConfig` is what :func:`~.train.train` takes; :class:`DistillOptions` is what is decided
before training starts (how many examples of which mix, which files are read and written). Each
range is stated here once: the command line's options are generated from these fields
(:mod:`barsym.commands.options`), so ``barsym distill --steps 0`` and ``TrainConfig(steps=0)`` are
refused by the same rule, and a script that trains from Python gets the CLI's checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

MAX_STEPS = 1_000_000


class TrainConfig(BaseModel):
    """LoRA fine-tuning's settings (:mod:`.train` says what each one costs)."""

    model_config = ConfigDict(extra="forbid")

    steps: int = Field(200, ge=1, le=MAX_STEPS, description="optimizer steps", json_schema_extra={"metavar": "N"})
    accumulate: int = Field(
        4, ge=1, le=1024, description="examples per optimizer step", json_schema_extra={"metavar": "N"}
    )
    lora_rank: int = Field(16, ge=1, le=1024, description="LoRA rank", json_schema_extra={"metavar": "R"})
    lora_alpha: float = Field(32.0, gt=0, allow_inf_nan=False, description="LoRA scaling (alpha / rank)")
    lora_layers: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="put adapters on the last N transformer blocks only (default: all); "
        "fewer is cheaper: the backward pass stops at the lowest",
        json_schema_extra={"metavar": "N"},
    )
    learning_rate: float = Field(
        5e-4, ge=1e-7, le=1.0, description="AdamW learning rate", json_schema_extra={"metavar": "LR"}
    )
    seq_len: int = Field(
        512,
        ge=16,
        le=8192,
        description="longest example tail after the shared prompt prefix, in tokens",
        json_schema_extra={"metavar": "N"},
    )
    batch: int = Field(
        1,
        ge=1,
        le=256,
        description="examples of one kind in one forward pass (padded to the longest); more is faster for "
        "short examples",
        json_schema_extra={"metavar": "N"},
    )
    precision: Literal["f32", "bf16"] = Field(
        "f32",
        description="matrix products in float32, or in bfloat16 (several times faster on CPUs with AMX or "
        "AVX512-BF16; the adapters and optimizer stay float32)",
    )
    refresh: int = Field(25, ge=1, description="optimizer steps between recomputations of the prefix caches")
    stop_at: int | None = Field(
        None,
        ge=1,
        le=MAX_STEPS,
        description="stop after step N of the --steps schedule (the learning rate still follows --steps) and "
        "write the model: rebuilds a stage that was taken from a checkpoint before its last step",
        json_schema_extra={"metavar": "N"},
    )
    minutes: float | None = Field(
        None,
        ge=0,
        allow_inf_nan=False,
        description="stop training after this many minutes and write the model anyway",
        json_schema_extra={"metavar": "M"},
    )
    checkpoint_minutes: float = Field(
        10.0,
        gt=0,
        allow_inf_nan=False,
        description="write the adapter and a resumable checkpoint (OUT.ckpt) every M minutes of training",
        json_schema_extra={"metavar": "M"},
    )
    threads: int | None = Field(
        None, ge=1, le=256, description="torch threads (default: torch's choice)", json_schema_extra={"metavar": "N"}
    )
    seed: int = Field(
        0,
        ge=0,
        description="seed of the data and the training",
        json_schema_extra={"flag": "--train-seed", "metavar": "N"},
    )


class DistillOptions(BaseModel):
    """Which examples are made or read, and which files are written."""

    model_config = ConfigDict(extra="forbid")

    out: Path | None = Field(
        None,
        description="the LoRA adapter GGUF to write (required unless --data-only); a checkpoint goes beside it (OUT.ckpt)",
        json_schema_extra={"metavar": "ADAPTER.gguf"},
    )
    resume: Path | None = Field(
        None,
        description="go on training from a checkpoint written by an earlier run (OUT.ckpt), with the same --data",
        json_schema_extra={"metavar": "CKPT"},
    )
    warm_start: Path | None = Field(
        None,
        description="start from the adapters of an earlier run's checkpoint (OUT.ckpt) or of an adapter GGUF (the "
        "shipped one included) and teach on with other --data; the optimizer and step count start afresh",
        json_schema_extra={"metavar": "CKPT|ADAPTER.gguf"},
    )
    data_only: Path | None = Field(
        None,
        description="only write the training examples to FILE and stop (needs no [train] extra)",
        json_schema_extra={"metavar": "FILE.jsonl"},
    )
    data: Path | None = Field(
        None,
        description="train on these examples instead of generating them",
        json_schema_extra={"metavar": "FILE.jsonl"},
    )
    examples: int = Field(
        2000, ge=1, le=1_000_000, description="how many examples to generate", json_schema_extra={"metavar": "N"}
    )
    mix: dict[str, float] = Field(
        None,  # type: ignore[assignment]  # validated: None is the default mix
        validate_default=True,
        description="shares of the example kinds, e.g. cot=3,deps=3,bar-nofacts=2,bar=1,score=1 (the default)",
        json_schema_extra={"metavar": "KIND=W,..."},
    )
    goals: Literal["uniform", "length", "tiers"] = Field(
        "uniform",
        description="how training goals are drawn: uniform, length (in proportion to the cube of "
        "their plan's length, so long tech-tree plans are most of the data), or tiers (the deepest "
        "tool tier a plan needs -- none, wooden, stone, iron or past it -- gets 1:2:3:4 of the draws, "
        "length cubed within)",
    )
    out_type: Literal["f16", "f32"] = Field(
        "f16", description="precision of the adapter's tensors", json_schema_extra={"metavar": "TYPE"}
    )
    base: Path | None = Field(
        None,
        description="the GGUF to start from (default: the embedded model)",
        json_schema_extra={"metavar": "MODEL.gguf"},
    )

    @field_validator("mix", mode="before")
    @classmethod
    def _shares(cls, value):
        """``cot=3,deps=1`` as typed, or a mapping, as normalised shares (:func:`~.data.parse_mix`)."""
        from .data import parse_mix

        text = ",".join(f"{k}={v}" for k, v in value.items()) if isinstance(value, dict) else value
        return parse_mix(text)

    @model_validator(mode="after")
    def _one_thing_to_do(self) -> DistillOptions:
        if self.data_only is None and self.out is None:
            raise ValueError("give --out MODEL.gguf (the model to write), or --data-only FILE.jsonl for the data alone")
        if self.resume is not None and self.data is None:
            raise ValueError("--resume goes on with the examples the run started with: give --data FILE.jsonl too")
        if self.resume is not None and self.warm_start is not None:
            raise ValueError(
                "--resume goes on with a run's own examples and --warm-start begins a new run: give one of the two"
            )
        if self.data_only is not None and self.data is not None:
            raise ValueError("--data-only writes examples and --data reads them: give one of the two")
        return self
