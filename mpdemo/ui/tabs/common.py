"""What the teaching tabs share: their strings, HTML escaping, and the low-precision formats
they name (the Number formats tab and the Underflow lab show the same ones)."""

from __future__ import annotations

from ...teach.formats import LOW_PRECISION
from ..histogram import FORMAT_NAMES  # noqa: F401 - the tabs name formats as the figures do
from ..i18n import t
from ..text import esc  # noqa: F401 - the tabs' HTML escaping: one helper for the whole UI

SCALE_FORMATS = LOW_PRECISION  # mpdemo.teach.formats imports no torch
FORMAT_CHOICES = [(FORMAT_NAMES[f], f) for f in SCALE_FORMATS]
SCALE_K_DEFAULT = 16  # both tabs' scale sliders open at S = 2^16, GradScaler's init_scale


def tt(key: str, lang: str | None, **args: object) -> str:
    """A teaching string in lang: the same tables as t() (every locale file has every key)."""
    return t(key, lang, **args)


# The teaching tabs' own computations (a Number formats accumulation of 20,000 additions, its
# micro-batch and fp8 trainings, the Underflow lab's pass): one at a time in the whole server,
# whichever visitor asks. Six pages looping the accumulation at once (no limit) took the cores
# from the class's comparison: the default comparison took 59-60 s instead of 6 s, its verdict
# moved from "1.70x slower" to "unsure" (issue 52). Whatever runs, the load note counts it
# (mpdemo.engine.cores.LoadMeter: this process's threads other than the training's).
SIDE_WORK: dict[str, object] = {"concurrency_limit": 1, "concurrency_id": "side_work"}
