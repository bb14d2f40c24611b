"""The Gradio Blocks: a header, a language switch, and one tab per builder in `TABS`, each a
`build_x_tab(ctx: TabContext)` that names its strings with `ctx.i18n` (context.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr
from starlette.middleware import Middleware

from ..config import Limits
from ..files.recorded import MAX_FILE_BYTES
from ..log import logger as log
from ..log import setup as log_setup
from . import gradio_assets, pages, system, uploads
from .context import QUIET, Component, Handler, TabContext, TabHook, Value
from .i18n import DEFAULT_LANG, LANG_CHOICES, lang_from_header, norm_lang, t
from .serve import (
    check_special_args,
    exit_now,
    keep_busy_sessions,
    poll_gently,
    queue_options,
    serve,
)
from .tabs import TEACH_TABS
from .tabs.why import preset_load
from .tolerant import tolerate
from .train import session_life
from .train.classroom import max_threads
from .train.controls import BY_NAME, defaults
from .train.layout import build_train_tab
from .train.session import Session

# The page's own CSS, given at launch(css=CSS). #status: gradio's red "Error" badge hid the middle
# of the status line, which says what failed itself.
CSS = """
#status [data-testid="status-tracker"] .error,
#status [data-testid="status-tracker"] .clear-status { display: none; }
/* Rows wrap instead of squeezing the title and the status at 400 px. */
#header, #status-row { flex-wrap: wrap; }
#intro { flex: 1 1 320px !important; min-width: min(320px, 100%) !important; }
#intro h1 { overflow-wrap: normal; word-break: normal; hyphens: manual; }
#status { flex: 1 1 300px !important; min-width: min(300px, 100%) !important; }
/* A dropdown's arrow sits over the end of its input: keep the text out from under it. */
input[role="combobox"] { padding-right: 26px !important; text-overflow: ellipsis; }
/* The summary table may use the page's width (gradio capped it near 1220 px). */
.gradio-container .main.app { max-width: min(1600px, 100%) !important; }
#summary th, #summary .sizing-body td, #summary .body-cell { font-size: 13px; }
#summary th, #summary .sizing-body td { padding-left: 3px; padding-right: 3px; }
#summary th .cell-wrap { padding-left: 4px; padding-right: 4px; }
/* No number or word breaks inside itself ("1,45 / 2" read as 1.45 on a projector): the "auto"
   columns (session_table.py) fit each cell on one line; gradio's break-word broke them. */
#summary .body-cell span.text, #summary th span.text, #summary .sizing-body td {
  word-break: normal !important; overflow-wrap: normal !important; hyphens: none !important; }
/* The run's name may wrap between words, never narrower than "accelerate" or "weights+SR". */
#summary .sizing-body td:first-child { white-space: normal !important;
  min-width: calc(10ch + 22px); }
#lesson-info p { margin: 2px 0; }
/* At phone width the language box spans a row of its own, the three languages on one line, so
   Train stays on the first screen. */
@media (max-width: 600px) {
  #header > .form:has(> #lang), #lang { flex: 1 1 100% !important; min-width: 100% !important; }
  #lang .wrap { gap: 6px !important; }
  #lang label { padding: 6px 8px !important; }
}
/* A phone: the status and the plots right after Train, the controls below the results. */
@media (max-width: 700px) {
  #train-results { order: -1; }
  #lesson-info p:has(> .lesson-rec) { display: none; }
  /* The table's columns in a phone's width: a narrower face, 10 px, a pixel of padding. */
  #summary th, #summary .sizing-body td, #summary .body-cell, #summary span.text {
    font-size: 10px !important; font-family: Arial, Helvetica, sans-serif !important; }
  #summary th, #summary td, #summary .body-cell, #summary .cell-wrap, #summary .header-content {
    padding: 1px !important; margin: 0 !important; }
  #summary th span.text, #summary .body-cell span.text, #summary .sizing-body td {
    white-space: normal !important; }
  #summary .sizing-body td:first-child { min-width: 0; }
}
"""

# gradio's cache (uploads, served downloads): every 5 min what is older than 20 goes (uploads.py
# bounds each address meanwhile); an upload larger than a runs file is refused.
DELETE_CACHE = (300, 20 * 60)
# Tabs whose settings gradio keeps (~2 MB each with plots drawn; its default is 10,000).
STATE_SESSIONS = 400


def launch_options() -> dict[str, object]:
    """What `demo.launch(...)` takes besides the address: app.py and the tests launch with it."""
    return {
        "css": CSS,
        "max_file_size": MAX_FILE_BYTES,
        "state_session_capacity": STATE_SESSIONS,
        "i18n": GRADIO_STRINGS,
        # A class's pages each hold a worker thread while they follow a comparison: gradio's
        # default of 40 would leave none for Stop (classroom.py).
        "max_threads": max_threads(),
        # Uploads bounded per address, gradio's idle timer mended, each page's heartbeat counted.
        "app_kwargs": {
            "middleware": [
                Middleware(m)
                for m in (uploads.BoundUploads, gradio_assets.MendedAssets, pages.Heartbeats)
            ]
        },
    }


# gradio 6.31's screen-reader line reads the key `common.complete`, which its translations lack.
GRADIO_STRINGS = gr.I18n(
    en={"common.complete": "Complete"},
    es={"common.complete": "Completado"},
    pt={"common.complete": "Concluído"},
)


TABS: list[Callable[[TabContext], None]] = [build_train_tab, *TEACH_TABS]


def _wire_presets(ctx: TabContext) -> None:
    """The Why tab's Presets menu loads its settings into the Train tab and switches to it; the
    status says what was loaded (and that a GPU preset fell back to auto where there is none)."""
    preset, tabs = ctx.preset, ctx.tabs
    if preset is None or ctx.train is None or tabs is None:
        return
    controls = ctx.train.controls
    names = [n for n in controls if BY_NAME[n].run]  # not the plots' view settings
    outputs = [*(controls[n] for n in names), tabs, ctx.train.status]

    def load(lang: str, preset_id: str | None) -> list[Value]:
        values, note = preset_load(norm_lang(lang), preset_id, defaults(), system.device_choices())
        if not values:
            return [gr.skip()] * len(outputs)
        return [*(gr.update(value=values[n]) for n in names), gr.Tabs(selected="train"), note]

    # A person's pick only: the language switch re-sets the value too.
    preset.input(load, [ctx.lang, preset], outputs, **QUIET)


def _wire_hooks(trigger: Handler, hooks: list[TabHook], lang: gr.Radio) -> None:
    """On `trigger`: one event for the hooks that share one, one for each hook `alone`."""
    shared = [h for h in hooks if not h[3]]
    for group in [shared, *([h] for h in hooks if h[3])]:
        if not group:
            continue
        fn, inputs, outputs = _merged(group)
        trigger(fn, [lang, *inputs], outputs, **QUIET)


def _merged(hooks: list[TabHook]) -> tuple[Handler, list[Component], list[Component]]:
    """Many hooks as one: (fn(lang, *inputs), inputs, outputs), each component listed once; a
    component two hooks update gets both's properties (the later's win); a hook that raises
    leaves only its own outputs as they were (logged)."""
    # Each component's place among the inputs or outputs, in first-seen order (they hash by id).
    ins_at: dict[Component, int] = {}
    outs_at: dict[Component, int] = {}
    plan: list[tuple[Handler, list[int], list[Component], list[int]]] = []
    for fn, ins, outs, _ in hooks:
        at = [ins_at.setdefault(c, len(ins_at)) for c in ins]
        plan.append((fn, at, outs, [outs_at.setdefault(c, len(outs_at)) for c in outs]))
    inputs, outputs = list(ins_at), list(outs_at)

    def call(lang: str, *values: Value) -> list[Value]:
        lang = norm_lang(lang)
        result: list[Value] = [gr.skip()] * len(outputs)
        for fn, at, outs, where in plan:
            try:
                got = fn(lang, *(values[i] for i in at))
            except Exception:  # noqa: BLE001 - one tab's bug must not blank the others
                log.exception("a language or load hook failed: %s", getattr(fn, "__name__", fn))
                continue
            if isinstance(got, dict) and any(isinstance(k, gr.blocks.Block) for k in got):
                # gradio's other form: {component: update}, some left out (not gr.update's dict)
                answers = [got.get(c, gr.skip()) for c in outs]
            else:
                answers = [got] if len(outs) == 1 else list(got)
            for i, answer in zip(where, answers, strict=True):
                result[i] = _combined(result[i], answer)
        return result[0] if len(outputs) == 1 else result  # gradio: one output, one value

    return call, inputs, outputs


def _combined(first: Any, second: Any) -> Any:
    """Two updates of one component as one: `second`'s properties win where both set one."""
    skip = gr.skip()
    if isinstance(first, dict) and first == skip:  # (a value may be a DataFrame: no ==)
        return second
    if isinstance(second, dict) and second == skip:
        return first

    def as_update(x: Value) -> dict[str, Value]:
        return x if isinstance(x, dict) and x.get("__type__") == "update" else {**skip, "value": x}

    return {**as_update(first), **as_update(second)}


def detect_language(stored: object, request: gr.Request) -> str:
    """The page's first language: the URL's ?lang=, else the one this browser last picked,
    else the browser's Accept-Language header."""
    system.warm_engine()  # a page was opened: someone may click Train soon, import torch now
    header = asked = None
    if request is not None:
        try:
            header = request.headers.get("accept-language")
            asked = request.query_params.get("lang")
        except AttributeError:
            header = None
    for choice in (asked, stored):
        if isinstance(choice, str) and norm_lang(choice) == choice:
            return choice  # a link for a class (?lang=es), or a reload after a switch
    return lang_from_header(header)


def keep_session(session: Session, request: gr.Request) -> Session:
    """On page load: the tab's session becomes an event output, so gradio expires it (and runs
    its delete_callback) after the tab closes; a State never output is never expired."""
    return session_life.attach(session, getattr(request, "session_hash", None))


def end_session(request: gr.Request) -> None:
    """The tab closed (or reloaded): free its session now, not an hour later."""
    session_life.release(getattr(request, "session_hash", None))


def build_app(limits: Limits | None = None) -> gr.Blocks:
    """Build the whole app (no launch, no queue settings: app.py and tests add those)."""
    limits = limits or Limits.from_env()
    system.start_hub_check()  # answers in the background while the page loads
    session_life.sweep_session_dirs()  # what a server that stopped left behind

    keep_busy_sessions()  # whoever launches it: a session with a run or a board stays
    poll_gently()  # and its queue does not wake a thousand times a second
    with gr.Blocks(title=t("page_title", DEFAULT_LANG), delete_cache=DELETE_CACHE) as demo:
        with gr.Row(equal_height=True, elem_id="header"):
            intro = gr.Markdown(elem_id="intro")
            # tolerate() below: a value outside its choices (an API caller's "xx") is the default
            # language, so every handler answers in one line, not with gradio's HTTP 500.
            lang = gr.Radio(
                LANG_CHOICES, value=DEFAULT_LANG, elem_id="lang", scale=0, min_width=200
            )
        ctx = TabContext(lang=lang, limits=limits)
        ctx.i18n(intro, value="intro")
        ctx.i18n(lang, label="lang_label")
        with gr.Tabs() as tabs:
            ctx.tabs = tabs  # presets switch to the Train tab
            for build in TABS:
                build(ctx)
        _wire_presets(ctx)
        if ctx.train is not None:
            state = ctx.train.session
            demo.load(keep_session, [state], [state], queue=False, api_visibility="undocumented")
            demo.unload(end_session)

        # The language picked survives a reload in this browser's storage. A fixed secret (a
        # language is no secret): gradio's random one made stored choices die with a restart.
        lang_store = gr.BrowserState(None, storage_key="mpdemo-lang", secret="mpdemo-lang")

        # Not gr.I18n: it follows the browser's locale, which the handlers cannot see, so labels
        # and the text they render could disagree. One language per page, re-set on change.
        def relabel(lg: str) -> list[Value]:
            return [gr.update(**{p: t(k, lg) for p, k in kv.items()}) for _, kv in ctx.registered]

        # A switch is one event (hooks `alone` aside), as the load is: gradio's page sends one
        # trigger's events one after another, each costing a pass over the whole page.
        hook = (relabel, [], [c for c, _ in ctx.registered], False)
        keep = (lambda lg: lg, [], [lang_store], False)  # the hooks get it normalised
        _wire_hooks(lang.change, [hook, *ctx.language_hooks, keep], lang)
        loaded = demo.load(
            detect_language, [lang_store], [lang], queue=False, api_visibility="undocumented"
        )
        _wire_hooks(loaded.then, ctx.load_hooks, lang)
        _progress_nowhere(demo, gr.State(None))
    tolerate(demo)  # a number, slider or choice sent as junk is its own value (tolerant.py)
    check_special_args(demo)  # a handler that asks for the request and would get None: stop
    return demo


def _progress_nowhere(demo: gr.Blocks, sink: gr.State) -> None:
    """Events that show no progress report their status to `sink`, an undrawn State: gradio 6.31's
    page copies every component an event ever reported to (tabs and their children) on each
    status message (bench/page.py: a language switch 1.56 -> 0.7 CPU-s of chromium, 2-core EPYC)."""
    for fn in demo.fns.values():
        if fn.show_progress == "hidden" and not fn.show_progress_on:
            fn.show_progress_on = [sink]


def run_app() -> None:
    """`python app.py`: serve until Ctrl-C or SIGTERM, then exit (130 / 143 mid-run, 0 idle)."""
    log_setup("INFO")  # a Space's logs show each run's start, end and any failure's first line
    demo = build_app().queue(**queue_options())
    exit_now(serve(demo, **launch_options()))
