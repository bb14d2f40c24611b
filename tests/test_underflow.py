"""Underflow lab: shares checked against a direct cast of the same gradients (fp16, bf16, E4M3,
E5M2), and the CLI."""

from __future__ import annotations

import json
import math

import pytest
import torch

from mpdemo import RunConfig, prepare
from mpdemo.cli.main import main
from mpdemo.messages import ConfigError
from mpdemo.teach.formats import LOW_PRECISION as FORMATS
from mpdemo.teach.magnitudes import (
    HIST_HI,
    HIST_LO,
    amax_scale,
    best_scale,
    binned_k_range,
    format_band,
    shares_at,
)
from mpdemo.teach.underflow import collect

SCALES = (1.0, 2.0**8, 2.0**16)
FP8_SCALES = (2.0**-4, 1.0, 2.0**8)  # fp8 per-tensor scales go below 1 too
DTYPES = {
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "e4m3": torch.float8_e4m3fn,
    "e5m2": torch.float8_e5m2,
}


@pytest.fixture(scope="module")
def cfg() -> RunConfig:
    return RunConfig(train_slice="train[:64]", steps=1, batch_size=16, device="cpu")


@pytest.fixture(scope="module")
def lab(cfg: RunConfig):
    return collect(cfg, scales=(*SCALES, *FP8_SCALES, 1000.0), fmts=FORMATS)


@pytest.fixture(scope="module")
def direct(cfg: RunConfig) -> dict[str, torch.Tensor]:
    """The same pass done by hand: every activation and weight gradient, kept whole."""
    from torch import nn
    from transformers.pytorch_utils import Conv1D

    prep = prepare(cfg)
    acts: list[torch.Tensor] = []

    def hook(_m, _i, out):
        out.register_hook(lambda g: acts.append(g.detach().reshape(-1).clone()))

    for mod in prep.model.modules():
        if isinstance(mod, (nn.Linear, Conv1D)):
            mod.register_forward_hook(hook)
    batch = next(iter(prep.train_dataloader))
    prep.model(**batch).loss.backward()
    weights = [p.grad.reshape(-1) for p in prep.model.parameters() if p.grad is not None]
    return {"activation": torch.cat(acts), "weight": torch.cat(weights)}


def direct_shares(g: torch.Tensor, scale: float, fmt: str = "fp16") -> dict[str, float]:
    """The definition, written out: cast g*S to fmt and count among the non-zero originals."""
    fi = torch.finfo(DTYPES[fmt])
    nz = (g != 0) & g.isfinite()
    v = g * scale
    h = v.to(DTYPES[fmt]).float()
    n = int(nz.sum())
    if fmt == "e4m3":
        # No inf in E4M3: past the tie above 448 (448 + 16 = 464, where rounding still gives
        # 448) torch either saturates to 448 or gives NaN. Either way the value is lost.
        lost = nz & (v.abs() > fi.max + 2.0**8 * fi.eps / 2)
        assert bool(((h.abs() == fi.max) | h.isnan())[lost].all())
        over = int(lost.sum())
    else:
        over = int((torch.isinf(h) & nz).sum())
    return {
        "underflow_share": int(((h == 0) & nz).sum()) / n,
        "subnormal_share": int(((h != 0) & (h.abs() < fi.smallest_normal) & nz).sum()) / n,
        "overflow_share": over / n,
    }


@pytest.mark.parametrize("kind", ["activation", "weight"])
@pytest.mark.parametrize("scale", SCALES)
def test_shares_match_a_direct_count(lab, direct, kind: str, scale: float) -> None:
    want = direct_shares(direct[kind], scale)
    counted = lab.cast_shares[kind]["fp16"][scale]  # cast during the pass
    binned = shares_at(lab.magnitudes[kind], scale)  # what the UI slider uses
    for key, value in want.items():
        assert counted[key] == pytest.approx(value, abs=1e-12), key
        assert binned[key] == pytest.approx(value, abs=1e-12), key
    assert lab.magnitudes[kind].nonzero == int((direct[kind] != 0).sum())


@pytest.mark.parametrize("fmt", ["bf16", "e4m3", "e5m2"])
@pytest.mark.parametrize("kind", ["activation", "weight"])
def test_every_format_matches_a_direct_count(lab, direct, kind: str, fmt: str) -> None:
    for scale in (*SCALES, *FP8_SCALES):
        want = direct_shares(direct[kind], scale, fmt)
        counted = lab.cast_shares[kind][fmt][scale]
        for key, value in want.items():
            assert counted[key] == pytest.approx(value, abs=1e-12), (scale, key)
        k = int(math.log2(scale))
        if k in binned_k_range(fmt):
            binned = shares_at(lab.magnitudes[kind], scale, fmt)
            for key, value in want.items():
                assert binned[key] == pytest.approx(value, abs=1e-12), (scale, key)


def test_a_non_power_of_two_scale_is_counted_by_casting(lab, direct) -> None:
    for kind in ("activation", "weight"):
        got = lab.shares(kind, 1000.0)
        assert got["underflow_share"] == pytest.approx(
            direct_shares(direct[kind], 1000.0)["underflow_share"], abs=1e-12
        )
    with pytest.raises(ValueError):
        shares_at(lab.magnitudes["weight"], 1000.0)


def test_scaling_moves_gradients_out_of_underflow_and_into_overflow(lab) -> None:
    for kind in ("activation", "weight"):
        m = lab.magnitudes[kind]
        under = [shares_at(m, 2.0**k)["underflow_share"] for k in range(0, 25)]
        assert under[0] > 0, "tiny-bert has gradients below fp16's range at S = 1"
        assert all(a >= b for a, b in zip(under, under[1:], strict=False))
        assert under[16] < under[0]
        assert shares_at(m, 1.0)["overflow_share"] == 0
        assert shares_at(m, 2.0**40)["overflow_share"] > 0
    # The teaching point: unscaled, a large share of activation gradients is lost.
    assert lab.shares("activation", 1.0)["underflow_share"] > 0.1


def test_e4m3_loses_what_fp16_keeps_and_scaling_brings_it_back(lab) -> None:
    """E4M3's range is 2^-9 .. 448: unscaled, far more gradients vanish than in fp16."""
    for kind in ("activation", "weight"):
        m = lab.magnitudes[kind]
        e4m3, fp16 = shares_at(m, 1.0, "e4m3"), shares_at(m, 1.0, "fp16")
        assert e4m3["underflow_share"] > fp16["underflow_share"]
        best = best_scale(m, "e4m3")
        assert best["normal_share"] >= e4m3["normal_share"]
        assert best["normal_share"] == max(
            shares_at(m, 2.0**k, "e4m3")["normal_share"] for k in binned_k_range("e4m3")
        )
        # Per-tensor scaling puts amax at (or just under) 448: nothing overflows.
        rec = amax_scale(m, "e4m3")
        assert rec["overflow_share"] == 0 and rec["log2"] == math.floor(math.log2(448 / m.amax))


def test_report_shape_and_histogram(lab) -> None:
    r = lab.report(2.0**16)
    assert r["fp16_band"] == {
        "min_subnormal_log2": -24.0,
        "min_normal_log2": -14.0,
        "max_log2": pytest.approx(math.log2(65504)),
    }
    assert format_band("fp16") == r["fp16_band"]
    assert r["model"] == "tiny-bert" and r["params"] > 0 and math.isfinite(r["loss"])
    for kind in ("activation", "weight"):
        k = r[kind]
        assert k["hist"]["edges_log2"] == list(range(HIST_LO, HIST_HI + 1))
        assert len(k["hist"]["counts"]) == HIST_HI - HIST_LO
        assert sum(k["hist"]["counts"]) == k["nonzero"] > 0
        assert k["scale"] == 2.0**16
        assert {"underflow_share", "subnormal_share", "overflow_share"} <= set(k)
    json.dumps(r)  # the CLI writes it as is


def _edges(fmt: str) -> list[float]:
    """Each rounding tie of fmt and the two values of fp32 on either side of it."""
    fi = torch.finfo(DTYPES[fmt])
    sub = fi.tiny * fi.eps
    top = 2.0 ** math.floor(math.log2(fi.max))
    return [sub / 2, sub, fi.tiny - sub / 2, fi.tiny, fi.max, fi.max + top * fi.eps / 2]


@pytest.mark.parametrize("fmt", FORMATS)
def test_binned_shares_are_exact_at_rounding_edges(magnitudes_of, fmt: str) -> None:
    """Ties and near-ties at every boundary of fmt, fp32 subnormals, and a wide random spread."""
    f32 = torch.float32
    edges = torch.tensor(_edges(fmt), dtype=f32)
    near = torch.cat([edges, edges.nextafter(torch.zeros_like(edges)), edges.nextafter(edges * 2)])
    gen = torch.Generator().manual_seed(0)
    spread = torch.exp2(torch.empty(20_000).uniform_(-148, 126, generator=gen)).to(f32)
    tiny = torch.tensor([0.0, 1e-45, 2.0**-130, 3.0, 2.0**-140 * 1.5, 2.0**-134 * 1.0078125])
    values = torch.cat([near, -near, spread, tiny])
    m = magnitudes_of(values)
    assert m.nonzero == values.numel() - 1
    assert m.amax == float(values.abs().max())
    ks = binned_k_range(fmt)
    # A spread of scales (each one folds again): below 1, around each format's thresholds, large.
    for k in (-40, -24, -16, -9, -8, -1, 0, 1, 7, 8, 9, 15, 16, 17, 24, 40):
        if k not in ks:
            continue
        # Moved so that the edges themselves land on fmt's ties: 2^-k times each edge.
        shifted = torch.cat([values, (edges * 2.0**-k).to(f32)])
        ms = magnitudes_of(shifted)
        for vals, mags in ((values, m), (shifted, ms)):
            got = shares_at(mags, 2.0**k, fmt)
            want = direct_shares(vals, 2.0**k, fmt)
            for key in ("underflow_share", "subnormal_share", "overflow_share"):
                assert got[key] == want[key], (fmt, k, key)


def test_bf16_is_binned_only_for_scales_of_one_and_up(magnitudes_of) -> None:
    assert binned_k_range("bf16").start == 0 and binned_k_range("fp16").start < 0
    m = magnitudes_of(torch.tensor([1.0, 2.0**-140]))
    with pytest.raises(ValueError):
        shares_at(m, 0.5, "bf16")
    with pytest.raises(ValueError):
        shares_at(m, 1.0, "fp8")


def test_the_lab_waits_for_no_running_training(cfg: RunConfig) -> None:
    from mpdemo.runs.runner import RUN_LOCK

    with RUN_LOCK, pytest.raises(ConfigError):
        collect(cfg, wait=False)


@pytest.mark.parametrize("fmt", ["e4m3", "e5m2"])
def test_cli_underflow_fp8_json_carries_the_range(tmp_path, capsys, fmt: str) -> None:
    path = tmp_path / f"{fmt}.json"
    args = ["underflow", "--format", fmt, "--train-slice", "train[:64]", "--batch-size", "16"]
    assert main([*args, "--scale", "4", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert fmt.upper() in out
    r = json.loads(path.read_text())
    fi = torch.finfo(DTYPES[fmt])
    assert r["format"] == fmt and r["scale"] == 4
    assert r["max"] == fi.max and r["min_normal"] == fi.smallest_normal
    assert r["min_subnormal"] == fi.smallest_normal * fi.eps
    for kind in ("activation", "weight"):
        k = r[kind]
        assert 0 <= k["underflow_share"] <= 1 and k["best_scale"]["log2"] in range(-100, 101)
        assert set(k) >= {"subnormal_share", "overflow_share", "amax_scale"}


def test_cli_underflow_refuses_an_unknown_format(capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["underflow", "--format", "fp8"])
    assert exc.value.code == 2
    assert "e4m3" in capsys.readouterr().err


def test_cli_underflow_writes_json(tmp_path, capsys) -> None:
    path = tmp_path / "u.json"
    args = ["underflow", "--model", "tiny-bert", "--train-slice", "train[:64]"]
    rc = main([*args, "--batch-size", "16", "--scale", "65536", "--json", str(path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "activation gradients:" in out and "weight gradients:" in out
    r = json.loads(path.read_text())
    assert r["scale"] == 65536
    for kind in ("activation", "weight"):
        assert r[kind]["nonzero"] > 0
        assert 0 <= r[kind]["underflow_share"] <= 1
