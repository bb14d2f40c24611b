"""str.format with a language's digits and plurals: `{n:,}` is "2.000" in Spanish, and
`{n:plural(# run|# runs)}` picks the form for n (`#` is n) by the language's `plural_one`."""

from __future__ import annotations

import math
import numbers
import re
import string
from dataclasses import dataclass
from typing import Any

PLURAL = re.compile(r"plural\((?P<forms>.*)\)", re.S)
SIG_SPEC = re.compile(r"\.(\d*)g")  # significant digits: the spec the messages use for figures


@dataclass(frozen=True)
class NumberStyle:
    """How one language writes numbers and which counts take the singular."""

    decimal: str = "."
    thousands: str = ","
    plural_one: frozenset[int] = frozenset({1})

    def number(self, value: object, spec: str = "") -> str:
        """`format(value, spec)` with this language's decimal mark and digit grouping."""
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return format(value, spec)
        text = _plain_g(value, spec) or format(value, spec)
        if (self.decimal, self.thousands) == (".", ","):
            return text
        # One pass, so "1,234.5" becomes "1.234,5" rather than "1.234.5".
        return text.translate({ord(","): self.thousands, ord("."): self.decimal})

    def share(self, x: float) -> str:
        """A share as a percentage, small ones kept visible (0.004%, not 0.0%)."""
        return "0%" if x == 0 else self.number(x * 100, ".2g" if x < 0.001 else ".1f") + "%"

    def plural(self, count: Any, forms: str) -> str:
        """ "one form|other form" (# = the count) → the form `count` takes, filled in."""
        one, _, other = forms.partition("|")
        try:
            singular = int(count) == count and int(count) in self.plural_one
        except (TypeError, ValueError):  # an infinite count raises: render() falls back
            singular = False
        form = one if singular or not other else other
        if "#" not in form:
            return form
        whole = isinstance(count, numbers.Integral) and not isinstance(count, bool)
        return form.replace("#", self.number(count, "," if whole else ""))

    def format(self, template: str, args: dict[str, object]) -> str:
        """Fill `template` with `args` (raises what str.format raises on a bad template)."""
        return _Formatter(self).vformat(template, (), args)


class _Formatter(string.Formatter):
    """string.Formatter whose fields go through a NumberStyle."""

    def __init__(self, style: NumberStyle) -> None:
        self.style = style

    def convert_field(self, value: object, conversion: str | None) -> Any:
        # `{value!r}` quotes typed text; a number stays one, written the language's way ("-1,5").
        if conversion == "r" and isinstance(value, numbers.Real) and not isinstance(value, bool):
            return value
        return super().convert_field(value, conversion)

    def format_field(self, value: object, format_spec: str) -> str:
        plural = PLURAL.fullmatch(format_spec)
        if plural:
            return self.style.plural(value, plural.group("forms"))
        return self.style.number(value, format_spec)


def _plain_g(value: numbers.Real, spec: str) -> str | None:
    """`{x:.3g}` of 1,000 up to a billion as "15,600", not "1.56e+04" (which hides a gap)."""
    if SIG_SPEC.fullmatch(spec) is None or not math.isfinite(value):
        return None
    text = format(value, spec)
    if "e" not in text or not 1e3 <= abs(float(text)) < 1e9:
        return None
    return format(int(float(text)), ",")


ENGLISH = NumberStyle()


def is_plural_spec(spec: str | None) -> bool:
    """Whether a field's format spec is a `plural(...)` choice."""
    return bool(spec) and PLURAL.fullmatch(spec) is not None
