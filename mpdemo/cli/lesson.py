"""`python -m mpdemo lesson --list` / `lesson NAME`: the Train tab's lessons, from the terminal."""

from __future__ import annotations

import argparse

from .. import engine
from ..catalog import DEVICES
from ..messages import render
from ..teach.lesson_checks import check_runs, traces_of
from ..teach.lesson_recordings import recording_for
from ..teach.lessons import LESSONS, Lesson, cpu_note_here
from .common import add_output_flags


def add_lesson_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """The `lesson` subcommand's flags."""
    p = sub.add_parser("lesson", help="run one of the course's lessons (--list names them)")
    p.add_argument("name", nargs="?", help="the lesson to run (see --list)")
    p.add_argument("--list", action="store_true", help="list the lessons in the course's order")
    add_output_flags(p)
    p.set_defaults(repeat=1)  # `run`'s flag, which _run reads: a lesson runs once
    # bench/gpu_check.py records each lesson on the device it measures (--device cuda there).
    p.add_argument(
        "--device",
        choices=DEVICES,
        default=None,
        help="train the lesson's runs on this device (default: its own, auto)",
    )
    return p


def recording_text(name: str) -> str | None:
    """Where the lesson's GPU recording is, and on which GPU; None when none ships."""
    rec = recording_for(name)
    if rec is None:
        return None
    return (
        f"recorded on {rec.machine_name} ({rec.date or 'no date'}): {rec.path}; the Train "
        "tab's lesson picker draws it beside the live runs"
    )


def list_text() -> str:
    """One paragraph a lesson: name, title, the slide it serves, what to look for, its runs."""
    on_cpu = engine.resolve_device("auto").type == "cpu"
    out = []
    for i, lesson in enumerate(LESSONS.values(), 1):
        say = lambda part, k=lesson.key: render(f"lesson_{k}_{part}", {})  # noqa: E731
        if lesson.sweep:
            runs = "the size sweep (python -m mpdemo sweep)"
        else:
            cfgs = lesson.configs()
            runs = f"{', '.join(c.label for c in cfgs)}; {cfgs[0].model}, {cfgs[0].steps} steps"
        lines = [
            f"{i}. {lesson.name}: {say('title')}",
            f"   slide: {say('slide')}",
            f"   look for: {say('look')}",
            f"   runs: {runs}",
        ]
        if cpu_note_here(lesson, on_cpu):
            lines.append(f"   here: {say('cpu')}")
        recorded = recording_text(lesson.name)
        if recorded:
            lines.append(f"   {recorded}")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def print_check(lesson: Lesson, runs: list[dict[str, object]]) -> None:
    """Whether the runs showed the lesson's point: each figure its check reads, and its bar."""
    if lesson.check is None:
        return
    readings = check_runs(lesson.check, traces_of(runs))
    if not readings:
        print("# the lesson's check: too few steps to read")
        return
    held = all(r.ok for r in readings)
    print(f"# the lesson's check {'held' if held else 'did NOT hold'} on these runs:")
    for r in readings:
        print(f"#   {r}")
