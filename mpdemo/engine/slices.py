"""The `datasets` split syntax ('train[:2000]', 'train[:10%]'), in pure Python so the page previews
a slice's rows while typing, with datasets' ReadInstruction arithmetic (rounding, clamping)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..messages import ConfigError

# datasets' split syntax (arrow_reader._SUB_SPEC_RE), without the rounding suffix.
SLICE_RE = re.compile(
    r"^(?P<split>[\w.-]+)(\[((?P<from>-?[\d_]+)(?P<from_pct>%)?)?:((?P<to>-?[\d_]+)(?P<to_pct>%)?)?\])?$"
)


@dataclass(frozen=True)
class Slice:
    """A slice string resolved against a split's size."""

    split: str
    start: int
    stop: int
    total: int  # rows in the split
    asked: int | None  # rows an absolute slice asked for ('train[:5000]': 5000); None for %

    @property
    def rows(self) -> int:
        """Rows selected."""
        return max(self.stop - self.start, 0)

    @property
    def clamped(self) -> bool:
        """Asked for more rows than the split has."""
        return self.asked is not None and self.asked > self.rows


def split_of(spec: str) -> str:
    """The split name of a slice string: 'train[:10%]' -> 'train'."""
    return spec.split("[", 1)[0].strip()


def resolve(spec: str, sizes: dict[str, int] | None) -> Slice | None:
    """The slice `spec` selects, None without sizes; ConfigError: bad syntax or an unknown split."""
    text = spec.strip() if isinstance(spec, str) else ""
    m = SLICE_RE.match(text)
    splits = ", ".join(sizes) if sizes else "?"
    if not m:
        raise ConfigError("bad_slice", value=spec, splits=splits)
    pct = bool(m.group("from_pct") or m.group("to_pct"))  # one % makes both ends %, as datasets
    lo = int(m.group("from")) if m.group("from") else None
    hi = int(m.group("to")) if m.group("to") else None
    if pct and any(v is not None and abs(v) > 100 for v in (lo, hi)):
        raise ConfigError("bad_slice", value=spec, splits=splits)
    if sizes is None:
        return None
    split = m.group("split")
    if split not in sizes:
        raise ConfigError("unknown_split", split=split, splits=splits)
    n = sizes[split]

    def absolute(v: int | None, default: int) -> int:
        if v is None:
            return default
        if pct:
            v = int(round(v * n / 100.0))
        if v < 0:
            v = max(n + v, 0)
        return min(v, n)

    start, stop = absolute(lo, 0), absolute(hi, n)
    asked = None
    if not pct and hi is not None and hi >= 0 and (lo is None or lo >= 0):
        asked = hi - (lo or 0)
    return Slice(split, start, stop, n, asked)
