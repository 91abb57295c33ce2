"""Issue 53, items 2 and 5: refused credentials and a model computing NaN stop the command, never a fallback.

Before, HTTP 401 was a warning, the symbolic planner's plan printed under the name ``bar`` and exit 0;
NaN logits made every goal fall back the same way. Both are now a :class:`~barsym.llm.FatalBackendError`:
every planner, the step scorer, the repairer and the prose parser stop on it (the scripted backend
raises it at the first call), and the command line says it in one line, exit 2 (a loopback server
answering 401 and 403 for real).
"""

from __future__ import annotations

import json

import pytest

from barsym.kb import load_kb
from barsym.llm import BrokenModelError, CredentialsRefusedError, FatalBackendError, LLMOptions, ScriptedLLM
from barsym.model import Goal
from barsym.planner.registry import llm_planners, make_planner
from cli_run import one_line, run
from loopback import ChatStub

pytestmark = pytest.mark.hostile

KEY = "sk-test-0123456789abcdef"


@pytest.fixture(scope="module")
def kb():
    return load_kb()


FAILURES = [
    CredentialsRefusedError("server http://127.0.0.1:9 refused the credentials (HTTP 401): no. Check the API key"),
    BrokenModelError("the model computes numbers that are not finite (NaN)"),
]


@pytest.mark.parametrize("failure", FAILURES, ids=["401", "nan"])
@pytest.mark.parametrize("name", llm_planners())
def test_no_planner_falls_back_from_a_fatal_backend_error(kb, name, failure):
    backend = ScriptedLLM([failure] * 50, LLMOptions(n_ctx=8192))
    planner = make_planner(name, kb, backend=backend, log=False)
    with pytest.raises(FatalBackendError) as stopped:
        planner.plan(Goal(item="stone_pickaxe", count=1))
    assert stopped.value is failure
    assert len(backend.calls) == 1  # stopped at the first call: no retry, no second goal


@pytest.mark.parametrize("failure", FAILURES, ids=["401", "nan"])
def test_the_scorer_repairer_and_parser_stop_on_it_too(kb, failure):
    """The step scorer (weigh), the forward repairer (ask) and the parser (ask) use the gateway's short calls."""
    from barsym.planner.registry import graph_for
    from barsym.reasoning.calls.model_calls import ModelGateway
    from barsym.reasoning.prose.parser import ProseParser

    gateway = ModelGateway(ScriptedLLM([failure] * 5))
    with pytest.raises(FatalBackendError):
        gateway.ask([{"role": "user", "content": "x"}], 'root ::= "a"', 4, "about", lambda text: True)
    gateway = ModelGateway(ScriptedLLM([failure] * 5, probabilities=True))
    with pytest.raises(FatalBackendError):
        gateway.weigh([{"role": "user", "content": "x"}], ["yes", "no"], "about")
    parser = ProseParser(kb, graph_for(kb), ScriptedLLM([failure] * 5))
    with pytest.raises(FatalBackendError):
        parser.parse("mine 3 logs, then craft planks")


def _refusing(code: int) -> ChatStub:
    body = json.dumps({"error": {"message": f"invalid api key {KEY}", "code": code}}).encode()
    return ChatStub(status=lambda n, messages: (code, body))


@pytest.mark.parametrize("code", [401, 403])
@pytest.mark.parametrize("planner", ["bar", "deps", "cot"])
def test_plan_with_refused_credentials_is_one_line_and_no_plan(capsys, code, planner):
    stub = _refusing(code)
    try:
        argv = ["plan", "stick", "--planner", planner, "--llm-url", stub.url, "--api-key", KEY, "--format", "json"]
        status, out, err = run(capsys, *argv)
    finally:
        stub.close()
    assert status == 2 and one_line(err), err
    assert f"refused the credentials (HTTP {code})" in err and "--api-key" in err
    assert KEY not in out + err and KEY[:12] not in out + err
    result = json.loads(out)  # --format json: the refusal as a JSON outcome, never a plan under the planner's name
    assert result["status"] == "refused" and "steps" not in result


def test_eval_with_refused_credentials_stops_with_one_line(capsys, tmp_path):
    stub = _refusing(401)
    run_file = tmp_path / "run.jsonl"
    try:
        argv = ["eval", "--dataset", "bar", "--limit", "3", "--planner", "bar", "--llm-url", stub.url]
        status, out, err = run(capsys, *argv, "--api-key", KEY, "--run", run_file, "--quiet")
    finally:
        stub.close()
    assert status == 2 and "refused the credentials (HTTP 401)" in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("barsym: error:")
    records = [json.loads(line) for line in run_file.read_text().splitlines()[1:]] if run_file.exists() else []
    assert records == []  # no task recorded as planned by `bar` without the model
    assert KEY not in out + err
