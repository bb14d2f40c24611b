"""Issue 29 in runs: watched gradients, pure bf16 weights, lost updates, tf32's refusal."""

from __future__ import annotations

import json

import pytest
import torch

from mpdemo import RunConfig, prepare
from mpdemo.cli.main import main
from mpdemo.engine import gradwatch, master
from mpdemo.messages import ConfigError
from tests.conftest import events_of, summary_of


def test_histogram_counts_sum_to_the_elements_and_shares_match_torchs_cast() -> None:
    g = torch.cat(
        [
            torch.exp2(torch.empty(5000).uniform_(-45, 22)) * torch.sign(torch.randn(5000)),
            torch.tensor([0.0, 0.0, float("inf"), float("nan"), 2.0**-40, 2.0**20, 65520.0]),
        ]
    )
    for fmt, dtype in (("fp16", torch.float16), ("bf16", torch.bfloat16), ("e5m2", None)):
        h = gradwatch.histogram(g, fmt)
        assert sum(h["counts"]) == g.numel() == h["elements"]
        assert h["nonzero"] == int((g != 0).sum())  # the zeros apart from counts[0]'s tiny values
        assert len(h["counts"]) == len(h["bin_edges_log2"]) + 1
        if dtype is not None:
            nz = g != 0
            cast = g.to(dtype)
            assert h["flushed"] == int((nz & (cast == 0)).sum()) / int(nz.sum())
            assert h["overflow"] == int((~torch.isfinite(cast)).sum()) / g.numel()
    fp16 = gradwatch.histogram(g, "fp16")
    assert fp16["flushed"] > 0.2  # 2^-45 .. 2^-25: a quarter of the binades lie below fp16


def test_watch_grads_streams_histograms_every_n_steps(small_cfg: RunConfig, tmp_path) -> None:
    cfg = small_cfg.replace(precision="fp16", loss_scaling=False, watch_grads=2)
    events = events_of(cfg)
    grads = [e for e in events if e.kind == "grads"]
    assert [g.step for g in grads] == [2, 4]
    assert all(g.scale == 1.0 and g.format == "fp16" for g in grads)
    model = prepare(cfg).model
    sizes: dict[str, int] = {}
    for name, p in model.named_parameters():
        layer = name.rsplit(".", 1)[0]
        sizes[layer] = sizes.get(layer, 0) + p.numel()
    for layer in grads[0].layers:
        assert sum(layer["counts"]) == sizes[layer["name"]]
    assert summary_of(events)["status"] == "completed"
    # The runs JSON keeps them as grad_histograms, with the keys the issue names.
    out = tmp_path / "runs.json"
    code = main(
        [
            "run",
            "--steps",
            "2",
            "--train-slice",
            "train[:64]",
            "--eval-slice",
            "validation[:16]",
            "--batch-size",
            "8",
            "--precision",
            "fp16",
            "--watch-grads",
            "1",
            "--device",
            "cpu",
            "--json",
            str(out),
            "--quiet",
        ]
    )
    assert code == 0
    run = json.loads(out.read_text())["runs"][0]
    hist = run["grad_histograms"]
    assert [h["step"] for h in hist] == [1, 2] and hist[0]["scale"] == 65536.0
    assert set(hist[0]["layers"][0]) >= {
        "name",
        "bin_edges_log2",
        "counts",
        "flushed",
        "subnormal",
        "overflow",
    }


def test_watched_gradients_are_backwards_still_scaled_copied_once_backward_ended() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    watch = gradwatch.GradWatch(model, "fp16", every=2)
    watch.arm(1)
    assert not watch.armed  # only every 2nd step is watched
    watch.arm(2)
    # The copy each hook used to make at once, as a reference: each gradient as backward
    # completed it, in that order; and the watch's seconds so far, seen from inside backward.
    ref: list[tuple[str, torch.Tensor]] = []
    spent_inside: list[float] = []

    def reference(name: str):
        def hook(p: torch.Tensor) -> None:
            ref.append((name.rsplit(".", 1)[0], p.grad.detach().flatten().clone()))
            spent_inside.append(watch.spent)

        return hook

    handles = [
        p.register_post_accumulate_grad_hook(reference(n)) for n, p in model.named_parameters()
    ]
    # Small gradients: times 2^10 they fall elsewhere against fp16's windows.
    loss = model(torch.randn(32, 8)).pow(2).mean() * 1e-6
    scaler.scale(loss).backward()
    for h in handles:
        h.remove()
    assert spent_inside == [0.0] * 4  # nothing was copied while backward ran
    assert watch.spent > 0  # the copy ran once backward ended, and is timed
    scaler.step(opt)  # unscale_ divides every p.grad by 2^10 in place
    scaler.update()
    got = watch.collect(2, 2.0**10)
    assert got is not None and got["step"] == 2 and got["scale"] == 2.0**10
    order = list(dict.fromkeys(name for name, _ in ref))
    assert order == ["2", "0"]  # the layers in the order backward completed them
    want = [
        {"name": n, **gradwatch.histogram(torch.cat([g for m, g in ref if m == n]), "fp16")}
        for n in order
    ]
    assert got["layers"] == want  # the gradients the scaler guards, still times 2^10
    # ... not the unscaled ones the optimizer stepped with.
    scaled = sum(float(g.abs().sum()) for _, g in ref)
    assert scaled == pytest.approx(
        2.0**10 * sum(float(p.grad.abs().sum()) for p in model.parameters())
    )
    opt.zero_grad()
    watch.arm(3)  # not watched: no hook, no copy
    scaler.scale(model(torch.randn(32, 8)).pow(2).mean()).backward()
    assert watch.spent == 0.0 and watch.collect(3, scaler.get_scale()) is None


def test_pure_bf16_weights_are_bf16_and_report_lost_updates(small_cfg: RunConfig) -> None:
    cfg = small_cfg.replace(precision="bf16", weights="bf16", lr=1e-4)
    prep = prepare(cfg)
    assert {p.dtype for p in prep.model.parameters()} == {torch.bfloat16}
    events = events_of(cfg)
    steps = [e for e in events if e.kind == "step"]
    assert all(e.lost_update_share is not None for e in steps)
    s = summary_of(events)
    assert s["lost_update_share"] > 0.2  # lr 1e-4: most updates are under half a bf16 ulp
    assert s["bytes_per_param"]["weights"] == 2 and s["bytes_per_param"]["adam_moments"] == 4
    assert "bf16 weights" in s["label"]
    mixed = summary_of(events_of(small_cfg.replace(precision="bf16", lost_updates=True, lr=1e-4)))
    assert mixed["lost_update_share"] < s["lost_update_share"]
    assert (
        mixed["bytes_per_param"]["weights"] == 4 and mixed["bytes_per_param"]["adam_moments"] == 8
    )


def test_lost_update_share_is_from_the_weights_before_and_after() -> None:
    w = torch.nn.Parameter(torch.tensor([2.0**-6, 1.0, 256.0, 0.0], dtype=torch.bfloat16))
    opt = torch.optim.AdamW([w], lr=1e-3, weight_decay=0.0)
    lost = master.LostUpdates(opt)
    lost.snapshot()
    w.grad = torch.tensor([1.0, -1.0, 1.0, 0.0], dtype=torch.bfloat16)
    opt.step()
    # Adam's first step moves each weight with a gradient by lr = 1e-3: it survives at 2^-6
    # (an ulp of 2^-13) and rounds away at 1 (half an ulp below 1 is 2^-9) and at 256; the
    # zero-gradient element should not move at all and is not counted.
    assert lost.take() == pytest.approx(2 / 3)


def test_stochastic_rounding_adamw_lands_small_updates_on_average() -> None:
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.ones(20000, dtype=torch.bfloat16))
    opt = master.SRAdamW([w], lr=1e-3, weight_decay=0.0)
    for _ in range(10):
        w.grad = torch.ones_like(w)
        opt.step()
    assert w.dtype == torch.bfloat16
    # Ten steps of -1e-3 each: nearest rounding would leave every 1.0 where it was.
    assert float(w.detach().float().mean()) == pytest.approx(1 - 10e-3, abs=1e-3)


def test_bf16_weights_need_bf16_and_torch_and_tf32_needs_an_ampere_gpu() -> None:
    with pytest.raises(ConfigError, match="weights bf16"):
        RunConfig(precision="fp16", weights="bf16").validate()
    with pytest.raises(ConfigError, match="weights bf16-sr"):
        RunConfig(precision="bf16", weights="bf16-sr", backend="trainer").validate()
    with pytest.raises(ConfigError, match="weights must be one of"):
        RunConfig(weights="fp8").validate()
    from mpdemo.engine.core import preflight

    with pytest.raises(ConfigError, match="tf32 runs fp32 matmuls"):
        preflight(RunConfig(precision="tf32", device="cpu"))
    old = RunConfig.from_dict({"precision": "bf16", "steps": 3})  # an older config: defaults
    assert old.weights == "fp32" and old.watch_grads == 0 and not old.tracks_updates


def test_master_weights_lesson_configs_validate_and_differ_only_in_weights() -> None:
    from mpdemo.teach.lessons import get

    cfgs = get("master-weights").configs()
    assert [c.weights for c in cfgs] == ["fp32", "bf16", "bf16-sr"]
    for c in cfgs:
        c.validate()
        assert c.precision == "bf16" and c.tracks_updates
    assert len({c.label for c in cfgs}) == 3  # each run has its own line on the plots
    assert {c.replace(weights="fp32") for c in cfgs} == {cfgs[0]}


def test_tf32_on_an_ampere_gpu_is_allowed_set_for_the_run_and_restored(monkeypatch) -> None:
    from mpdemo.engine import precision as P

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "Tesla T4")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (7, 5))
    with pytest.raises(ConfigError, match=r"Tesla T4 \(compute capability 7.5\)"):
        P.check_precision_on(torch.device("cuda"), "tf32")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (8, 0))
    P.check_precision_on(torch.device("cuda"), "tf32")  # an A100: allowed
    before = (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32)
    assert P.tf32_in_effect(torch.device("cuda")) is None  # torch's default: "highest"
    with P.matmul_precision("tf32"):
        assert torch.get_float32_matmul_precision() == "high"
        assert torch.backends.cuda.matmul.allow_tf32
        # The audit reads the setting at run time: an fp32 run here would run TF32 matmuls.
        assert P.tf32_in_effect(torch.device("cuda")) is not None
    assert (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32) == before
    assert P.tf32_in_effect(torch.device("cpu")) is None
    # The Trainer and Accelerate see no mixed precision for tf32: fp32 weights, no autocast.
    assert not P.autocast_supported(torch.device("cpu"), "tf32")
    assert P.dtype_name(torch.float32) == "fp32"


def test_underflow_lab_counts_tf32s_share_below_its_smallest_normal(magnitudes_of) -> None:
    from mpdemo.teach.formats import layout
    from mpdemo.teach.magnitudes import tf32_below_normal

    g = torch.tensor([2.0**-130, 2.0**-127, 2.0**-126, 1e-3, 0.0])
    m = magnitudes_of(g)
    assert tf32_below_normal(m) == 2 / 4  # of the non-zero values
    assert tf32_below_normal(m, k=4) == 0.0  # S = 16 lifts 2^-130 to 2^-126
    # The same edge as the emulated TF32 format's own.
    assert layout("tf32").min_normal == 2.0**-126
