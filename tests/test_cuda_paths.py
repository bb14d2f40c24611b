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
