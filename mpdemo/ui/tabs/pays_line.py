"""A sweep in the classroom's line (mpdemo/classroom/line.py): it waits its turn, shows its place,
and is bounded and shared per address as a comparison is."""

from __future__ import annotations

import statistics
import threading
import time

from ...classroom import broadcast, caps
from ...classroom.broadcast import Viewer
from ...sweep.events import SweepPoint
from ...sweep.spec import SweepPlan
from ...teach.lessons import LESSONS


def join_line(plan: SweepPlan, stop: threading.Event, client: str) -> Viewer:
    """The sweep's place in the line (caps.TooLong or QueueFull if none); its runner, built when
    its turn comes, stops on `stop`."""
    from ...sweep.run import SweepRunner  # a sweep was planned: torch is loaded

    hub = broadcast.hub()
    caps.check_sweep(plan, hub.max_comparison_s)
    return hub.line_up(lambda: SweepRunner(plan, stop), plan.estimate_s, client)


def left_line(view: Viewer | None) -> bool:
    """Whether the sweep was stopped while it waited (it never ran)."""
    return view is not None and view.comparison.state == "cancelled"


def sweep_lesson(name: object) -> bool:
    """Whether the lesson picked on the Train tab is the size sweep (it runs on this tab)."""
    lesson = LESSONS.get(str(name or ""))
    return lesson is not None and lesson.sweep


def sweep_left_s(estimates: list[float], walls: list[float], in_point_s: float) -> float:
    """Seconds left of a sweep: the estimates of the points to come, scaled by the median of the
    measured points' wall/estimate (one slow point does not swing it; a 26 M point ran 2.3x its
    probe's estimate on a loaded 2-core Xeon), less what the current one has run."""
    done = len(walls)
    ratios = [w / e for w, e in zip(walls, estimates, strict=False) if e > 0]
    pace = statistics.median(ratios) if ratios else 1.0
    rest = estimates[done:]
    if not rest:
        return 0.0
    current = max(0.0, rest[0] * pace - in_point_s)
    return current + pace * sum(rest[1:])


def left_s(plan: SweepPlan, points: list[SweepPoint], since: float | None) -> float | None:
    """Seconds left of a running sweep (None before its turn), `since` when its last point began."""
    if since is None:
        return None
    estimates = [pp.estimate_s for pp in plan.points]
    return sweep_left_s(estimates, [p.wall_s for p in points], time.monotonic() - since)
