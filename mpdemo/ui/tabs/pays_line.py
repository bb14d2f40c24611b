"""A sweep in the classroom's line (mpdemo/classroom/line.py): it waits its turn behind the
comparisons ahead, shows its place and wait as a comparison does, is bounded by the same cap on
one comparison's length and counts in the same per-address share. Four sweeps from four tabs
no longer hold the machine while the class's comparisons wait, nor the reverse."""

from __future__ import annotations

import threading
from typing import Any

from ...classroom import broadcast, caps
from ...classroom.broadcast import Viewer
from ..i18n import t
from ..train.classroom import _duration, client_here, ordinal


def client_now() -> str:
    """Who asks, for the per-address share: what the proxy saw of the event's request (raises
    inside a served event that has none, classroom.request_here)."""
    return client_here()


def join_line(plan: Any, stop: threading.Event, client: str) -> Viewer:
    """The sweep's place in this server's line (caps.TooLong or QueueFull, keyed, if none):
    its runner, built when its turn comes, stops on `stop` (the page's Stop)."""
    from ...sweep.run import SweepRunner  # a sweep was planned: torch is loaded

    hub = broadcast.hub()
    caps.check_sweep(plan, hub.max_comparison_s)
    return hub.line_up(lambda: SweepRunner(plan, stop), plan.estimate_s, client)


def waiting_text(view: Viewer | None, lang: str) -> str | None:
    """'**2nd** in line, about 1 min 10 s before it starts' while the sweep waits; else None."""
    if view is None or view.closed:
        return None
    place = view.place()
    if place is None:
        return None
    n, wait = place
    if wait is None:
        return t("class_queued_unknown", lang, place=ordinal(n, lang))
    return t("class_queued", lang, place=ordinal(n, lang), wait=_duration(wait, lang))


def left_line(view: Viewer | None) -> bool:
    """Whether the sweep was stopped while it waited (it never ran)."""
    return view is not None and view.comparison.state == "cancelled"
