"""fp32 accumulation: a 16-bit running sum stalls; an fp32 one of the same values does not."""

from __future__ import annotations

import pytest
import torch

from mpdemo.teach import accumulate as A


def test_cs336_sum_of_001_a_thousand_times() -> None:
    res = {(r.accumulator, r.values_in): r for r in A.compare_sums("0.01", 1000)}
    fp32 = res[("fp32", "fp32")]
    assert fp32.exact == 10.0 and abs(fp32.final - 10.0) < 1e-3 and fp32.stalled_at is None
    fp16 = res[("fp16", "fp16")]
    # fp16 near 8: an ulp is 2^-7 = 0.0078, so adding 0.01 rounds to one ulp; the sum lands far
    # from 10 (CS336 prints 9.953). bf16's ulp reaches 0.02 at 2 (2^-6): 0.01 is a tie to even.
    assert abs(fp16.final - 10.0) > 0.01
    bf16 = res[("bf16", "bf16")]
    assert bf16.stalled_at is not None and bf16.final < 5 and bf16.stalled_sum == bf16.final
    # The same fp16 values summed in fp32 lose only the error of storing 0.01 in fp16.
    mixed = res[("fp32", "fp16")]
    assert mixed.addend == float(torch.tensor(0.01).half())
    assert abs(mixed.final - 1000 * mixed.addend) < 1e-3
    assert mixed.abs_error < fp16.abs_error and mixed.abs_error < bf16.abs_error
    # The sampled running sum starts at 0 and ends at the final value.
    assert fp16.steps[0] == 0 and fp16.steps[-1] == 1000 and fp16.sums[-1] == fp16.final


def test_running_sum_matches_a_plain_loop_in_that_dtype() -> None:
    r = A.running_sum(0.3, 300, "bf16", "bf16")
    t = torch.zeros((), dtype=torch.bfloat16)
    x = torch.tensor(0.3).bfloat16()
    for _ in range(300):
        t = t + x
    assert r.final == float(t)


def test_bad_n_is_refused() -> None:
    with pytest.raises(ValueError):
        A.running_sum(0.01, 0, "fp16", "fp16")
    with pytest.raises(ValueError):
        A.running_sum("nan", 10, "fp16", "fp16")


def test_micro_batch_gradients_accumulated_in_16_bits_lose_more_than_in_fp32() -> None:
    g = torch.Generator().manual_seed(0)
    grads = [{"w": torch.randn(4096, generator=g) * 1e-3 + 0.01} for _ in range(16)]
    rows = {r["buffer"]: r for r in A.micro_batch_accumulation(grads)}
    assert rows["fp32"]["rel_error"] < 1e-6
    assert rows["bf16"]["rel_error"] > rows["fp16"]["rel_error"] > 100 * rows["fp32"]["rel_error"]
    # Accumulating in 16 bits costs more than storing the exact sum once in 16 bits.
    for buf in ("fp16", "bf16"):
        assert rows[buf]["rel_error"] > 2 * rows[buf]["storage_rel_error"]
    assert rows["fp32"]["elements"] == 4096 and rows["fp32"]["micro_batches"] == 16


def test_the_tabs_handlers_render_in_each_language_and_refuse_bad_text() -> None:
    from mpdemo.ui.tabs import numerics as N

    table, frame = N.accumulate_view("es", "0,01".replace(",", "."), 500)
    assert "acumulador" in table and set(frame["bits"]) == {
        "fp16",
        "bf16",
        "fp32 ← fp16",
        "fp32",
    }
    bad, none = N.accumulate_view("pt", "abc", 10)
    assert "mp-error" in bad and none is None
    assert "mp-error" in N.accumulate_view("en", "0.01", 10**9)[0]
    html = N.tf32_html("en", "0.1")
    # 0.1 in TF32: fp32's 0x3DCCCCCD rounded to 10 mantissa bits = 0.0999755859375
    assert "0 01111011 1001100110" in html and ">0.0999755859<" in html
