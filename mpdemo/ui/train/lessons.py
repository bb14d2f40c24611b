"""The lesson picker at the top of the Train tab: one click sets a lesson's settings (mpdemo.teach
.lessons), says its slide and what to look for, opens its GPU recording where one ships, and runs it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr

from ...config import RunConfig
from ...files.recorded import RecordingError, read_runs, reference_files
from ...log import logger
from ...teach.device_sizes import size_line
from ...teach.lesson_recordings import is_lesson_file, recording_for
from ...teach.lessons import DEFAULT_LESSON, LESSONS, Lesson, cpu_note_here, lesson_of
from .. import system
from ..context import QUIET, Component, Frame, Outputs, TabContext, Value
from ..i18n import message, norm_lang, t
from ..text import shown, shown_args
from . import classroom, controls
from .controls import BY_NAME, defaults, device_kind
from .frames import FOLLOWED, OUTPUTS
from .session import Session


def choices(lang: str) -> list[tuple[str, str]]:
    """Radio entries: (the lesson's title in `lang`, its name), in the course's order."""
    shown = [x for x in LESSONS.values() if x.on_page]
    return [(f"{i}. {message(f'lesson_{x.key}_title', {}, lang)}", x.name)
            for i, x in enumerate(shown, 1)]  # fmt: skip


def info(lang: str, name: str | None) -> str:
    """The lesson's slide and what to look for (none picked: the first, the opening comparison)."""
    lesson = LESSONS.get(name or DEFAULT_LESSON)
    if lesson is None:
        return ""
    say = lambda part: message(f"lesson_{lesson.key}_{part}", {}, lang)  # noqa: E731
    lines = [f"**{shown(say('title'))}** · *{shown(say('slide'))}*", shown(say("look"))]
    if cpu_note_here(lesson, system.trains_on_cpu("auto")):
        lines.append(shown(say("cpu")))
    sized = None if lesson.sweep else size_line(lesson.name, device_kind())
    if sized is not None:  # which size this device trains, and why
        lines.append(message(sized[0], sized[1], lang))
    rec = recording_for(lesson.name)
    if rec is not None:  # every part of it came from the file: shown as text
        args = {"machine": rec.machine_name, "date": rec.date or "?", "tag": rec.tag}
        # A phone hides it (app.py's CSS): Train stays on the first screen.
        recorded = t("lesson_recorded", lang, **shown_args(args))
        lines.append(f'<span class="lesson-rec">{recorded}</span>')
    return "\n\n".join(lines)


def open_recording(session: Session, name: str | None) -> list[str]:
    """Before a lesson trains: its recording replaces the last lesson's among the opened files;
    the labels it drew, [] when none ships."""
    lesson_files = {p.name for p in reference_files() if is_lesson_file(p.name)}
    rec = recording_for(name or "")
    before = session.recordings
    session.recordings = [r for r in before if r.recording.name not in lesson_files]
    if rec is None:
        return []
    try:
        loaded = read_runs(rec.path)
    except RecordingError:  # it read a moment ago: changed under us; the lesson runs alone
        logger.warning("the lesson recording %s no longer reads", rec.path.name)
        return []
    try:
        return session.add_recording(loaded)
    except Exception:  # noqa: BLE001 - a file that cannot be drawn: the lesson runs alone
        logger.exception("the lesson recording %s could not be drawn", rec.path.name)
        session.recordings = before
        return []


def values(lesson: Lesson) -> Frame:
    """Every run control's value for the lesson: RunConfig's defaults where it is silent."""
    plain = RunConfig().to_dict()  # the grid's controls (backends, precisions...) are no field
    base = {n: plain.get(n, v) for n, v in defaults().items() if BY_NAME[n].run}
    return {n: lesson.values(device_kind()).get(n, v) for n, v in base.items()}


def values_of(configs: list[RunConfig], repeat: int) -> Frame:
    """The run controls' values that ask for these runs (a followed teacher's comparison)."""
    first = configs[0]
    out = {n: getattr(first, n) for n in controls.RUN_NAMES if n not in controls.UI_ONLY}
    fp16 = [c for c in configs if c.precision == "fp16"]
    scaled = {c.loss_scaling for c in fp16}
    out.update(
        backends=list(dict.fromkeys(c.backend for c in configs)),
        precisions=[p for p in dict.fromkeys(c.precision for c in configs) if p != "fp8"],
        fp8=any(c.precision == "fp8" for c in configs),  # its own box (inputs.with_fp8)
        weights=list(dict.fromkeys(c.weights for c in configs)),
        compare_scaling=len(scaled) > 1,  # each fp16 run with and without its scaler
        loss_scaling=True in scaled if fp16 else first.loss_scaling,
        repeat=repeat,
    )
    return {n: v for n, v in out.items() if n in controls.RUN_NAMES}


def followed(configs: list[RunConfig], repeat: int, lang: str) -> Frame:
    """A board follower's lesson header and settings for the teacher's comparison (FOLLOWED)."""
    lesson = lesson_of(configs)
    head = info(lang, lesson.name) if lesson is not None else t("lesson_board_own", lang)
    # The teacher's very runs, at the size they trained (a GPU's lesson size on a GPU server).
    out: Frame = {
        n: gr.update(value=v) for n, v in values_of(configs, repeat).items() if n in FOLLOWED
    }
    out["lesson"] = gr.update(value=lesson.name if lesson is not None else None)
    return {**out, "lesson_info": head}


def build(ctx: TabContext, comps: dict[str, Component], lang0: str) -> None:
    """The picker and its info line (comps['lesson'], comps['lesson_info'])."""
    with gr.Group(elem_id="lesson-box"):
        comps["lesson"] = ctx.i18n(
            gr.Radio(
                choices(lang0),
                value=None,  # a radio fires no event when its picked option is clicked again
                label=t("lesson_label", lang0),
                elem_id="lesson-picker",
            ),
            label="lesson_label",
        )
        comps["lesson_info"] = gr.Markdown(info(lang0, None), elem_id="lesson-info")


def wire(
    ctx: TabContext,
    comps: dict[str, Component],
    session: gr.State,
    endpoint: Callable[..., Iterator[Outputs]],
    arm_fn: Callable[..., Outputs],
) -> None:
    """A pick loads the lesson's settings, then arms and trains as Train does (the sweep lesson
    switches to the Where it pays tab instead)."""
    lang = ctx.lang
    tabs = ctx.tabs
    names = [n for n in controls.NAMES if BY_NAME[n].run]
    extra = [comps["lesson_info"], *([tabs] if tabs is not None else [])]

    def pick(lg: str, name: str | None) -> list[Value]:
        lesson = LESSONS.get(name or "")
        if lesson is None:
            return [gr.skip()] * (len(names) + len(extra))
        vals = values(lesson)
        out: list[Value] = [gr.skip() if lesson.sweep else gr.update(value=vals[n]) for n in names]
        out.append(info(norm_lang(lg), name))
        if tabs is not None:
            out.append(gr.Tabs(selected="pays" if lesson.sweep else "train"))
        return out

    def arm_lesson(name: str | None, sess: Session, lg: str) -> Any:
        lesson = LESSONS.get(name or "")
        if lesson is None or lesson.sweep:  # one skip an output: gradio read {} as one value
            return [gr.skip(), gr.skip()]
        open_recording(sess, name)
        return arm_fn(sess, lg)

    def run(name: str | None, *args: Value) -> Iterator[Outputs]:
        lesson = LESSONS.get(name or "")
        if lesson is None or lesson.sweep:
            return
        yield from endpoint(*args)

    picked = comps["lesson"].input(
        pick, [lang, comps["lesson"]], [*(comps[n] for n in names), *extra], **QUIET
    )
    armed = picked.then(
        arm_lesson, [comps["lesson"], session, lang], [comps["status"], comps["stop_btn"]], **QUIET
    )
    armed.then(
        run,
        [comps["lesson"], *(comps[n] for n in controls.NAMES), lang, session],
        [comps[n] for n in OUTPUTS],
        preprocess=False,  # as Train: the values as sent (see wiring.py)
        api_visibility="undocumented",
        **classroom.streaming(comps),
    )

    def on_lang(lg: str, name: str | None) -> list[Value]:
        return [gr.update(choices=choices(lg), value=name), info(lg, name)]

    ctx.on_language(on_lang, [comps["lesson"]], [comps["lesson"], comps["lesson_info"]])
