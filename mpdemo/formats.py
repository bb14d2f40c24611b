"""Engine for the "Number formats" view: how fp32, fp16 and bf16 store a number.

Pure Python + torch; torch is imported inside functions so that importing this module
(and hence the app's cold start) stays cheap. No UI code lives here.
"""

from __future__ import annotations

import decimal
import html
import math
from typing import Any

FORMATS = ("fp32", "fp16", "bf16")

# IEEE-style layouts. These are structural facts used to slice bit strings; every
# *numeric* property shown to users comes from torch.finfo (see format_table), and the
# tests check this table against torch.finfo too.
LAYOUTS: dict[str, dict[str, int]] = {
    "fp32": {"sign": 1, "exponent": 8, "mantissa": 23, "bias": 127},
    "fp16": {"sign": 1, "exponent": 5, "mantissa": 10, "bias": 15},
    "bf16": {"sign": 1, "exponent": 8, "mantissa": 7, "bias": 127},
}

CATEGORIES = ("zero", "subnormal", "normal", "inf", "nan")

# Inputs come from a public web page: bound the work a single request can cause.
MAX_INPUT_LEN = 64

# Inline colours mirror the mp-sign / mp-exp / mp-man classes so the snippet reads
# correctly even without the app's stylesheet; explicit fg+bg keeps it legible in dark mode.
_FIELD_STYLE = {
    "sign": ("mp-sign", "background:#fde2e1;color:#b42318"),
    "exponent": ("mp-exp", "background:#dcfce7;color:#166534"),
    "mantissa": ("mp-man", "background:#dbeafe;color:#1e40af"),
}

# Exact arithmetic for errors: wide exponent range, no traps, so odd inputs never raise.
_DEC_CTX = decimal.Context(prec=50, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[], clamp=0)

_PARSE_HELP = "use decimal or scientific notation such as 0.1, -2.5e-8, 65504, inf or nan"


def _check_format(fmt: str) -> str:
    """Return fmt if it is a known format name, else raise ValueError."""
    if fmt not in LAYOUTS:
        raise ValueError(f"unknown format; expected one of {', '.join(FORMATS)}")
    return fmt


def _dtype(fmt: str) -> Any:
    """Map a format name to its torch dtype."""
    import torch

    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[
        _check_format(fmt)
    ]


def _int_dtype(fmt: str) -> Any:
    """Same-width signed integer dtype used to reinterpret the float's bits."""
    import torch

    return torch.int32 if _width(fmt) == 32 else torch.int16


def _width(fmt: str) -> int:
    """Total bit width of a format."""
    lay = LAYOUTS[_check_format(fmt)]
    return lay["sign"] + lay["exponent"] + lay["mantissa"]


def _parse(value: float | int | str) -> tuple[float, decimal.Decimal | None]:
    """Parse user input into (Python float, exact Decimal or None when not finite)."""
    if isinstance(value, bool):
        # bool is an int subclass; True -> 1.0 would be a confusing silent conversion.
        raise ValueError(f"not a number: {_PARSE_HELP}")
    if isinstance(value, (int, float)):
        try:
            x = float(value)
        except OverflowError:
            # Huge Python ints: keep the exact value so overflow is still reported.
            return math.copysign(math.inf, value), decimal.Decimal(value)
        return x, decimal.Decimal(x) if math.isfinite(x) else None
    if not isinstance(value, str):
        raise ValueError(f"not a number: {_PARSE_HELP}")
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
    # float() rounds "1e-400" to 0 and "1e400" to inf; the exact Decimal keeps the true
    # magnitude so under/overflow of the *typed* number is reported honestly.
    try:
        exact = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise ValueError("exponent out of range") from None
    if not exact.is_finite():
        raise ValueError(f"not a number: {_PARSE_HELP}")
    return x, exact


def _to_format(x: float, fmt: str) -> Any:
    """Round a Python float into fmt (round-to-nearest-even), returned as a 0-d tensor."""
    import torch

    # Go through fp32 as a mixed-precision cast does (fp32 master copy -> low precision);
    # for fp32 itself this is the double -> float conversion.
    t = torch.tensor(x, dtype=torch.float32)
    return t if fmt == "fp32" else t.to(_dtype(fmt))


def _bits_of(t: Any, fmt: str) -> str:
    """Bit string of a 0-d float tensor, most significant bit first."""
    width = _width(fmt)
    raw = int(t.view(_int_dtype(fmt)).item()) & ((1 << width) - 1)
    return format(raw, f"0{width}b")


def _split(bits: str, fmt: str) -> tuple[str, str, str]:
    """Split a bit string into (sign, exponent, mantissa) fields."""
    lay = LAYOUTS[fmt]
    e_end = lay["sign"] + lay["exponent"]
    return bits[: lay["sign"]], bits[lay["sign"] : e_end], bits[e_end:]


def _category(exponent: str, mantissa: str) -> str:
    """IEEE class from the exponent and mantissa fields."""
    if set(exponent) == {"1"}:
        return "nan" if "1" in mantissa else "inf"
    if set(exponent) == {"0"}:
        return "subnormal" if "1" in mantissa else "zero"
    return "normal"


def format_table() -> list[dict]:
    """One row per format with its range and precision, all taken from torch.finfo."""
    import torch

    rows = []
    for fmt in FORMATS:
        fi = torch.finfo(_dtype(fmt))
        # eps = 2**-mantissa_bits exactly, so frexp gives the mantissa width without logs.
        mantissa_bits = 1 - math.frexp(fi.eps)[1]
        rows.append(
            {
                "format": fmt,
                "bits": fi.bits,
                "exponent_bits": fi.bits - 1 - mantissa_bits,
                "mantissa_bits": mantissa_bits,
                "max": fi.max,
                "min_normal": fi.smallest_normal,
                # Smallest subnormal = one mantissa ulp below the smallest normal exponent.
                "min_subnormal": fi.smallest_normal * fi.eps,
                "eps": fi.eps,
            }
        )
    return rows


def encode(value: float | str, fmt: str) -> dict:
    """Encode a number (float or numeric text) in fmt and describe the stored bits."""
    _check_format(fmt)
    x, exact = _parse(value)
    t = _to_format(x, fmt)
    stored = float(t.item())
    bits = _bits_of(t, fmt)
    sign, exponent, mantissa = _split(bits, fmt)
    category = _category(exponent, mantissa)

    exponent_value = None
    if category == "normal":
        exponent_value = int(exponent, 2) - LAYOUTS[fmt]["bias"]

    abs_error = rel_error = None
    if exact is not None:
        with decimal.localcontext(_DEC_CTX):
            stored_d = decimal.Decimal(stored)  # exact (or +-Infinity on overflow)
            err = abs(stored_d - exact)
            abs_error = float(err)
            if exact != 0:
                rel_error = float(err / abs(exact))

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
        "overflow": exact is not None and math.isinf(stored),
        "underflow": exact is not None and exact != 0 and stored == 0.0,
    }


def encode_all(value: float | str) -> list[dict]:
    """Encode a number in every format, in FORMATS order."""
    # Parse once up front so bad text fails before any torch work.
    _parse(value)
    return [encode(value, fmt) for fmt in FORMATS]


def decode_bits(bits: str, fmt: str) -> float:
    """Return the value a bit string represents in fmt (inverse of encode's bits)."""
    import torch

    width = _width(fmt)
    if not isinstance(bits, str) or len(bits) != width or set(bits) - {"0", "1"}:
        raise ValueError(f"expected a string of {width} characters 0/1 for {fmt}")
    raw = int(bits, 2)
    if raw >= 1 << (width - 1):
        raw -= 1 << width  # two's complement so the value fits the signed int dtype
    return float(torch.tensor(raw, dtype=_int_dtype(fmt)).view(_dtype(fmt)).item())


def scale_survival(value: float, scale: float) -> dict:
    """Show whether value*scale survives storage in fp16/bf16 and how well it unscales."""
    import torch

    x, _ = _parse(value)
    s, _ = _parse(scale)
    # The scale must itself be an fp32 number (GradScaler keeps it as an fp32 tensor).
    if not (0 < s <= torch.finfo(torch.float32).max):
        raise ValueError("scale must be > 0 and at most the fp32 maximum")
    scaled = x * s
    fp16 = encode(scaled, "fp16")
    bf16 = encode(scaled, "bf16")
    # Unscale in fp32, as GradScaler.unscale_ does before the fp32 optimizer step;
    # every fp16 value is exact in fp32, so only the division can round.
    f32 = torch.tensor(fp16["stored"], dtype=torch.float32)
    recovered = float((f32 / torch.tensor(s, dtype=torch.float32)).item())
    rel_error = None
    if x != 0 and math.isfinite(x):
        rel_error = abs(recovered - x) / abs(x)
    return {
        "value": x,
        "scale": s,
        "scaled": scaled,
        "fp16_stored": fp16["stored"],
        "fp16_category": fp16["category"],
        "recovered": recovered,
        "rel_error": rel_error,
        "bf16_stored": bf16["stored"],
        "bf16_category": bf16["category"],
    }


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
