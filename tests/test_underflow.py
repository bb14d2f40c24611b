"""Underflow lab: shares checked against a direct fp16 cast of the same gradients, and the CLI."""

from __future__ import annotations

import json
import math

import pytest
import torch

from mpdemo import RunConfig, prepare
from mpdemo.cli import main
from mpdemo.messages import ConfigError
from mpdemo.underflow import (
    HIST_HI,
    HIST_LO,
    collect,
    fp16_band,
    magnitudes_of,
    shares_at,
    underflow_report,
)

SCALES = (1.0, 2.0**8, 2.0**16)


@pytest.fixture(scope="module")
def cfg() -> RunConfig:
    return RunConfig(train_slice="train[:64]", steps=1, batch_size=16, device="cpu")


@pytest.fixture(scope="module")
def lab(cfg: RunConfig):
    return collect(cfg, scales=(*SCALES, 1000.0))


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


def direct_shares(g: torch.Tensor, scale: float) -> dict[str, float]:
    """The definition, written out: cast g*S to fp16 and count among the non-zero originals."""
    nz = g != 0
    h = (g * scale).half()
    n = int(nz.sum())
    return {
        "underflow_share": int(((h == 0) & nz).sum()) / n,
        "subnormal_share": int(((h != 0) & (h.abs() < 2.0**-14)).sum()) / n,
        "overflow_share": int(torch.isinf(h).sum()) / n,
    }


@pytest.mark.parametrize("kind", ["activation", "weight"])
@pytest.mark.parametrize("scale", SCALES)
def test_shares_match_a_direct_count(lab, direct, kind: str, scale: float) -> None:
    want = direct_shares(direct[kind], scale)
    counted = lab.cast_shares[kind][scale]  # cast during the pass
    binned = shares_at(lab.magnitudes[kind], scale)  # what the UI slider uses
    for key, value in want.items():
        assert counted[key] == pytest.approx(value, abs=1e-12), key
        assert binned[key] == pytest.approx(value, abs=1e-12), key
    assert lab.magnitudes[kind].nonzero == int((direct[kind] != 0).sum())


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


def test_report_shape_and_histogram(lab) -> None:
    r = lab.report(2.0**16)
    assert r["fp16_band"] == {
        "min_subnormal_log2": -24.0,
        "min_normal_log2": -14.0,
        "max_log2": pytest.approx(math.log2(65504)),
    }
    assert fp16_band() == r["fp16_band"]
    assert r["model"] == "tiny-bert" and r["params"] > 0 and math.isfinite(r["loss"])
    for kind in ("activation", "weight"):
        k = r[kind]
        assert k["hist"]["edges_log2"] == list(range(HIST_LO, HIST_HI + 1))
        assert len(k["hist"]["counts"]) == HIST_HI - HIST_LO
        assert sum(k["hist"]["counts"]) == k["nonzero"] > 0
        assert k["scale"] == 2.0**16
        assert {"underflow_share", "subnormal_share", "overflow_share"} <= set(k)
    json.dumps(r)  # the CLI writes it as is


def test_binned_shares_are_exact_at_fp16_rounding_edges() -> None:
    """Ties and near-ties at every fp16 boundary, fp32 subnormals, and a wide random spread."""
    f32 = torch.float32
    edges = torch.tensor([2.0**-25, 2.0**-14 - 2.0**-25, 65520.0, 65504.0, 2.0**-24], dtype=f32)
    near = torch.cat([edges, edges.nextafter(torch.zeros_like(edges)), edges.nextafter(edges * 2)])
    gen = torch.Generator().manual_seed(0)
    spread = torch.exp2(torch.empty(20_000).uniform_(-140, 40, generator=gen)).to(f32)
    values = torch.cat([near, -near, spread, torch.tensor([0.0, 1e-45, 2.0**-130, 3.0])])
    m = magnitudes_of(values)
    assert m.nonzero == values.numel() - 1
    for k in range(-30, 41):
        got = shares_at(m, 2.0**k)
        want = shares_at(values, 2.0**k)
        for key in ("underflow_share", "subnormal_share", "overflow_share"):
            assert got[key] == want[key], (k, key)


def test_the_lab_waits_for_no_running_training(cfg: RunConfig) -> None:
    from mpdemo.runner import RUN_LOCK

    with RUN_LOCK, pytest.raises(ConfigError):
        collect(cfg, wait=False)


def test_underflow_report_counts_at_the_scale_given(cfg: RunConfig, lab) -> None:
    r = underflow_report(cfg, scale=2.0**8)
    assert r["weight"]["underflow_share"] == lab.shares("weight", 2.0**8)["underflow_share"]


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
