"""The training engine: backends x precisions, precision truth, equivalence, stop, divergence."""

from __future__ import annotations

import math
import threading

import pytest
import torch
from conftest import events_of, summary_of

from mpdemo import RunConfig, prepare, train
from mpdemo.messages import ConfigError

SUMMARY_KEYS = {
    "backend", "precision", "device", "requested_dtype", "effective_dtype", "params", "steps",
    "skipped_steps", "final_loss", "mean_step_s", "samples_per_s", "peak_mem_bytes",
    "final_loss_scale", "status", "warnings",
}  # fmt: skip


@pytest.mark.parametrize("backend", ["torch", "accelerate", "trainer"])
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_every_backend_runs_fp32_and_bf16(small_cfg: RunConfig, backend: str, precision: str):
    events = events_of(small_cfg.replace(backend=backend, precision=precision))
    kinds = [e.kind for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end"
    assert kinds.count("step") == small_cfg.steps
    assert kinds.count("eval") == 1
    s = summary_of(events)
    assert set(s) >= SUMMARY_KEYS
    assert s["status"] == "completed"
    assert s["steps"] == small_cfg.steps
    # On a CPU both fp32 and bf16 really run as asked, in all three backends.
    assert s["effective_dtype"] == precision
    assert 0.0 <= s["eval_accuracy"] <= 1.0
    assert s["final_loss_scale"] is None and s["skipped_steps"] == 0
    steps = [e for e in events if e.kind == "step"]
    assert [e.step for e in steps] == list(range(1, small_cfg.steps + 1))
    assert all(e.step_time_s > 0 and e.samples_per_s > 0 and e.tokens_per_s > 0 for e in steps)


@pytest.mark.parametrize(
    ("backend", "effective"), [("torch", "fp16"), ("accelerate", "fp32"), ("trainer", "fp32")]
)
def test_fp16_on_cpu_audit_says_what_ran(small_cfg: RunConfig, backend: str, effective: str):
    cfg = small_cfg.replace(backend=backend, precision="fp16", steps=2)
    s = summary_of(events_of(cfg))
    assert s["status"] == "completed"
    assert s["requested_dtype"] == "fp16"
    assert s["effective_dtype"] == effective
    keys = [w["key"] for w in s["warning_keys"]]
    if backend == "torch":
        # Only the torch loop autocasts fp16 on a CPU: it runs, with a scaler. No sentence about
        # its speed unless the profile calibrated it (train() alone does not calibrate).
        assert s["final_loss_scale"] == 2.0**16
        assert not {"speed_slower", "speed_faster", "speed_same"} & set(keys)
    else:
        assert "fp16_not_applied" in keys
        assert s["final_loss_scale"] is None
        text = " ".join(s["warnings"])
        assert "fp16 requested, ran in fp32" in text


def test_backends_agree_in_fp32(small_cfg: RunConfig):
    cfg = small_cfg.replace(steps=6)
    curves = {}
    for backend in ("torch", "accelerate", "trainer"):
        events = events_of(cfg.replace(backend=backend))
        curves[backend] = [e.loss for e in events if e.kind == "step"]
    # Same weights, same batches, no dropout: the curves agree to float32 round-off.
    for backend in ("accelerate", "trainer"):
        assert curves[backend] == pytest.approx(curves["torch"], abs=1e-5), backend


def test_course_loop_on_prepare_matches_train(small_cfg: RunConfig):
    prep = prepare(small_cfg)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    by_hand = []
    for batch in prep.train_dataloader:
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False):
            outputs = prep.model(**batch)
            loss = outputs.loss
        scaler.scale(loss).backward()
        scaler.step(prep.optimizer)
        scaler.update()
        prep.optimizer.zero_grad()
        by_hand.append(loss.item())
    engine = [e.loss for e in events_of(small_cfg) if e.kind == "step"]
    assert engine == pytest.approx(by_hand, abs=1e-6)


def test_same_config_same_weights_and_batches(small_cfg: RunConfig):
    a, b = prepare(small_cfg), prepare(small_cfg)
    for pa, pb in zip(a.model.parameters(), b.model.parameters(), strict=True):
        assert torch.equal(pa, pb)
    for ba, bb in zip(a.train_dataloader, b.train_dataloader, strict=True):
        assert torch.equal(ba["input_ids"], bb["input_ids"])
        assert torch.equal(ba["labels"], bb["labels"])
    batch = next(iter(a.train_dataloader))
    assert set(batch) >= {"input_ids", "attention_mask", "labels"}
    assert len(a.train_dataloader) == small_cfg.steps
    c = prepare(small_cfg.replace(seed=1))
    assert not torch.equal(next(iter(c.model.parameters())), next(iter(a.model.parameters())))


@pytest.mark.parametrize("backend", ["torch", "accelerate", "trainer"])
def test_stop_ends_run_within_one_step(small_cfg: RunConfig, backend: str):
    stop = threading.Event()
    cfg = small_cfg.replace(backend=backend, steps=200)
    seen = []
    for ev in train(cfg, stop):
        seen.append(ev)
        if ev.kind == "step" and ev.step == 3:
            stop.set()
    steps = [e for e in seen if e.kind == "step"]
    # The worker may already be inside step 4 when stop is set: it finishes that step, no more.
    assert 3 <= len(steps) <= 4
    s = summary_of(seen)
    assert s["status"] == "stopped" and s["steps"] == len(steps)
    assert not any(e.kind == "eval" for e in seen)


def test_learning_rate_10_diverges_and_keeps_curve(small_cfg: RunConfig):
    events = events_of(small_cfg.replace(lr=10.0, steps=40))
    s = summary_of(events)
    assert s["status"] == "diverged"
    steps = [e for e in events if e.kind == "step"]
    assert 1 <= len(steps) < 40 and s["steps"] == len(steps)
    assert any(w["key"].startswith("diverged") for w in s["warning_keys"])


def test_fp16_without_loss_scaling_says_so(small_cfg: RunConfig):
    cfg = small_cfg.replace(precision="fp16", loss_scaling=False, steps=2)
    s = summary_of(events_of(cfg))
    assert s["final_loss_scale"] is None
    assert "no_scaler" in [w["key"] for w in s["warning_keys"]]


def test_scale_moves_with_low_growth_interval(small_cfg: RunConfig):
    cfg = small_cfg.replace(precision="fp16", growth_interval=1, init_scale=2.0**10, steps=3)
    steps = [e for e in events_of(cfg) if e.kind == "step"]
    assert [e.loss_scale for e in steps] == [2.0**11, 2.0**12, 2.0**13]
    assert not any(e.skipped for e in steps)


def test_overflowing_scale_backs_off_and_marks_skips(small_cfg: RunConfig):
    # A scale of 2^40 overflows fp16 gradients: the scaler skips and halves until it fits.
    cfg = small_cfg.replace(precision="fp16", init_scale=2.0**40, steps=3)
    steps = [e for e in events_of(cfg) if e.kind == "step"]
    assert steps[0].skipped and steps[0].loss_scale == 2.0**39
    assert sum(e.skipped for e in steps) >= 1


def test_causal_lm_and_mlp_run(small_cfg: RunConfig):
    s = summary_of(events_of(small_cfg.replace(model="tiny-gpt2", steps=2)))
    assert s["status"] == "completed" and math.isfinite(s["eval_loss"])
    assert "eval_accuracy" not in s
    s = summary_of(events_of(RunConfig(model="amp-mlp", steps=1, batch_size=8, device="cpu")))
    assert s["status"] == "completed" and s["params"] == 3 * (4096 * 4096 + 4096)
    assert s["dataset"] == "random"


def test_slices(small_cfg: RunConfig):
    s = summary_of(events_of(small_cfg.replace(train_slice="train[:100000]", steps=1)))
    assert s["train_rows"] == 4000
    assert any(w["key"] == "slice_clamped" and w["args"]["rows"] == 4000 for w in s["warning_keys"])
    assert prepare(small_cfg.replace(train_slice="train[:10%]")).train_rows == 400
    with pytest.raises(ConfigError, match="train\\[:abc\\]"):
        prepare(small_cfg.replace(train_slice="train[:abc]"))
    with pytest.raises(ConfigError, match="selects no rows"):
        prepare(small_cfg.replace(train_slice="train[:0]"))
    with pytest.raises(ConfigError, match="no split 'test'"):
        prepare(small_cfg.replace(eval_slice="test[:10]"))


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"steps": 0}, "steps"),
        ({"steps": 10**9}, "steps"),
        ({"batch_size": -1}, "batch_size"),
        ({"lr": float("nan")}, "lr"),
        ({"lr": 0.0}, "lr"),
        ({"precision": "fp4"}, "precision"),
        ({"backend": "jax"}, "backend"),
        ({"device": "cuda"}, "CUDA"),
        ({"model": "no such model"}, "not a built-in model"),
        ({"model": "x" * 10_000_000}, "at most"),
    ],
)
def test_bad_input_raises_clear_error(small_cfg: RunConfig, change: dict, needle: str):
    if change.get("device") == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ConfigError, match=needle):
        prepare(small_cfg.replace(**change))


def test_a_config_comes_back_from_json_as_it_was() -> None:
    # A restored run's script said init_scale=65536 where the run's own said 65536.0.
    import json

    cfg = RunConfig(lr=1e-3, init_scale=65536.0, steps=30)
    back = RunConfig.from_dict(json.loads(json.dumps({**cfg.to_dict(), "init_scale": 65536})))
    assert back == cfg and isinstance(back.init_scale, float) and isinstance(back.steps, int)


def test_the_runs_of_a_comparison_tokenize_their_rows_once(small_cfg: RunConfig) -> None:
    # Runs that differ only in precision read the same tokenized rows (one tokenization); a
    # different length or slice is tokenized anew, and the batches are the same as before.
    from mpdemo.engine import data

    data.forget_tokenized()
    fp32 = prepare(small_cfg)
    bf16 = prepare(small_cfg.replace(precision="bf16"))
    assert bf16.eval_dataset is fp32.eval_dataset
    shorter = prepare(small_cfg.replace(max_length=32))
    assert shorter.eval_dataset is not fp32.eval_dataset
    assert shorter.eval_dataset[0]["input_ids"].shape == (32,)
    data.forget_tokenized()
    fresh = prepare(small_cfg)
    assert fresh.eval_dataset is not fp32.eval_dataset
    assert torch.equal(fresh.eval_dataset[:]["input_ids"], fp32.eval_dataset[:]["input_ids"])
    first = [b["input_ids"] for b in fp32.train_dataloader]
    again = [b["input_ids"] for b in fresh.train_dataloader]
    assert all(torch.equal(a, b) for a, b in zip(first, again, strict=True))
