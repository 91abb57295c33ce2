"""Issue 53, item 1: a checkpoint given to ``barsym distill --resume/--warm-start`` is never unpickled.

``tests/data/checkpoints/tiny.ckpt`` is a real ``torch.save`` checkpoint (``make_tiny.py`` beside it);
the planted ones are zips laid out as torch lays them out, whose ``data.pkl`` calls ``os.system`` or
``builtins.eval`` when read with Python's own unpickler. Every refusal is checked to run nothing (the
file the planted command would create is never there). The torch tests run where the [train] extra is
installed; the rest need no torch, so CI runs them.
"""

from __future__ import annotations

import io
import os
import pickle
import zipfile
from pathlib import Path

import pytest

from barsym.distill.checkpoint import CheckpointError, inspect
from barsym.llm.install import importable
from cli_run import one_line, run

pytestmark = pytest.mark.hostile

TINY = Path(__file__).resolve().parents[1] / "data" / "checkpoints" / "tiny.ckpt"
#: the settings tiny.ckpt was made with, as flags (make_tiny.py)
TINY_FLAGS = ["--lora-rank", "2", "--lora-layers", "1"]


class _Call:
    """Pickles as a call of ``func(*args)``: what a planted checkpoint does when unpickled."""

    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __reduce__(self):
        return self.func, self.args


def _zip_like_torch(path: Path, data_pkl: bytes, extra: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("evil/data.pkl", data_pkl)
        archive.writestr("evil/version", b"3\n")
        for name, data in (extra or {}).items():
            archive.writestr(f"evil/{name}", data)
    return path


def _planted(tmp_path: Path, how: str) -> tuple[Path, Path]:
    """A planted checkpoint and the file it would create if it ever ran."""
    marker = tmp_path / f"ran-{how}"
    command = f"touch {marker}"
    if how == "os.system":
        payload = pickle.dumps({"adapters": _Call(os.system, command)}, protocol=2)
    elif how == "stack-global":  # protocol 4 names the function with STACK_GLOBAL
        payload = pickle.dumps({"config": {}, "adapters": {"x.lora_A": _Call(os.system, command)}}, protocol=4)
    elif how == "eval":
        payload = pickle.dumps(_Call(eval, f"__import__('os').system({command!r})"), protocol=2)
    elif how == "raw-pickle":  # not even a zip: torch's legacy format, or a bare pickle
        path = tmp_path / "raw.ckpt"
        path.write_bytes(pickle.dumps(_Call(os.system, command)))
        return path, marker
    else:
        raise AssertionError(how)
    return _zip_like_torch(tmp_path / f"{how}.ckpt", payload), marker


def _rewritten(tmp_path: Path, change) -> Path:
    """tiny.ckpt with its members passed through ``change(name, data) -> data | None`` (None drops it)."""
    out = tmp_path / "changed.ckpt"
    with zipfile.ZipFile(TINY) as src, zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            data = change(name, src.read(name))
            if data is not None:
                dst.writestr(name, data)
    return out


def _repickled(tmp_path: Path, edit) -> Path:
    """tiny.ckpt with its pickled dict edited (read with the safe reader's own stand-ins, written back by hand)."""
    from barsym.distill import checkpoint

    with zipfile.ZipFile(TINY) as src:
        pkl = next(n for n in src.namelist() if n.endswith("data.pkl"))
        saved = checkpoint._Reader(src.read(pkl), {}).load()
    edit(saved)
    # only the plain values are edited; a dict without tensors pickles with no global at all
    return _rewritten(
        tmp_path, lambda name, data: pickle.dumps(_plain(saved), protocol=2) if name.endswith("data.pkl") else data
    )


def _plain(value):
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if not _has_tensor(v)}
    return value


def _has_tensor(value) -> bool:
    from barsym.distill.checkpoint import _Tensor

    if isinstance(value, _Tensor):
        return True
    if isinstance(value, dict):
        return any(_has_tensor(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_tensor(v) for v in value)
    return False


def test_a_checkpoint_barsym_wrote_reads_without_torch():
    found = inspect(TINY, resume=True)
    assert found["step"] == 1 and found["data"] == "0123456789abcdef" and found["config"]["lora_rank"] == 2
    assert inspect(TINY, resume=False)["train_seconds"] == 3.5


@pytest.mark.parametrize("how", ["os.system", "stack-global", "eval", "raw-pickle"])
def test_a_planted_checkpoint_is_refused_and_runs_nothing(tmp_path, how):
    path, marker = _planted(tmp_path, how)
    with pytest.raises(CheckpointError) as refused:
        inspect(path, resume=True)
    assert not marker.exists()
    message = str(refused.value)
    if how == "raw-pickle":
        assert "not the zip file torch.save writes" in message
    else:
        assert "which a checkpoint never holds" in message and "nothing was run" in message
        assert ("system" in message) or ("eval" in message)


def _cut_member(member: str, keep: int):
    return lambda name, data: data[:keep] if name.endswith(member) else data


@pytest.mark.parametrize(
    "damage, words",
    [
        ("truncated-file", "not a checkpoint"),
        ("empty-file", "not a checkpoint"),
        ("tensor-data-cut", "missing or cut short"),
        ("tensor-data-gone", "missing or cut short"),
        ("pickle-cut", "data.pkl is damaged"),
        ("pickle-garbage", "data.pkl is damaged"),
        ("no-pickle", "no single data.pkl"),
    ],
)
def test_a_damaged_checkpoint_is_one_reason(tmp_path, damage, words):
    if damage == "truncated-file":
        path = tmp_path / "cut.ckpt"
        path.write_bytes(TINY.read_bytes()[:5000])
    elif damage == "empty-file":
        path = tmp_path / "empty.ckpt"
        path.write_bytes(b"")
    elif damage == "tensor-data-cut":
        path = _rewritten(tmp_path, _cut_member("data/0", 10))
    elif damage == "tensor-data-gone":
        path = _rewritten(tmp_path, lambda name, data: None if name.endswith("data/1") else data)
    elif damage == "pickle-cut":
        path = _rewritten(tmp_path, _cut_member("data.pkl", 700))
    elif damage == "pickle-garbage":
        path = _rewritten(tmp_path, lambda name, data: os.urandom(len(data)) if name.endswith("data.pkl") else data)
    else:
        path = _rewritten(tmp_path, lambda name, data: None if name.endswith("data.pkl") else data)
    with pytest.raises(CheckpointError, match=words):
        inspect(path, resume=True)


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda saved: saved.pop("optimizer"), "it has no optimizer"),
        (lambda saved: saved.__setitem__("step", "ten"), "'step' is not what training writes"),
        (lambda saved: saved.__setitem__("train_seconds", float("nan")), "'train_seconds'"),
        (lambda saved: saved.__setitem__("rng", (3, (1, 2), None)), "'rng'"),
        (lambda saved: saved.__setitem__("order", [1, -4]), "'order'"),
        (lambda saved: saved.__setitem__("config", [1]), "settings"),
    ],
)
def test_a_checkpoint_missing_or_mistyping_what_training_needs_is_refused(tmp_path, edit, words):
    from barsym.distill import checkpoint

    with zipfile.ZipFile(TINY) as src:
        pkl = next(n for n in src.namelist() if n.endswith("data.pkl"))
        saved = checkpoint._Reader(src.read(pkl), {}).load()
    edit(saved)
    monkey = pytest.MonkeyPatch()
    try:  # the edited dict, as the safe reader would have read it from the file
        monkey.setattr(checkpoint, "_read", lambda path: (saved, {}, {}))
        with pytest.raises(CheckpointError, match=words):
            inspect(TINY, resume=True)
    finally:
        monkey.undo()


def test_adapters_that_are_not_tensors_are_refused(tmp_path):
    path = _repickled(tmp_path, lambda saved: saved.__setitem__("adapters", {"x.lora_A": [1.0, 2.0]}))
    with pytest.raises(CheckpointError, match="not a LoRA tensor"):
        inspect(path, resume=False)


# ---- the command: one line, before anything loads -----------------------------------------------------------------


@pytest.fixture
def distill_without_training(monkeypatch):
    """``barsym distill`` as if the [train] extra were installed, with training itself a failure if reached."""
    import barsym.commands.distill as command
    import barsym.distill.pipeline as pipeline

    def reached(*args, **kwargs):
        raise AssertionError("the model would have loaded")

    monkeypatch.setattr(command, "missing_train_extra", lambda: None)
    monkeypatch.setattr(pipeline, "distill", reached)


@pytest.mark.parametrize("flag", ["--resume", "--warm-start"])
@pytest.mark.parametrize("how", ["os.system", "eval", "raw-pickle", "truncated"])
def test_distill_refuses_a_planted_or_damaged_checkpoint_in_one_line(
    tmp_path, capsys, distill_without_training, flag, how
):
    if how == "truncated":
        path, marker = tmp_path / "cut.ckpt", tmp_path / "never"
        path.write_bytes(TINY.read_bytes()[:3000])
    else:
        path, marker = _planted(tmp_path, how)
    argv = ["distill", "--out", tmp_path / "m.gguf", "--data", tmp_path / "d.jsonl", flag, path, *TINY_FLAGS]
    code, out, err = run(capsys, *argv)
    assert code == 2 and one_line(err) and not marker.exists()
    assert f"{flag} {path}:" in err and "give a checkpoint barsym distill wrote" in err


def test_distill_refuses_a_checkpoint_made_with_other_settings_before_loading(
    tmp_path, capsys, distill_without_training
):
    argv = ["distill", "--out", tmp_path / "m.gguf", "--data", tmp_path / "d.jsonl", "--resume", TINY]
    code, _, err = run(capsys, *argv, "--lora-rank", "8", "--lora-layers", "1")
    assert code == 2 and one_line(err) and "--lora-rank 2, not 8" in err
    code, _, err = run(capsys, *argv, *TINY_FLAGS, "--steps", "1")
    assert code == 2 and one_line(err) and "at step 1: give --steps above it" in err


def test_distill_takes_a_good_checkpoint_on_to_training(tmp_path, capsys, distill_without_training):
    data = tmp_path / "d.jsonl"
    data.write_text('{"kind": "cot", "messages": [{"role": "user", "content": "Task: stick"}], "reply": "done"}\n')
    argv = ["distill", "--out", tmp_path / "m.gguf", "--data", data, "--warm-start", TINY, *TINY_FLAGS]
    with pytest.raises(AssertionError, match="the model would have loaded"):
        run(capsys, *argv)  # past every check: on to training (which this test stops)


# ---- with torch: the loader training uses ------------------------------------------------------------------------

needs_torch = pytest.mark.skipif(not importable("torch"), reason="torch not installed (pip install 'barsym[train]')")


@needs_torch
def test_training_loads_checkpoints_with_torchs_weights_only_reader(tmp_path):
    import torch

    from barsym.distill.checkpoint import load

    saved = load(TINY, resume=True)
    assert saved["step"] == 1 and isinstance(next(iter(saved["adapters"].values())), torch.Tensor)
    path, marker = _planted(tmp_path, "os.system")
    with pytest.raises(pickle.UnpicklingError):  # torch's own reader refuses it too
        torch.load(path, weights_only=True)
    with pytest.raises(CheckpointError):
        load(path, resume=True)
    assert not marker.exists()


@needs_torch
def test_adapters_that_are_not_finite_are_refused(tmp_path):
    import torch

    from barsym.distill.checkpoint import load

    saved = torch.load(TINY, weights_only=True)
    name = next(iter(saved["adapters"]))
    saved["adapters"][name][0, 0] = float("nan")
    buffer = io.BytesIO()
    torch.save(saved, buffer)
    path = tmp_path / "nan.ckpt"
    path.write_bytes(buffer.getvalue())
    with pytest.raises(CheckpointError, match="not finite"):
        load(path, resume=True)
