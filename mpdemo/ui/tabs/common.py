"""What the Number formats tab and the Underflow lab share: the formats they scale, one line."""

from __future__ import annotations

from ...teach.formats import LOW_PRECISION
from ..histogram import FORMAT_NAMES

FORMAT_CHOICES = [(FORMAT_NAMES[f], f) for f in LOW_PRECISION]
SCALE_K_DEFAULT = 16  # both tabs' scale sliders open at S = 2^16, GradScaler's init_scale

# The teaching tabs' own computations run one at a time in the whole server: six pages looping
# the accumulation at once took the cores from the class's comparison (issue 52).
SIDE_WORK: dict[str, object] = {"concurrency_limit": 1, "concurrency_id": "side_work"}


def html_table(headers: list[str], rows: list[list[str]]) -> str:
    """A small HTML table that scrolls sideways on a phone; cells are already escaped HTML."""
    cell = "padding:4px 10px;border-bottom:1px solid #d1d5db;text-align:left;vertical-align:top"
    head = "".join(f'<th style="{cell}">{h}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td style="{cell}">{c}</td>' for c in r) + "</tr>" for r in rows
    )
    return (
        '<div style="overflow-x:auto"><table style="border-collapse:collapse;width:100%">'
        f"<tr>{head}</tr>{body}</table></div>"
    )
