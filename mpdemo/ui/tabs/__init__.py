"""The teaching tabs, one module each (mpdemo.ui.app's tab protocol), in the page's order."""

from __future__ import annotations

from collections.abc import Callable

from ..context import TabContext
from .code import build_code_tab
from .formats import build_formats_tab
from .pays import build_pays_tab
from .underflow import build_underflow_tab
from .why import build_why_tab

TEACH_TABS: list[Callable[[TabContext], None]] = [
    build_formats_tab,
    build_underflow_tab,
    build_code_tab,
    build_why_tab,
    build_pays_tab,
]
