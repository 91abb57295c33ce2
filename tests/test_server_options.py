"""The OpenAI-compatible backend: the grammar in each server's own field, --api-key / $OPENAI_API_KEY, --llm-model."""

from __future__ import annotations

import json
import warnings

import pytest

from barsym.cli import main
from barsym.llm.base import CompletionRequest
from barsym.llm.http.backend import OpenAIHTTPBackend
from loopback import JsonHandler, Loopback

GRAMMAR = 'root ::= "craft 4 stick: 2 planks"'


def server(owner: str | None):
    """A chat server whose /v1/models names ``owner`` (None: no model list), recording every request."""
    requests: list[dict] = []

    class Handler(JsonHandler):
        def do_GET(self):  # noqa: N802
            if owner is None:
                self._send(404, b'{"error": "no such route"}')
            else:
                self._send(200, json.dumps({"data": [{"id": "m", "owned_by": owner}]}).encode())

        def do_POST(self):  # noqa: N802
            requests.append({"headers": dict(self.headers), "body": self.read_json()})
            reply = {
                "choices": [{"message": {"content": "craft 4 stick: 2 planks"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            }
            self._send(200, json.dumps(reply).encode())

    loop = Loopback(Handler)
    return loop, requests


@pytest.mark.parametrize(
    "owner, field, warned",
    [
        ("vllm", "guided_grammar", None),
        ("llamacpp", "grammar", None),
        ("me", "grammar", None),  # llama-cpp-python's server
        (None, "grammar", None),  # no model list: llama.cpp's form, as before
        ("", "grammar", None),  # a list naming no owner says nothing either
        ("openai", None, "cannot constrain output"),
        ("acme", "grammar", "is not one barsym knows"),
    ],
)
def test_grammar_goes_in_the_servers_own_field(owner, field, warned):
    loop, requests = server(owner)
    try:
        backend = OpenAIHTTPBackend(loop.url, timeout=5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                backend.complete([{"role": "user", "content": "Goal: 4 stick"}], grammar=GRAMMAR)
        body = requests[0]["body"]
        for name in ("grammar", "guided_grammar"):
            assert (body.get(name) == GRAMMAR) == (name == field)
        messages = [str(w.message) for w in caught]
        if warned:
            assert len(messages) == 1 and warned in messages[0]  # said once, not per call
        else:
            assert messages == []
    finally:
        loop.close()


def test_an_explicit_grammar_style_is_not_asked_for():
    backend = OpenAIHTTPBackend("http://127.0.0.1:9", grammar_style="vllm")
    payload = backend.build_payload(
        CompletionRequest([{"role": "user", "content": "x"}], max_tokens=5, temperature=0, seed=0, grammar=GRAMMAR)
    )
    assert payload["guided_grammar"] == GRAMMAR and "grammar" not in payload
    with pytest.raises(ValueError, match="grammar_style must be one of"):
        OpenAIHTTPBackend("http://127.0.0.1:9", grammar_style="outlines")


@pytest.mark.parametrize("key_option, env_key", [(["--api-key", "sk-cli"], None), ([], "sk-env")])
def test_api_key_and_model_reach_the_server(capsys, monkeypatch, key_option, env_key):
    if env_key:
        monkeypatch.setenv("OPENAI_API_KEY", env_key)
    else:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    loop, requests = server("vllm")
    try:
        code = main(
            [
                "plan",
                "stick",
                "--count",
                "4",
                "--planner",
                "bar",
                "--llm-url",
                loop.url,
                "--llm-model",
                "big-model",
                *key_option,
            ]
        )
        out, err = capsys.readouterr()
        assert code == 0, err
        assert requests and all(r["body"]["model"] == "big-model" for r in requests)
        assert all(r["headers"]["Authorization"] == f"Bearer {env_key or 'sk-cli'}" for r in requests)
    finally:
        loop.close()


def test_server_options_without_a_server_are_refused(capsys):
    for option in (["--api-key", "k"], ["--llm-model", "m"]):
        code = main(["plan", "stick", "--planner", "bar", *option])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and f"{option[0]} is for an OpenAI-compatible server; give --llm-url" in err


def test_the_api_builds_the_same_server_backend_as_the_cli(monkeypatch):
    """``barsym.plan(..., llm_url=, api_key=, llm_model=)`` reaches the server with the key and model, as the CLI does."""
    from barsym import api

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    loop, requests = server("vllm")
    try:
        planned = api.plan("stick", 4, planner="bar", llm_url=loop.url, llm_model="big-model", api_key="sk-api")
        assert planned.valid
        assert requests and all(r["body"]["model"] == "big-model" for r in requests)
        assert all(r["headers"]["Authorization"] == "Bearer sk-api" for r in requests)
    finally:
        loop.close()


SAMPLER_NAMES = ("repeat_penalty", "repetition_penalty", "top_k", "top_p", "min_p")


@pytest.mark.parametrize(
    "owner, sent",
    [
        # llama-cpp-python's server penalises repeats by default (1.1): barsym asks for its own sampler
        ("me", {"repeat_penalty": 1.0, "top_k": 40, "top_p": 0.95, "min_p": 0.05}),
        ("llamacpp", {"repeat_penalty": 1.0, "top_k": 40, "top_p": 0.95, "min_p": 0.05}),
        (None, {"repeat_penalty": 1.0, "top_k": 40, "top_p": 0.95, "min_p": 0.05}),
        ("vllm", {"repetition_penalty": 1.0, "top_k": 40, "top_p": 0.95, "min_p": 0.05}),
        ("openai", {}),  # OpenAI's API refuses fields it does not know
    ],
)
@pytest.mark.parametrize("grammar", [GRAMMAR, None])
def test_sampler_settings_go_in_the_servers_own_fields(owner, sent, grammar):
    loop, requests = server(owner)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the openai owner's warning is the test above's
            OpenAIHTTPBackend(loop.url, timeout=5).complete(
                [{"role": "user", "content": "Goal: 4 stick"}], grammar=grammar
            )
        body = requests[0]["body"]
        assert {name: body[name] for name in SAMPLER_NAMES if name in body} == sent
        assert body.get("presence_penalty", 0.0) == body.get("frequency_penalty", 0.0) == 0.0
    finally:
        loop.close()


@pytest.mark.parametrize(
    "owner, line",
    [
        ("me", "through the server at {url}: sampled replies (temperature > 0"),
        ("vllm", "through the server at {url}: sampled replies (temperature > 0"),
        ("openai", "the server at {url} cannot constrain output"),  # said by the grammar check, not twice
        ("acme", "the server at {url} (models owned by 'acme') is not one barsym knows"),
    ],
)
def test_what_differs_from_the_in_process_model_is_said_once(owner, line):
    loop, requests = server(owner)
    try:
        backend = OpenAIHTTPBackend(loop.url, timeout=5)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            backend.announce()
            backend.announce()
            backend.complete([{"role": "user", "content": "Goal: 4 stick"}], grammar=GRAMMAR)
        messages = [str(w.message) for w in caught]
        assert len(messages) == 1 and messages[0].startswith(line.format(url=loop.url)), messages
        assert len(requests) == 1  # announcing asked /v1/models only, no chat call
    finally:
        loop.close()


def test_a_run_through_a_server_sends_barsyms_sampler(capsys):
    loop, requests = server("me")
    try:
        code = main(["plan", "stick", "--count", "4", "--planner", "bar", "--llm-url", loop.url])
        _, err = capsys.readouterr()
        assert code == 0, err
        assert requests and all(r["body"]["repeat_penalty"] == 1.0 for r in requests)
    finally:
        loop.close()
