"""Which model answers and how it samples: the settings every caller with a model shares.

One pydantic model (extra keys refused, each range stated once) that the LLM planners, the step
scorer and the LLM repairer take, and that ``barsym``'s options are generated from
(:mod:`barsym.commands.options`), so the command line and the library cannot disagree on a range.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: the choosers --llm-stand-in names (barsym.llm.stand_in implements them)
StandIn = Literal["copy-facts", "largest", "random", "first"]
STAND_INS: tuple[str, ...] = get_args(StandIn)

#: llama.cpp's sampler seed is a 32-bit unsigned integer; a larger one overflows in the binding or the server
MAX_SEED = 2**32 - 1


class ModelSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(
        None,
        description="GGUF model to run in-process (default: $BARSYM_MODEL, else the packaged SmolLM2-135M)",
        json_schema_extra={"metavar": "PATH"},
    )
    adapter: str | None = Field(
        None,
        description="LoRA adapter on the in-process model: by default the one barsym ships (taught by barsym "
        "distill, for the embedded model; `barsym model` shows its card), 'none' for the base model alone, "
        "or a path to another adapter GGUF",
        json_schema_extra={"metavar": "PATH|none"},
    )
    llm_url: str | None = Field(
        None,
        description="OpenAI-compatible server instead of an in-process model, e.g. http://127.0.0.1:8080",
        json_schema_extra={"metavar": "URL"},
    )
    llm_stand_in: StandIn | None = Field(
        None,
        description="no model: a chooser answers under the same grammar, to show what the model adds: "
        "copy-facts, largest, random or first (barsym.llm.stand_in); tables name the planner bar[NAME]",
        json_schema_extra={"metavar": "NAME"},
    )
    threads: int | None = Field(
        None,
        ge=1,
        le=512,
        description="CPU threads for the in-process model (default: all cores)",
        json_schema_extra={"metavar": "N"},
    )
    seed: int = Field(
        0, ge=0, le=MAX_SEED, description="sampling seed", json_schema_extra={"flag": "--llm-seed", "metavar": "N"}
    )
    temperature: float = Field(
        0.0,
        ge=0,
        le=5,
        allow_inf_nan=False,
        description="sampling temperature; 0 is greedy",
        json_schema_extra={"metavar": "T"},
    )
    timeout: float = Field(
        30.0,
        ge=0.1,
        le=3600,
        allow_inf_nan=False,
        description="seconds to wait for a server reply",
        json_schema_extra={"flag": "--llm-timeout", "metavar": "S"},
    )
    api_key: str | None = Field(
        None, description="bearer token for --llm-url (default: $OPENAI_API_KEY)", json_schema_extra={"metavar": "KEY"}
    )
    llm_model: str | None = Field(
        None,
        description="model name sent to --llm-url (servers that host several models need it)",
        json_schema_extra={"metavar": "NAME"},
    )

    @model_validator(mode="after")
    def _one_source(self) -> "ModelSettings":
        if self.model is not None and self.llm_url is not None:
            raise ValueError("give either --model (in-process) or --llm-url (server), not both")
        if self.llm_stand_in is not None and (self.model is not None or self.llm_url is not None):
            raise ValueError("--llm-stand-in replaces the model; drop --model/--llm-url")
        if self.adapter is not None and self.llm_url is not None:
            raise ValueError(
                "--adapter is for the in-process model; a server applies its own (python -m llama_cpp.server "
                "--lora_path ADAPTER.gguf): drop --adapter"
            )
        if self.adapter is not None and self.llm_stand_in is not None:
            raise ValueError("--llm-stand-in replaces the model; drop --adapter")
        for option, value in (("--api-key", self.api_key), ("--llm-model", self.llm_model)):
            if value is not None and self.llm_url is None:
                raise ValueError(f"{option} is for an OpenAI-compatible server; give --llm-url too")
        return self
