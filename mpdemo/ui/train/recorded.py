"""The Train tab's recorded runs: open a runs file, compare with a shipped recording, Clear runs,
and keep a visitor's runs in their own browser across a reload (gr.BrowserState: the server
keeps nothing; each run is checked on the way back like an uploaded file's)."""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr

from ...colours import color_map
from ...files.machines import describe_machine
from ...files.recorded import Recording, RecordingError, read_runs, reference_files
from ...log import logger
from ..context import QUIET, Component, Frame, Outputs, TabContext, Value
from ..i18n import DEFAULT_LANG, error_text, norm_lang, t
from ..text import shown, shown_args
from .frames import (
    AXIS_SETTLE_S,
    OUTPUTS,
    button,
    by_component,
    file_updates,
    keyed,
    plot_frames,
    plot_updates,
)
from .gradwatch import watch_update
from .plots import PLOTS
from .session import Session
from .session_life import attach
from .session_table import summary_table

STORAGE_KEY = "mpdemo-runs"
# The stored runs' key, the same after a restart (else they would not read back); no secret:
# gradio sends it to every browser.
SECRET_ENV = "MPDEMO_STORAGE_SECRET"
SECRET_FILE = "storage-secret"
# gr.BrowserState only writes a truthy value: "cleared" is an empty document, not None.
EMPTY_STORE = '{"version": 2, "runs": []}'


def storage_secret() -> str | None:
    """MPDEMO_STORAGE_SECRET, else one made once in the user's cache folder (theirs only); None
    (gradio's per-process one) where neither can be had."""
    env = os.environ.get(SECRET_ENV, "").strip()
    if env:
        return env
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(cache) / "mpdemo" / SECRET_FILE
    try:
        text = path.read_text(encoding="utf-8").strip()
        if len(text) >= 32:
            return text
    except OSError:
        pass
    made = secrets.token_urlsafe(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{SECRET_FILE}-{os.getpid()}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(made)
        try:  # two processes starting at once: the first file written wins
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        text = path.read_text(encoding="utf-8").strip()
        return text if len(text) >= 32 else None
    except OSError:
        logger.warning("no %s nor a writable cache: stored runs last until a restart", SECRET_ENV)
        return None


def reference_choices() -> list[tuple[str, str]]:
    """'fp32 / bf16 · torch · tiny-bert · EPYC AVX512 · 2026-11-30' per shipped recording."""
    out = []
    for path in reference_files():
        try:
            rec = read_runs(path)
        except RecordingError:
            continue  # a broken file in assets/ is a test failure, not a page error
        summ = [r["summary"] for r in rec.runs]
        precs = " / ".join(dict.fromkeys(s["precision"] for s in summ))
        backends = ", ".join(dict.fromkeys(s["backend"] for s in summ))
        models = ", ".join(dict.fromkeys(str(s.get("model") or "") for s in summ if s.get("model")))
        parts = [precs, backends, models, rec.tag, rec.date or ""]
        out.append((" · ".join(p for p in parts if p), path.name))
    return out


def _refused(session: Session, lang: str, error: str) -> Frame:
    """One line, and the page as it was."""
    return {
        "status": t("status_load_failed", lang, error=shown(error)),
        **plot_frames(session),
        "summary": session.table(lang),
    }


def _join(session: Session, rec: Recording, lang: str) -> tuple[str, Any, Frame]:
    """Add `rec` and draw everything from it; when drawing raises, the session is as it was."""
    before = list(session.recordings)
    try:
        labels = ", ".join(session.add_recording(rec))
        # Every part of the line came from the file: shown as text.
        args = {"name": rec.name, "machine": describe_machine(rec.machine), "date": rec.date or "?"}
        status = t("status_loaded", lang, **shown_args({**args, "labels": labels}))
        table = session.table(lang)
        table.to_html()  # a Styler formats its cells only when drawn: draw them here
        updates = plot_updates(session, lang, rebuild=True)
        plot_frames(session)
    except BaseException:
        session.recordings = before
        raise
    return status, table, updates


def _open(
    session: Session, lang: str, path: str | Path | None, name: str | None = None
) -> Iterator[dict]:
    """Read a runs file into the session and draw it; a bad file changes nothing."""
    lang = norm_lang(lang)
    if path is None:
        yield {"status": t("status_load_none", lang)}
        return
    try:
        rec = read_runs(path, name)
    except RecordingError as err:
        yield _refused(session, lang, error_text(err, lang))
        return
    try:
        status, table, updates = _join(session, rec, lang)
    except Exception:  # noqa: BLE001 - the reader let through what a renderer cannot draw
        logger.exception("a runs file passed the reader but could not be drawn")
        err = RecordingError("runs_not_drawn", name=rec.name)
        yield _refused(session, lang, error_text(err, lang))
        return
    watch = gr.update(**watch_update(session, lang))
    yield {"status": status, **updates, "summary": table, "grad_watch": watch}
    time.sleep(AXIS_SETTLE_S)
    yield {"status": status, **plot_frames(session), "summary": table}


def load_runs(file: object, lang: str, session: Session) -> Iterator[Frame]:
    """Open a runs JSON (the app's download, `mpdemo run --json`, `gpu_check.py --out`)."""
    path = file if isinstance(file, (str, Path)) or file is None else getattr(file, "name", None)
    yield from _open(session, lang, path)


def pick_reference(choice: str | None, lang: str, session: Session) -> Iterator[Frame]:
    """'Compare with a recorded run': open one of the shipped recordings by file name."""
    if not choice:
        return
    by_name = {p.name: p for p in reference_files()}  # only these: never a path from the page
    yield from _open(session, lang, by_name.get(str(choice)))


def clear_runs(session: Session, lang: str) -> Frame:
    """Clear runs: forget this visitor's runs and opened files, here and in their browser."""
    lang = norm_lang(lang)
    session.clear()
    out: Frame = {spec.name: gr.update(value=None, color_map=color_map()) for spec in PLOTS}
    out.update(
        status=t("status_cleared", lang),
        summary=summary_table([], lang, session.all_columns),  # the columns the box asked for
        csv=gr.update(value=None, interactive=False),
        json=gr.update(value=None, interactive=False),
        script_run=gr.update(choices=[], value=None),
        script_btn=gr.update(value=None, interactive=False),
        legend="",
        grad_watch=gr.update(value="", visible=False),
        reference=gr.update(value=None),
        stored=EMPTY_STORE,
    )
    return out


def restore_runs(lang: str, stored: object, session: Session) -> Frame:
    """On page load: bring back what this browser kept of its runs (nothing kept: no change)."""
    lang = norm_lang(lang)
    n = session.restore(stored)
    if not n:
        return {}
    out = plot_updates(session, lang, rebuild=False)
    out["status"] = t("status_restored", lang, n=n)
    out["summary"] = session.table(lang)
    out["grad_watch"] = gr.update(**watch_update(session, lang))
    out.update(file_updates(session))
    out.update(script_updates(session))  # their configs came back: each can be reproduced
    return out


def script_updates(session: Session) -> Frame:
    """'Run to reproduce' and 'Python script' for the session's runs (their own configs)."""
    labels = session.live_labels()
    if not labels:
        return {}
    script = session.script_file(labels[0])
    return {
        "script_run": gr.update(choices=labels, value=labels[0]),
        "script_btn": gr.update(value=script, interactive=script is not None),
    }


def save_runs(session: Session) -> Value:
    """After the table changed: what the browser keeps, as JSON text (one string: gradio 6.31's
    page deep-copied an object of 10^5 numbers on every message, a core busy for a minute)."""
    value = session.stored() if session is not None else None
    return gr.skip() if value is None else json.dumps(value, separators=(",", ":"), default=str)


def build_row(ctx: TabContext, comps: dict[str, Component], lang0: str) -> None:
    """The recorded-runs row under the downloads, and the browser's store (renders nothing)."""
    with gr.Row(equal_height=True, elem_id="recorded-row"):
        comps["reference"] = ctx.i18n(
            gr.Dropdown(
                reference_choices(),
                value=None,
                label=t("recorded_label", lang0),
                info=t("recorded_info", lang0),
                elem_id="reference-runs",
                scale=3,
            ),
            label="recorded_label",
            info="recorded_info",
        )
        comps["open_runs"] = button(
            ctx,
            gr.UploadButton,
            "open_runs_btn",
            lang0,
            file_types=[".json"],
            file_count="single",
            type="filepath",
            elem_id="open-runs",
            size="md",
            scale=1,
        )
        comps["clear_runs"] = button(
            ctx, gr.Button, "clear_runs_btn", lang0, elem_id="clear-runs", size="md", scale=1
        )
    comps["stored"] = gr.BrowserState(None, storage_key=STORAGE_KEY, secret=storage_secret())


def wire(ctx: TabContext, comps: dict[str, Component], session: gr.State) -> None:
    """load_runs (API), the recordings list, Clear runs, save after each change, restore on load."""
    lang = ctx.lang
    state = session  # the gr.State; the handlers' `session` parameters are its value
    # What /train streams of the plots, status and summary: load_runs answers with the same.
    load_names = [
        "status",
        *(p.name for p in PLOTS),
        "summary",
        "scale_empty",
        "legend",
        "grad_watch",
    ]
    shown = list(OUTPUTS)

    # Named parameters: the API's (gradio_client's) names for them.
    def open_file(
        file: object,
        lang: str = DEFAULT_LANG,
        session: Session | None = None,
        request: gr.Request = None,
    ) -> Iterator[Outputs]:
        """Open a runs JSON: its runs join the plots and the summary, labelled by machine."""
        sess = session if session is not None else Session()
        # An API caller never loads the page: its session is attached here, freed when it goes.
        attach(sess, getattr(request, "session_hash", None))
        for frame in load_runs(file, lang, sess):
            yield {**keyed(comps, frame, load_names), state: sess}

    def open_reference(choice: str | None, lang: str, session: Session) -> Iterator[Outputs]:
        for frame in pick_reference(choice, lang, session):
            yield keyed(comps, frame, load_names)

    comps["open_runs"].upload(
        open_file,
        [comps["open_runs"], lang, session],
        [*(comps[n] for n in load_names), state],
        api_name="load_runs",
        # Reading the largest file allowed holds ~10x its size for seconds: two at once at most.
        concurrency_limit=2,
        concurrency_id="open_runs",
        show_progress="hidden",
    )
    comps["reference"].input(
        open_reference, [comps["reference"], lang, session], [comps[n] for n in load_names], **QUIET
    )
    clear_names = [*shown, "reference", "stored"]
    comps["clear_runs"].click(
        by_component(comps, clear_runs, clear_names),
        [session, lang],
        [comps[n] for n in clear_names],
        **QUIET,
    )
    comps["summary"].change(save_runs, [session], [comps["stored"]], **QUIET)
    restore = by_component(comps, restore_runs, shown)
    ctx.on_load(restore, [comps["stored"], session], [comps[n] for n in shown])
