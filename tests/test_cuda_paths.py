"""The CUDA code paths, exercised without a GPU (torch.cuda calls replaced where needed),
and the limits a public server relies on."""

from __future__ import annotations

import glob
import os
import tempfile
import threading
import warnings

import pytest
import torch
from conftest import events_of, summary_of

from mpdemo import RunConfig, prepare
from mpdemo.engine import precision as P
from mpdemo.messages import ConfigError


def test_auto_device_prefers_cuda_then_mps_then_cpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert P.resolve_device("auto").type == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert P.resolve_device("auto").type == "mps"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    assert P.resolve_device("auto").type == "cpu"
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        P.resolve_device("cuda")


def test_bf16_on_a_gpu_without_bf16_is_refused(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Tesla T4")
    with pytest.raises(ConfigError, match="Tesla T4"):
        P.check_precision_on(torch.device("cuda"), "bf16")
    P.check_precision_on(torch.device("cuda"), "fp16")  # fp16 is fine there


def test_cuda_scaler_and_sync(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: calls.append("sync"))
    P.synchronize(torch.device("cuda"))
    P.synchronize(torch.device("cpu"))
    assert calls == ["sync"]
    cfg = RunConfig(precision="fp16", init_scale=1024.0, growth_interval=7)
    with warnings.catch_warnings():  # without CUDA torch disables it; the path is the GPU's
        warnings.simplefilter("ignore")
        scaler = P.grad_scaler(torch.device("cuda"), "fp16", cfg)
    assert scaler._device == "cuda"
    assert not P.grad_scaler(torch.device("cpu"), "bf16", cfg).is_enabled()


def test_recorder_uses_cuda_memory_and_sync_on_gpu(monkeypatch, small_cfg):
    from mpdemo.engine.recorder import Recorder

    prep = prepare(small_cfg)
    prep.device = torch.device("cuda")  # the model stays on the CPU; only the bookkeeping moves
    syncs = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: syncs.append(1))
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda *a: 123_456_789)
    events = []
    rec = Recorder(prep, events.append, threading.Event())
    rec.start()
    rec.begin()
    assert rec.end(torch.tensor(0.5), None)
    summary = rec.finish()
    assert len(syncs) == 2  # before the step and before the clock is read
    assert summary["peak_mem_bytes"] == 123_456_789
    assert summary["peak_mem_kind"] == "cuda max_memory_allocated"


def test_model_size_cap(monkeypatch, small_cfg):
    monkeypatch.setenv("MPDEMO_MAX_PARAMS", "1000")
    with pytest.raises(ConfigError, match="at most 1,000"):
        prepare(small_cfg)


def test_trainer_output_dir_removed_also_when_run_fails(monkeypatch, small_cfg):
    import transformers

    def boom(self, *a, **k):
        raise RuntimeError("simulated crash inside Trainer.train")

    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "mpdemo-trainer-*")))
    monkeypatch.setattr(transformers.Trainer, "train", boom)
    s = summary_of(events_of(small_cfg.replace(backend="trainer")))
    assert s["status"] == "failed" and "simulated crash" in " ".join(s["warnings"])
    after = set(glob.glob(os.path.join(tempfile.gettempdir(), "mpdemo-trainer-*")))
    assert after <= before


def test_huge_text_and_hub_id_syntax_are_refused_before_any_request(small_cfg):
    with pytest.raises(ConfigError, match="at most 512"):
        prepare(small_cfg.replace(train_slice="x" * 10_000_000))
    with pytest.raises(ConfigError, match="not a built-in model"):
        prepare(small_cfg.replace(model="owner/bad name!"))


# --- every tensor the engine makes on its own goes to the run's device ------------------------
# Two guards: a lint over the engine's source (a tensor factory must name its device), and the
# watched-gradients code run with the default device set to `meta` while the model is on the
# CPU, so a tensor built without device= lands on another device than the model's, as a CPU
# boundary did on CUDA (gradwatch's bucketize on an H200, 2026-12-04).

FACTORIES = {"tensor", "zeros", "ones", "empty", "full", "arange", "linspace", "logspace",
             "rand", "randn", "randint", "randperm", "as_tensor", "eye", "Generator"}  # fmt: skip
# Tensors built on the CPU on purpose: the dataset's rows (the loader moves each batch to the
# device), named in one place so a new one is a decision.
CPU_ON_PURPOSE = {"mpdemo/engine/data.py"}


def _factories_without_device(path) -> list[str]:
    import ast

    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        base = node.func.value
        if not (isinstance(base, ast.Name) and base.id == "torch"):
            continue
        if node.func.attr in FACTORIES and not any(k.arg == "device" for k in node.keywords):
            out.append(f"{path.name}:{node.lineno} torch.{node.func.attr}")
    return out


def test_engine_tensor_factories_name_their_device():
    from conftest import ROOT

    found = []
    for folder in ("mpdemo/engine", "mpdemo/backends"):
        for path in sorted((ROOT / folder).glob("*.py")):
            if str(path.relative_to(ROOT)) not in CPU_ON_PURPOSE:
                found += _factories_without_device(path)
    assert not found, f"tensor factories without device= (they land on the default device): {found}"
    # The lint sees what it is meant to: the bug it guards against, written out, is found.
    bad = ROOT / "tests" / "_bad_factory_tmp.py"
    try:
        bad.write_text("import torch\nedges = torch.arange(0, 4, dtype=torch.float32)\n")
        assert _factories_without_device(bad) == ["_bad_factory_tmp.py:2 torch.arange"]
    finally:
        bad.unlink()


def test_watched_gradients_stay_on_the_models_device():
    from mpdemo.engine.gradwatch import GradWatch, histogram

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    x = torch.randn(4, 8)
    expected = histogram(torch.randn(64) * 1e-6, "fp16")
    watch = GradWatch(model, "fp16", every=1)
    torch.set_default_device("meta")  # anything built without device= now lands elsewhere
    try:
        g = torch.randn(64, generator=torch.Generator(device="cpu").manual_seed(0), device="cpu")
        got = histogram(g * 1e-6, "fp16")
        watch.arm(1)
        model(x).sum().backward()
        snap = watch.collect(1, None)
    finally:
        torch.set_default_device(None)
    assert got["elements"] == expected["elements"] == 64
    assert sum(got["counts"]) == 64
    assert snap is not None and {layer["name"] for layer in snap["layers"]} == {"0", "2"}
    assert all(sum(layer["counts"]) == layer["elements"] for layer in snap["layers"])
