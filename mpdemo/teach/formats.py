"""Every float format's facts in one record (Layout, torch-free, checked against torch.finfo) and
the Number formats view's engine: how each stores a number. torch is imported inside functions.
"""

from __future__ import annotations

import decimal
import html
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Layout:
    """A format: its bit fields, largest value, torch dtype, and whether it has inf."""

    name: str
    exponent_bits: int
    mantissa_bits: int
    max: float
    dtype: str | None  # torch attribute ("float8_e4m3fn"); None: torch has none (TF32)
    # E4M3 "fn" has no inf: its all-ones exponent holds normal numbers (only S.1111.111 is NaN),
    # and its even max makes the tie above it round back to max, not past it.
    ieee_inf: bool = True

    @property
    def bits(self) -> int:
        """Total width: sign, exponent and mantissa."""
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def bias(self) -> int:
        """The exponent field's bias."""
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def min_exp(self) -> int:
        """The smallest normal number is 2^min_exp."""
        return 1 - self.bias

    @property
    def eps(self) -> float:
        """The gap between 1 and the next number."""
        return 2.0**-self.mantissa_bits

    @property
    def min_normal(self) -> float:
        """Smallest normal number."""
        return 2.0**self.min_exp

    @property
    def min_subnormal(self) -> float:
        """Smallest subnormal number: one quantum of the lowest binade."""
        return 2.0 ** (self.min_exp - self.mantissa_bits)

    @property
    def overflow_threshold(self) -> float:
        """Half an ulp above max: beyond it (at it, for an odd max) rounding leaves the range."""
        top = math.frexp(self.max)[1] - 1
        return self.max + 2.0 ** (top - self.mantissa_bits) / 2

    def facts(self) -> dict[str, object]:
        """Its bits, range and precision, JSON-ready, with log2 of each edge."""
        return {
            "format": self.name,
            "dtype": f"torch.{self.dtype}",
            "bits": self.bits,
            "exponent_bits": self.exponent_bits,
            "mantissa_bits": self.mantissa_bits,
            "max": self.max,
            "min_normal": self.min_normal,
            "min_subnormal": self.min_subnormal,
            "eps": self.eps,
            "overflow_threshold": self.overflow_threshold,
            "max_log2": math.log2(self.max),
            "min_normal_log2": math.log2(self.min_normal),
            "min_subnormal_log2": math.log2(self.min_subnormal),
        }


# TF32 (Ampere's tensor-core input format): fp32's 8 exponent bits, fp16's 10 mantissa bits.
LAYOUTS: dict[str, Layout] = {
    lay.name: lay
    for lay in [
        Layout("fp32", 8, 23, (2 - 2.0**-23) * 2.0**127, "float32"),
        Layout("tf32", 8, 10, (2 - 2.0**-10) * 2.0**127, None),
        Layout("fp16", 5, 10, 65504.0, "float16"),
        Layout("bf16", 8, 7, (2 - 2.0**-7) * 2.0**127, "bfloat16"),
        Layout("e4m3", 4, 3, 448.0, "float8_e4m3fn", ieee_inf=False),
        Layout("e5m2", 5, 2, 57344.0, "float8_e5m2"),
    ]
}
# The formats torch stores (the Number formats tab's), and what a value is cast *to* from fp32.
FORMATS = tuple(name for name, lay in LAYOUTS.items() if lay.dtype)
LOW_PRECISION = FORMATS[1:]
FP8_FORMATS = tuple(f for f in LOW_PRECISION if LAYOUTS[f].bits == 8)


def layout(fmt: str) -> Layout:
    """The layout of a format name; ValueError for an unknown one."""
    if fmt not in LAYOUTS:  # not echoed: a page's input may reach here
        raise ValueError(f"unknown format; expected one of {', '.join(LAYOUTS)}")
    return LAYOUTS[fmt]


# Inputs come from a public web page: bound the work a single request can cause.
MAX_INPUT_LEN = 64

# Inline colours (fg and bg) so the bits read without the app's stylesheet and in dark mode.
_FIELD_STYLE = {
    "sign": ("mp-sign", "background:#fde2e1;color:#b42318"),
    "exponent": ("mp-exp", "background:#dcfce7;color:#166534"),
    "mantissa": ("mp-man", "background:#dbeafe;color:#1e40af"),
}

# Exact arithmetic for errors: wide exponent range, no traps, so odd inputs never raise.
_DEC_CTX = decimal.Context(prec=50, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[], clamp=0)

_PARSE_HELP = "use decimal or scientific notation such as 0.1, -2.5e-8, 65504, inf or nan"


def torch_dtype(fmt: str) -> torch.dtype:
    """A format's torch dtype; ValueError for an unknown one or TF32, which torch does not store."""
    import torch

    if fmt not in FORMATS:
        raise ValueError(f"unknown format; expected one of {', '.join(FORMATS)}")
    return getattr(torch, LAYOUTS[fmt].dtype)


def parse(value: float | int | str) -> tuple[float, decimal.Decimal | None]:
    """Parse user input into (Python float, exact Decimal or None when not finite)."""
    # bool is an int subclass: True -> 1.0 would be a confusing silent conversion.
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"not a number: {_PARSE_HELP}")
    if isinstance(value, (int, float)):
        try:
            x = float(value)
        except OverflowError:
            # Huge Python ints: keep the exact value so overflow is still reported.
            return math.copysign(math.inf, value), decimal.Decimal(value)
        return x, decimal.Decimal(x) if math.isfinite(x) else None
    if len(value) > MAX_INPUT_LEN:
        raise ValueError(f"input too long (max {MAX_INPUT_LEN} characters)")
    text = value.strip()
    # The message deliberately does not echo the input: it may be shown in HTML.
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"not a number: {_PARSE_HELP}") from None
    if not math.isfinite(x) and text.lstrip("+-").lower() in ("inf", "infinity", "nan"):
        return x, None
    # float() rounds "1e-400" to 0: the exact Decimal reports the typed number's under/overflow.
    try:
        exact = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise ValueError("exponent out of range") from None
    if not exact.is_finite():
        raise ValueError(f"not a number: {_PARSE_HELP}")
    return x, exact


def _category(exponent: str, mantissa: str, lay: Layout) -> str:
    """IEEE class from the exponent and mantissa fields (E4M3fn: only all-ones is NaN)."""
    if set(exponent) == {"1"}:
        if not lay.ieee_inf:
            return "nan" if set(mantissa) == {"1"} else "normal"
        return "nan" if "1" in mantissa else "inf"
    if set(exponent) == {"0"}:
        return "subnormal" if "1" in mantissa else "zero"
    return "normal"


def format_table() -> list[dict[str, object]]:
    """One row per format with its dtype, bits, range and precision."""
    return [LAYOUTS[fmt].facts() for fmt in FORMATS]


def cast_overflow(fmt: str) -> str:
    """What torch's cast does here to a finite value past the range, measured: "inf", "nan" or
    "saturate" (torch 2.13 saturates float8_e4m3fn; older torch gives NaN)."""
    import torch

    if fmt == "fp32":
        return "inf"
    big = torch.tensor(4 * layout(fmt).overflow_threshold, dtype=torch.float32)
    out = float(big.to(torch_dtype(fmt)).float().item())
    if math.isnan(out):
        return "nan"
    return "inf" if math.isinf(out) else "saturate"


def encode(value: float | str, fmt: str) -> dict:
    """Encode a number (float or numeric text) in fmt and describe the stored bits."""
    import torch

    dtype, lay = torch_dtype(fmt), LAYOUTS[fmt]
    x, exact = parse(value)
    # Through fp32, as a mixed-precision cast from the fp32 master copy does (nearest even).
    t = torch.tensor(x, dtype=torch.float32).to(dtype)
    stored = float(t.item())
    int_dtype = {32: torch.int32, 16: torch.int16, 8: torch.uint8}[lay.bits]  # same width
    raw = int(t.view(int_dtype).item()) & ((1 << lay.bits) - 1)
    bits = format(raw, f"0{lay.bits}b")
    e_end = 1 + lay.exponent_bits
    sign, exponent, mantissa = bits[0], bits[1:e_end], bits[e_end:]
    category = _category(exponent, mantissa, lay)
    exponent_value = int(exponent, 2) - lay.bias if category == "normal" else None

    abs_error = rel_error = None
    beyond = False
    if exact is not None:
        with decimal.localcontext(_DEC_CTX):
            err = abs(decimal.Decimal(stored) - exact)  # exact (or +-Infinity on overflow)
            abs_error = float(err)
            rel_error = float(err / abs(exact)) if exact != 0 else None
            # Beyond the range: the cast gave inf, NaN or +-max (a saturating E4M3 cast);
            # `exact` keeps text such as "1e400" whose float is already inf.
            limit = decimal.Decimal(lay.overflow_threshold)
            over = abs(exact) > limit or (abs(exact) == limit and lay.ieee_inf)
            beyond = fmt != "fp32" and over
    saturated = (
        fmt != "fp32" and not math.isnan(x) and math.isfinite(stored) and (beyond or math.isinf(x))
    )
    return {
        "format": fmt,
        "input": x,
        "stored": stored,
        "abs_error": abs_error,
        "rel_error": rel_error,
        "bits": bits,
        "sign": sign,
        "exponent": exponent,
        "mantissa": mantissa,
        "exponent_value": exponent_value,
        "category": category,
        "overflow": exact is not None and (math.isinf(stored) or math.isnan(stored) or beyond),
        "saturated": saturated,
        "underflow": exact is not None and exact != 0 and stored == 0.0,
    }


def encode_all(value: float | str) -> list[dict]:
    """Encode a number in every format, in FORMATS order."""
    parse(value)  # bad text fails before any torch work
    return [encode(value, fmt) for fmt in FORMATS]


def scale_survival(value: float, scale: float) -> dict:
    """Whether value*scale survives storage in each low-precision format, and how it unscales."""
    import torch

    x, _ = parse(value)
    s, _ = parse(scale)
    # The scale must itself be an fp32 number (GradScaler keeps it as an fp32 tensor).
    if not (0 < s <= LAYOUTS["fp32"].max):
        raise ValueError("scale must be > 0 and at most the fp32 maximum")
    per_format = {}
    for fmt in LOW_PRECISION:
        enc = encode(x * s, fmt)
        # Unscale in fp32, as GradScaler.unscale_ does: only the division can round.
        f32 = torch.tensor(enc["stored"], dtype=torch.float32)
        recovered = float((f32 / torch.tensor(s, dtype=torch.float32)).item())
        keep = ("stored", "category", "overflow", "saturated", "underflow")
        per_format[fmt] = {
            **{k: enc[k] for k in keep},
            "recovered": recovered,
            "rel_error": abs(recovered - x) / abs(x) if x != 0 and math.isfinite(x) else None,
        }
    return {"value": x, "scale": s, "scaled": x * s, "formats": per_format}


def render_bits_html(enc: dict) -> str:
    """Render an encoding's bits as HTML spans coloured and grouped by field."""
    groups = []
    for field in ("sign", "exponent", "mantissa"):
        cls, style = _FIELD_STYLE[field]
        spans = "".join(
            f'<span class="mp-bit {cls}" style="{style};padding:0 1px">{html.escape(ch)}</span>'
            for ch in str(enc[field])
        )
        groups.append(
            f'<span class="mp-field" data-field="{field}" '
            f'style="margin-right:0.6em;white-space:nowrap">{spans}</span>'
        )
    fmt = html.escape(str(enc.get("format", "")), quote=True)
    return (
        f'<div class="mp-bits" data-format="{fmt}" '
        'style="font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;'
        'font-size:1.15em;line-height:1.8">' + "".join(groups) + "</div>"
    )
