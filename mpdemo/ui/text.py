"""Text from a file or a visitor made safe in the page's Markdown and HTML (gr.Markdown renders
HTML, links and emphasis): `shown` keeps it text anywhere, `esc` inside HTML the page builds."""

from __future__ import annotations

import html
import re
from collections.abc import Mapping

# Characters Markdown (CommonMark + GFM, as gradio's renderer reads it) or HTML give a meaning,
# as numeric character references: a reference is text to the parser, never markup.
_MARKUP = str.maketrans(
    {ch: f"&#{ord(ch)};" for ch in "&<>\"'\\`*_[]!|~$#"}
    | {"\n": " ", "\r": " ", "\t": " ", "\x0b": " ", "\x0c": " "}
)
# GFM turns bare addresses into links: break "http://", "www." and "name@host" apart.
_AUTOLINK = re.compile(r"(?i)(:)(?=//)|(?<=www)(\.)|(@)")
MAX_SHOWN = 2000  # one value on the status line: a pasted page is cut, not rendered


def shown(value: object, limit: int = MAX_SHOWN) -> str:
    """`value` as text a gr.Markdown (or gr.HTML) shows literally, on one line, at most `limit`."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit] + "…"
    text = text.translate(_MARKUP)
    return _AUTOLINK.sub(lambda m: f"&#{ord(m.group(0))};", text)


def code_text(value: object, limit: int = MAX_SHOWN) -> str:
    """`value` as inline code in a gr.Markdown that stays text: a backtick, a newline, `$` or
    markup in it cannot end the code span and start a heading, a link, an image or maths."""
    return f"<code>{shown(value, limit)}</code>"


def shown_args(args: Mapping[str, object]) -> dict[str, object]:
    """A template's arguments with every text in them `shown` (numbers stay numbers)."""
    return {k: shown(v) if isinstance(v, str) else v for k, v in args.items()}


def esc(text: object, quote: bool = True) -> str:
    """Text made safe inside HTML the page builds (`quote=False`: element text only, e.g. a
    toast); Markdown markers such as ** are kept for the tabs that render them."""
    return html.escape(str(text), quote=quote)
