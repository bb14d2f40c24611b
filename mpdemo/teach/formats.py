"""Engine for the "Number formats" view: how fp32, fp16, bf16 and the two fp8 formats store a number.

The fp8 formats are torch's `float8_e4m3fn` (E4M3: 4 exponent bits, 3 mantissa bits, no inf,
one NaN pattern per sign) and `float8_e5m2` (E5M2: IEEE-style, with inf). Casting to them works
on any CPU; only fp8 matmuls need the GPU (see mpdemo/engine/fp8.py).

Pure Python + torch; torch is imported inside functions so that importing this module
(and hence the app's cold start) stays cheap. No UI code lives here.
"""

from __future__ import annotations

import decimal
import html
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

FORMATS = ("fp32", "fp16", "bf16", "e4m3", "e5m2")
LOW_PRECISION = ("fp16", "bf16", "e4m3", "e5m2")  # what a value is cast *to* from fp32

# IEEE-style layouts. These are structural facts used to slice bit strings; every
# *numeric* property shown to users comes from torch.finfo (see format_table), and the
# tests check this table against torch.finfo too.
LAYOUTS: dict[str, dict[str, int]] = {
    "fp32": {"sign": 1, "exponent": 8, "mantissa": 23, "bias": 127},
    "fp16": {"sign": 1, "exponent": 5, "mantissa": 10, "bias": 15},
    "bf16": {"sign": 1, "exponent": 8, "mantissa": 7, "bias": 127},
    "e4m3": {"sign": 1, "exponent": 4, "mantissa": 3, "bias": 7},
    "e5m2": {"sign": 1, "exponent": 5, "mantissa": 2, "bias": 15},
}
# E4M3 "fn" (finite): an all-ones exponent still holds normal numbers (448 = 0.1111.110); only
# S.1111.111 is NaN, and there is no inf. The other formats keep IEEE's inf/NaN exponent.
FINITE_ONLY = frozenset({"e4m3"})
TORCH_DTYPE_NAMES = {
    "fp32": "float32",
    "fp16": "float16",
    "bf16": "bfloat16",
    "e4m3": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
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


def _dtype(fmt: str) -> torch.dtype:
    """Map a format name to its torch dtype."""
    import torch

    return getattr(torch, TORCH_DTYPE_NAMES[_check_format(fmt)])


def _int_dtype(fmt: str) -> torch.dtype:
    """Same-width integer dtype used to reinterpret the float's bits (unsigned for 8 bits)."""
    import torch

    return {32: torch.int32, 16: torch.int16, 8: torch.uint8}[_width(fmt)]


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


def _to_format(x: float, fmt: str) -> torch.Tensor:
    """Round a Python float into fmt (round-to-nearest-even), returned as a 0-d tensor."""
    import torch

    # Go through fp32 as a mixed-precision cast does (fp32 master copy -> low precision);
    # for fp32 itself this is the double -> float conversion.
    t = torch.tensor(x, dtype=torch.float32)
    return t if fmt == "fp32" else t.to(_dtype(fmt))


def _bits_of(t: torch.Tensor, fmt: str) -> str:
    """Bit string of a 0-d float tensor, most significant bit first."""
    width = _width(fmt)
    raw = int(t.view(_int_dtype(fmt)).item()) & ((1 << width) - 1)
    return format(raw, f"0{width}b")


def _split(bits: str, fmt: str) -> tuple[str, str, str]:
    """Split a bit string into (sign, exponent, mantissa) fields."""
    lay = LAYOUTS[fmt]
    e_end = lay["sign"] + lay["exponent"]
    return bits[: lay["sign"]], bits[lay["sign"] : e_end], bits[e_end:]


def _category(exponent: str, mantissa: str, fmt: str = "fp32") -> str:
    """IEEE class from the exponent and mantissa fields (E4M3fn: only all-ones is NaN)."""
    if fmt in FINITE_ONLY and set(exponent) == {"1"}:
        return "nan" if set(mantissa) == {"1"} else "normal"
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
                "dtype": f"torch.{TORCH_DTYPE_NAMES[fmt]}",
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


def format_range(fmt: str) -> dict[str, float]:
    """max, min_normal, min_subnormal and eps of a format, from torch.finfo."""
    import torch

    fi = torch.finfo(_dtype(fmt))
    return {
        "max": fi.max,
        "min_normal": fi.smallest_normal,
        "min_subnormal": fi.smallest_normal * fi.eps,
        "eps": fi.eps,
    }


def overflow_threshold(fmt: str) -> float:
    """The rounding tie just above max: |x| beyond it cannot round to a finite value of fmt.

    max + half an ulp of max's binade (65520 for fp16, 464 for E4M3, 61440 for E5M2). At the
    tie itself round-to-nearest-even decides: fp16/bf16/E5M2's max has an odd mantissa, so the
    tie goes up (to inf); E4M3's 448 is even (1.110), so 464 still rounds to 448.
    """
    r = format_range(fmt)
    top_binade = 2.0 ** (math.frexp(r["max"])[1] - 1)
    return r["max"] + top_binade * r["eps"] / 2


def tie_rounds_down(fmt: str) -> bool:
    """Whether overflow_threshold(fmt) itself rounds to max (even mantissa) rather than past it."""
    return fmt in FINITE_ONLY


def cast_overflow(fmt: str) -> str:
    """What torch's cast does, on this machine, to a finite value beyond the format's range.

    Measured, not assumed: "inf", "nan" or "saturate" (clamped to +-max). torch 2.13 saturates
    float8_e4m3fn (ml_dtypes and older torch give NaN there); IEEE formats give inf.
    """
    import torch

    if fmt == "fp32":
        return "inf"
    big = torch.tensor(4 * overflow_threshold(fmt), dtype=torch.float32)
    out = float(big.to(_dtype(fmt)).float().item())
    if math.isnan(out):
        return "nan"
    return "inf" if math.isinf(out) else "saturate"


def saturating_cast(x: float, fmt: str) -> float:
    """Clamp to +-max, then cast: the saturating cast fp8 training recipes use.

    torchao's `to_fp8_saturated` and Transformer Engine's casts clamp before casting, so a value
    beyond the range becomes +-max rather than inf/NaN whatever torch's plain cast does.
    """
    import torch

    m = format_range(fmt)["max"]
    t = torch.tensor(x, dtype=torch.float32)
    return float(t.clamp(-m, m).to(_dtype(fmt)).float().item())


def encode(value: float | str, fmt: str) -> dict:
    """Encode a number (float or numeric text) in fmt and describe the stored bits."""
    _check_format(fmt)
    x, exact = _parse(value)
    t = _to_format(x, fmt)
    stored = float(t.item())
    bits = _bits_of(t, fmt)
    sign, exponent, mantissa = _split(bits, fmt)
    category = _category(exponent, mantissa, fmt)

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

    # Beyond the range: the cast gave inf, NaN (a non-saturating E4M3 cast) or +-max (a
    # saturating one). `exact` keeps text such as "1e400" whose float is already inf.
    beyond = False
    if exact is not None and fmt != "fp32":
        with decimal.localcontext(_DEC_CTX):
            limit = decimal.Decimal(overflow_threshold(fmt))
            beyond = abs(exact) > limit or (abs(exact) == limit and not tie_rounds_down(fmt))
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
    if width > 8 and raw >= 1 << (width - 1):
        raw -= 1 << width  # two's complement so the value fits the signed int dtype
    return float(torch.tensor(raw, dtype=_int_dtype(fmt)).view(_dtype(fmt)).item())


def scale_survival(value: float, scale: float) -> dict:
    """Show whether value*scale survives storage in each low-precision format and how it unscales.

    The fp16_* and bf16_* keys are kept for older callers; `formats` has every format.
    """
    import torch

    x, _ = _parse(value)
    s, _ = _parse(scale)
    # The scale must itself be an fp32 number (GradScaler keeps it as an fp32 tensor).
    if not (0 < s <= torch.finfo(torch.float32).max):
        raise ValueError("scale must be > 0 and at most the fp32 maximum")
    scaled = x * s
    per_format = {}
    for fmt in LOW_PRECISION:
        enc = encode(scaled, fmt)
        # Unscale in fp32, as GradScaler.unscale_ (and an fp8 matmul's scale_inv) does;
        # every low-precision value is exact in fp32, so only the division can round.
        f32 = torch.tensor(enc["stored"], dtype=torch.float32)
        recovered = float((f32 / torch.tensor(s, dtype=torch.float32)).item())
        rel_error = None
        if x != 0 and math.isfinite(x):
            rel_error = abs(recovered - x) / abs(x)
        per_format[fmt] = {
            "stored": enc["stored"],
            "category": enc["category"],
            "overflow": enc["overflow"],
            "saturated": enc["saturated"],
            "underflow": enc["underflow"],
            "recovered": recovered,
            "rel_error": rel_error,
        }
    fp16, bf16 = per_format["fp16"], per_format["bf16"]
    return {
        "value": x,
        "scale": s,
        "scaled": scaled,
        "fp16_stored": fp16["stored"],
        "fp16_category": fp16["category"],
        "recovered": fp16["recovered"],
        "rel_error": fp16["rel_error"],
        "bf16_stored": bf16["stored"],
        "bf16_category": bf16["category"],
        "formats": per_format,
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
