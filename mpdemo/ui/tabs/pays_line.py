"""A sweep in the classroom's line (mpdemo/classroom/line.py): it waits its turn behind the
comparisons ahead, shows its place and wait as a comparison does, is bounded by the same cap on
one comparison's length and counts in the same per-address share. Four sweeps from four tabs
no longer hold the machine while the class's comparisons wait, nor the reverse."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from ...classroom import broadcast, caps
from ...classroom.broadcast import Viewer
from ...sweep.events import SweepPoint
from ...sweep.spec import SweepPlan
from ...teach.lessons import LESSONS
from ..context import Component, Outputs, TabContext, Value
from ..i18n import t
from ..train import classroom
from ..train.classroom import client_here, duration, ordinal


def client_now() -> str:
    """Who asks, for the per-address share: what the proxy saw of the event's request (raises
    inside a served event that has none, classroom.request_here)."""
    return client_here()


def join_line(plan: SweepPlan, stop: threading.Event, client: str) -> Viewer:
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
    return t("class_queued", lang, place=ordinal(n, lang), wait=duration(wait, lang))


def left_line(view: Viewer | None) -> bool:
    """Whether the sweep was stopped while it waited (it never ran)."""
    return view is not None and view.comparison.state == "cancelled"


def sweep_lesson(name: object) -> bool:
    """Whether the lesson picked on the Train tab is the size sweep (it runs on this tab)."""
    lesson = LESSONS.get(str(name or ""))
    return lesson is not None and lesson.sweep


def wire_lesson(
    ctx: TabContext,
    run: Callable[..., Iterator[Outputs]],
    inputs: list[Component],
    outputs: list[Component],
) -> None:
    """The Train tab's lesson picker (ctx.train.lesson): its sweep lesson switches to
    this tab (train/lessons.py) and starts the sweep with the tab's settings, as Run sweep does.

    run: the tab's Run sweep handler, called with `inputs`' values; it streams `outputs`.
    """
    picker = ctx.train.lesson if ctx.train is not None else None
    if picker is None:
        return

    def on_lesson(name: object, *args: Value) -> Iterator[Outputs]:
        if sweep_lesson(name):
            yield from run(*args)

    picker.input(
        on_lesson,
        [picker, *inputs],
        outputs,
        concurrency_limit=classroom.concurrency(),  # in the line with Run sweep and Train
        concurrency_id=classroom.CONCURRENCY_ID,
        api_visibility="undocumented",
        preprocess=False,  # as Run sweep: the values as sent
        show_progress="minimal",
        show_progress_on=[outputs[0]],
    )


def sweep_left_s(estimates: list[float], walls: list[float], in_point_s: float) -> float:
    """Seconds left of a sweep: the plan's estimate of each point still to come, scaled by how
    the points measured so far ran against theirs, less what the current one has run.

    The plan's estimate comes from a probe's rate before any point (a 26 M model's point ran
    2.3x its estimate on a loaded 2-core Xeon, the small ones within 1.3x); the median of the
    points' ratios learns the machine's pace as they stream, and one slow point (a burst of
    load, a model's first build) does not swing it as a ratio of sums did.
    """
    done = len(walls)
    ratios = sorted(w / e for w, e in zip(walls, estimates, strict=False) if e > 0)
    pace = 1.0
    if ratios:
        mid = len(ratios) // 2
        pace = ratios[mid] if len(ratios) % 2 else (ratios[mid - 1] + ratios[mid]) / 2
    rest = estimates[done:]
    if not rest:
        return 0.0
    current = max(0.0, rest[0] * pace - in_point_s)
    return current + pace * sum(rest[1:])


def left_s(plan: SweepPlan, points: list[SweepPoint], since: float | None) -> float | None:
    """Seconds left of a running sweep (None before its turn): sweep_left_s on its plan's
    estimates and its points' walls, `since` the monotonic time the last point (or it) began."""
    if since is None:
        return None
    estimates = [pp.estimate_s for pp in plan.points]
    return sweep_left_s(estimates, [p.wall_s for p in points], time.monotonic() - since)
