"""Tests for mpdemo.teach.formats: encodings checked against torch and struct, never hand-typed."""

from __future__ import annotations

import math
import re
import struct
import subprocess
import sys

import pytest
import torch

from mpdemo.teach import formats as F

DTYPES = {
    "fp32": torch.float32,
    "fp16": torch.float16,
    "bf16": torch.bfloat16,
    "e4m3": torch.float8_e4m3fn,
    "e5m2": torch.float8_e5m2,
}
FP8 = ("e4m3", "e5m2")


def torch_stored(x: float, fmt: str) -> float:
    """Reference value: what torch stores for x in fmt (fp32 tensor, then cast)."""
    return torch.tensor(x).to(DTYPES[fmt]).item()


def torch_value(raw: int, fmt: str) -> float:
    """Reference value: what torch reads from the bit pattern `raw` in fmt."""
    width = torch.finfo(DTYPES[fmt]).bits
    ints = {32: torch.int32, 16: torch.int16, 8: torch.uint8}[width]
    signed = raw - (1 << width) if width > 8 and raw >= 1 << (width - 1) else raw
    return torch.tensor(signed, dtype=ints).view(DTYPES[fmt]).item()


def same_float(a: float, b: float) -> bool:
    """Equality that treats nan == nan and tells -0.0 from 0.0."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def min_sub(fmt: str) -> float:
    fi = torch.finfo(DTYPES[fmt])
    return fi.tiny * fi.eps


def edge_cases(fmt: str) -> list[float]:
    return [
        0.0,
        -0.0,
        1.0,
        -2.5,
        0.1,
        min_sub(fmt),
        -min_sub(fmt),
        min_sub(fmt) * 0.4,
        torch.finfo(DTYPES[fmt]).tiny,
        65504.0,
        65520.0,
        1e-8,
        math.inf,
        -math.inf,
        math.nan,
    ]


def expected_category(v: float, fmt: str) -> str:
    # No IEEE bit rule here: the class follows from the value torch stores.
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf"
    if v == 0:
        return "zero"
    return "subnormal" if abs(v) < torch.finfo(DTYPES[fmt]).tiny else "normal"


# --- layout and table -------------------------------------------------------


def test_import_does_not_import_torch():
    code = "import sys, mpdemo.teach.formats; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.parametrize("fmt", F.FORMATS)
def test_layout_matches_finfo(fmt):
    fi = torch.finfo(DTYPES[fmt])
    lay = F.LAYOUTS[fmt]
    assert (lay.bits, lay.eps, lay.min_normal, lay.max) == (fi.bits, fi.eps, fi.tiny, fi.max)
    assert lay.min_subnormal == fi.tiny * fi.eps
    assert getattr(torch, lay.dtype) is DTYPES[fmt]


def test_format_table_matches_finfo():
    rows = F.format_table()
    assert [r["format"] for r in rows] == list(F.FORMATS)
    for r in rows:
        dtype = DTYPES[r["format"]]
        fi = torch.finfo(dtype)
        assert r["bits"] == fi.bits == 1 + r["exponent_bits"] + r["mantissa_bits"]
        assert r["max"] == fi.max
        assert r["min_normal"] == fi.tiny == fi.smallest_normal
        assert r["eps"] == fi.eps
        sub = r["min_subnormal"]
        assert sub == fi.tiny * fi.eps
        # It really is the smallest: representable, and half of it flushes to zero.
        assert torch.tensor(sub, dtype=dtype).item() != 0
        assert torch.tensor(sub / 2, dtype=dtype).item() == 0
        assert torch.tensor(r["max"], dtype=dtype).item() == r["max"]


# --- encode / decode ----------------------------------------------------------


@pytest.mark.parametrize("fmt", F.FORMATS)
def test_encode_edge_cases(fmt):
    width = torch.finfo(DTYPES[fmt]).bits
    for x in edge_cases(fmt):
        enc = F.encode(x, fmt)
        ref = torch_stored(x, fmt)
        assert same_float(enc["stored"], ref), (fmt, x, enc["stored"], ref)
        assert len(enc["bits"]) == width and set(enc["bits"]) <= {"0", "1"}
        assert enc["sign"] + enc["exponent"] + enc["mantissa"] == enc["bits"]
        assert enc["category"] == expected_category(ref, fmt), (fmt, x)
        # Round trip, bit-exact (struct on doubles keeps the sign of zero and nan bits).
        back = torch_value(int(enc["bits"], 2), fmt)
        assert struct.pack(">d", back) == struct.pack(">d", enc["stored"]), (fmt, x)
        if fmt == "fp32":
            assert struct.pack(">f", back) == struct.pack(">f", enc["stored"])
            assert enc["bits"] == format(int.from_bytes(struct.pack(">f", x)), "032b")
        beyond = math.isfinite(x) and abs(x) > F.layout(fmt).overflow_threshold and fmt != "fp32"
        assert enc["overflow"] == (math.isfinite(x) and (math.isinf(ref) or beyond)), (fmt, x)
        assert enc["underflow"] == (x != 0 and not math.isnan(x) and ref == 0)
        if enc["category"] == "normal":
            assert enc["exponent_value"] == math.frexp(ref)[1] - 1
        else:
            assert enc["exponent_value"] is None
        if x == 0 or not math.isfinite(x):
            assert enc["rel_error"] is None
        elif math.isfinite(ref) and not math.isnan(ref):
            assert enc["abs_error"] == pytest.approx(abs(ref - x), rel=1e-12, abs=0)
            assert enc["rel_error"] == pytest.approx(abs(ref - x) / abs(x), rel=1e-12)


@pytest.mark.parametrize("fmt", F.FORMATS)
def test_named_edges(fmt):
    sub = F.encode(min_sub(fmt), fmt)
    assert sub["category"] == "subnormal" and sub["bits"].endswith("1")
    assert sub["bits"][:-1].count("1") == 0

    tiny = F.encode(min_sub(fmt) * 0.4, fmt)
    assert tiny["stored"] == 0 and tiny["underflow"] and tiny["category"] == "zero"

    neg0 = F.encode("-0", fmt)
    assert neg0["sign"] == "1" and neg0["category"] == "zero" and not neg0["underflow"]
    assert math.copysign(1.0, neg0["stored"]) == -1.0

    inf = F.encode("inf", fmt)
    if fmt == "e4m3":  # no inf: the class is whatever torch's cast made of it
        assert inf["category"] == expected_category(torch_stored(math.inf, fmt), fmt)
        assert inf["saturated"] == (F.cast_overflow(fmt) == "saturate")
    else:
        assert inf["category"] == "inf" and not inf["saturated"]
    assert F.encode("-inf", fmt)["sign"] == "1"
    nan = F.encode("nan", fmt)
    assert nan["category"] == "nan" and nan["rel_error"] is None and not nan["overflow"]


def test_fp16_max_and_overflow():
    top = F.encode(65504, "fp16")
    assert top["stored"] == 65504 and top["category"] == "normal" and not top["overflow"]
    assert top["exponent_value"] == 15 and top["rel_error"] == 0

    over = F.encode("65520", "fp16")
    assert math.isinf(over["stored"]) and over["overflow"] and over["category"] == "inf"
    assert over["rel_error"] == math.inf

    b = F.encode(65520, "bf16")
    assert math.isfinite(b["stored"]) and not b["overflow"] and b["category"] == "normal"
    assert b["stored"] == torch_stored(65520.0, "bf16")


def test_1e8_in_fp16_follows_torch():
    enc = F.encode("1e-8", "fp16")
    ref = torch_stored(1e-8, "fp16")
    assert enc["stored"] == ref
    assert enc["category"] in ("zero", "subnormal")
    assert enc["underflow"] == (ref == 0)
    assert F.encode("1e-8", "fp32")["category"] == "normal"
    assert F.encode("1e-8", "bf16")["category"] == "normal"


def test_text_beyond_double_range_reports_under_and_overflow():
    big = F.encode("1e400", "fp32")
    assert big["overflow"] and big["category"] == "inf"
    small = F.encode("1e-400", "bf16")
    assert small["underflow"] and small["rel_error"] == 1.0


@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_encode_gives_back_torchs_bits_sampled(fmt):
    # Every 97th bit pattern plus the extremes: torch's value, encoded, same bits.
    patterns = list(range(0, 1 << 16, 97)) + [0x0001, 0x8000, 0x7FFF, 0xFFFF]
    for raw in patterns:
        bits = format(raw, "016b")
        v = torch_value(raw, fmt)
        if math.isnan(v):
            continue  # nan payloads need not survive a float round trip
        assert F.encode(v, fmt)["bits"] == bits, (fmt, bits)


def test_encode_all():
    encs = F.encode_all("0.1")
    assert [e["format"] for e in encs] == list(F.FORMATS)
    assert [len(e["bits"]) for e in encs] == [torch.finfo(DTYPES[f]).bits for f in F.FORMATS]
    assert [len(e["bits"]) for e in encs] == [32, 16, 16, 8, 8]


@pytest.mark.parametrize(
    "bad", ["", "   ", "abc", "1e", "0x10", "1,5", "<script>", "nan123", "1" * 65, None, True]
)
def test_bad_input_raises_value_error(bad):
    with pytest.raises(ValueError):
        F.encode(bad, "fp16")


def test_error_message_does_not_echo_input():
    with pytest.raises(ValueError) as exc:
        F.encode("<img src=x onerror=alert(1)>", "fp16")
    assert "<" not in str(exc.value)


def test_accepted_text_forms():
    assert F.encode(" 65504 ", "fp16")["stored"] == 65504
    assert F.encode("1_000", "fp32")["stored"] == 1000
    assert F.encode("+Infinity", "fp32")["category"] == "inf"
    assert F.encode("0." + "1" * 62, "fp32")["category"] == "normal"  # exactly at the cap
    assert F.encode("1" * 64, "fp32")["overflow"]  # 1.1e63 > fp32 max


def test_bad_format():
    with pytest.raises(ValueError):
        F.encode(1.0, "fp8")  # which fp8? E4M3 and E5M2 are different formats
    with pytest.raises(ValueError):
        F.encode(1.0, "tf32")  # emulated (teach.rounding), not stored by torch


# --- loss scaling -------------------------------------------------------------


def test_scale_survival_underflow_then_rescued():
    raw = F.scale_survival(1e-8, 1)["formats"]
    assert raw["fp16"]["category"] in ("zero", "subnormal")
    assert raw["fp16"]["stored"] == torch_stored(1e-8, "fp16")

    scaled = F.scale_survival(1e-8, 2**16)
    assert scaled["scaled"] == 1e-8 * 2**16
    fp16 = scaled["formats"]["fp16"]
    assert fp16["category"] == "normal" and fp16["rel_error"] < 1e-3
    assert fp16["recovered"] == pytest.approx(1e-8, rel=1e-3)
    assert scaled["formats"]["bf16"]["category"] == "normal"


def test_scale_survival_overflow():
    fp16, bf16 = (F.scale_survival(1.0, 2**17)["formats"][f] for f in ("fp16", "bf16"))
    assert fp16["category"] == "inf" and math.isinf(fp16["stored"])
    assert math.isinf(fp16["recovered"])
    assert bf16["category"] == "normal" and bf16["stored"] == 2**17


def test_scale_survival_keys_and_bad_scale():
    assert set(F.scale_survival(0.5, 8)) == {"value", "scale", "scaled", "formats"}
    assert F.scale_survival(0.0, 8)["formats"]["fp16"]["rel_error"] is None
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError):
            F.scale_survival(1.0, bad)


# --- fp8: E4M3 and E5M2 -------------------------------------------------------


@pytest.mark.parametrize("fmt", FP8)
def test_fp8_every_bit_pattern_against_torch(fmt):
    """All 256 patterns: class = what torch's value is, and encode gives the pattern back."""
    raw = torch.arange(256, dtype=torch.int32).to(torch.uint8)
    values = raw.view(DTYPES[fmt]).float().tolist()
    tiny = torch.finfo(DTYPES[fmt]).tiny
    for pattern, v in enumerate(values):
        bits = format(pattern, "08b")
        enc = F.encode(v, fmt)
        assert enc["category"] == expected_category(v, fmt), (fmt, bits, v)
        if not math.isnan(v):
            assert enc["bits"] == bits, (fmt, bits, v)
            if enc["category"] == "normal":
                assert enc["exponent_value"] == math.frexp(v)[1] - 1
            assert (enc["category"] == "subnormal") == (v != 0 and abs(v) < tiny)
    nans = [v for v in values if math.isnan(v)]
    infs = [v for v in values if math.isinf(v)]
    if fmt == "e4m3":  # "fn": finite, one NaN pattern per sign (S.1111.111), no inf
        assert len(nans) == 2 and not infs
    else:  # IEEE-style: inf and a NaN family on the all-ones exponent
        assert len(nans) == 6 and len(infs) == 2


def test_fp8_named_values():
    # The examples, each checked against torch's own cast.
    assert F.encode("0.1", "e4m3")["stored"] == 0.1015625 == torch_stored(0.1, "e4m3")
    assert F.encode("0.1", "e5m2")["stored"] == torch_stored(0.1, "e5m2")
    assert F.encode("448", "e4m3")["stored"] == 448 == torch.finfo(torch.float8_e4m3fn).max
    assert F.encode("57344", "e5m2")["stored"] == torch.finfo(torch.float8_e5m2).max
    assert F.encode("0.1", "e4m3")["bits"] == "00011101"  # 2^-4 x 1.101


@pytest.mark.parametrize("fmt", FP8 + ("fp16", "bf16"))
def test_overflow_threshold_is_where_torch_stops_rounding_to_max(fmt):
    dtype = DTYPES[fmt]
    fmax = torch.finfo(dtype).max
    tie = F.layout(fmt).overflow_threshold
    t = torch.tensor(tie, dtype=torch.float32)
    below = t.nextafter(torch.tensor(0.0))
    above = t.nextafter(torch.tensor(math.inf))
    assert below.to(dtype).float().item() == fmax
    at = t.to(dtype).float().item()
    # Round to nearest even at the tie: E4M3's 448 (1.110) is even, the others' max is odd.
    assert (at == fmax) == (not F.layout(fmt).ieee_inf)
    past = above.to(dtype).float().item()
    assert past != fmax or F.cast_overflow(fmt) == "saturate"
    assert F.encode(above.item(), fmt)["overflow"]
    assert not F.encode(below.item(), fmt)["overflow"]


@pytest.mark.parametrize("fmt", FP8 + ("fp16", "bf16"))
def test_cast_overflow_reports_what_torch_really_does(fmt):
    """500 -> 448 'saturates' in E4M3 only if torch's cast does so here: measured, not assumed."""
    big = 2 * F.layout(fmt).overflow_threshold
    got = torch.tensor(big, dtype=torch.float32).to(DTYPES[fmt]).float().item()
    expected = "nan" if math.isnan(got) else "inf" if math.isinf(got) else "saturate"
    assert F.cast_overflow(fmt) == expected
    if expected == "saturate":
        assert got == torch.finfo(DTYPES[fmt]).max
    enc = F.encode(big, fmt)
    assert same_float(enc["stored"], got) and enc["overflow"]
    assert enc["saturated"] == (expected == "saturate")


def test_500_in_e4m3():
    enc = F.encode("500", "e4m3")
    ref = torch_stored(500.0, "e4m3")
    assert same_float(enc["stored"], ref) and enc["overflow"]
    # Inside the range nothing saturates: 460 rounds to 448 by plain rounding.
    near = F.encode("460", "e4m3")
    assert near["stored"] == 448 and not near["overflow"] and not near["saturated"]


@pytest.mark.parametrize("fmt", FP8)
def test_fp8_edges_follow_torch(fmt):
    fi = torch.finfo(DTYPES[fmt])
    sub = fi.tiny * fi.eps
    cases = [sub, sub / 2, sub * 0.75, fi.tiny, fi.tiny - sub, fi.max, -fi.max, 1e-3, 3.3, -0.0]
    for x in cases:
        enc = F.encode(x, fmt)
        assert same_float(enc["stored"], torch_stored(x, fmt)), (fmt, x)
    assert F.encode(sub / 2, fmt)["underflow"]  # the tie between 0 and the smallest goes to 0
    assert F.encode(sub * 0.75, fmt)["stored"] == sub


def test_scale_survival_covers_fp8():
    r = F.scale_survival(1e-8, 2**20)
    assert set(r["formats"]) == set(F.LOW_PRECISION)
    for fmt, got in r["formats"].items():
        assert got["stored"] == torch_stored(1e-8 * 2**20, fmt)
    # 1e-8 is far below E4M3's smallest subnormal (2^-9): unscaled it is lost.
    assert F.scale_survival(1e-8, 1)["formats"]["e4m3"]["underflow"]
    # Per-tensor scaling brings a large value into E4M3's range: 1000 / 4 = 250.
    down = F.scale_survival(1000.0, 0.25)["formats"]["e4m3"]
    assert down["category"] == "normal" and not down["overflow"]
    assert down["recovered"] == pytest.approx(1000.0, rel=2**-4)


# --- HTML -----------------------------------------------------------------------


def test_render_bits_html_fp16():
    out = F.render_bits_html(F.encode(-1.5, "fp16"))
    assert len(re.findall(r'class="mp-bit ', out)) == 16
    assert out.count("mp-sign") == 1
    assert out.count("mp-exp") == 5
    assert out.count("mp-man") == 10
    assert "monospace" in out and "style=" in out
    # No English words: only tag/attribute syntax, bits and CSS.
    text = re.sub(r"<[^>]*>", "", out)
    assert set(text) <= {"0", "1"}


def test_render_bits_html_escapes():
    enc = F.encode(1.0, "fp16")
    enc["format"] = '"><script>alert(1)</script>'
    enc["mantissa"] = "<b>"
    out = F.render_bits_html(enc)
    assert "<script>" not in out and "<b>" not in out
    assert "&lt;" in out


def test_each_precision_record_names_its_format_facts_and_its_refusal() -> None:
    """A record's format is one the Number formats tab (or, for TF32, the rounding) knows, its
    watched format is one gradwatch draws, and a precision that needs a GPU says why in a key."""
    from mpdemo.engine.gradwatch import WATCH_FORMATS
    from mpdemo.messages import EN
    from mpdemo.registry import PRECISIONS

    for p in PRECISIONS.values():
        assert p.format in F.LAYOUTS and p.watch_format in WATCH_FORMATS, p.name
        if F.LAYOUTS[p.format].dtype:  # torch stores it: the record's dtype is the format's
            assert p.dtype == F.LAYOUTS[p.format].dtype, p.name
        if p.needs_compute_capability is not None and not p.float8:  # fp8's: engine/fp8.py
            assert p.refusal in EN, p.name
    assert F.LAYOUTS["tf32"].mantissa_bits == 10 and PRECISIONS["tf32"].matmul_flags
