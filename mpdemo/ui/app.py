"""The Gradio Blocks: a header, a language switch, and one tab per builder in `TABS`.

Extension point: a teaching tab is a function `build_x_tab(ctx: TabContext) -> None` that opens
its own `gr.Tab`, registers its strings with `ctx.i18n(...)` (re-labelled when the language
changes) and, for anything richer, `ctx.on_language(...)` / `ctx.on_load(...)`. Append it to
`TABS`. Tabs reach each other's components through TabContext's typed fields (mpdemo/ui/context.py:
the Train tab publishes `ctx.train`, the Why tab `ctx.preset`; the app sets `ctx.tabs`). Publish
only what another tab reads.
Strings live in mpdemo/ui/locales/ (one file per language).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from ..config import Limits
from ..files.recorded import MAX_FILE_BYTES
from ..log import logger as log
from ..log import setup as log_setup
from . import gradio_assets, pages, system, uploads
from .context import Component, Handler, Registered, TabContext, TabHook, Value
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
from .train import session as sessions
from .train.classroom import max_threads
from .train.controls import BY_NAME, defaults
from .train.layout import build_train_tab

# The page's own CSS; gradio 6 takes it at launch(css=CSS) (app.py), not in gr.Blocks.
# #status: a refused input fails the training event, so gradio marks the status line (its
# show_progress_on) with a red "Error" badge and a clear button, centred over the line: they
# hid the middle of the message. The line says what failed itself and the toast says Error.
CSS = """
#status [data-testid="status-tracker"] .error,
#status [data-testid="status-tracker"] .clear-status { display: none; }
/* Rows that wrap instead of squeezing: at 400 px the title broke as "measure / d" beside the
   language box and the status was a column of ~50 px, one word a line, beside the buttons. */
#header, #status-row { flex-wrap: wrap; }
#intro { flex: 1 1 320px !important; min-width: min(320px, 100%) !important; }
#intro h1 { overflow-wrap: normal; word-break: normal; hyphens: manual; }
#status { flex: 1 1 300px !important; min-width: min(300px, 100%) !important; }
/* A dropdown's arrow sits over the end of its input: keep the text out from under it. */
input[role="combobox"] { padding-right: 26px !important; text-overflow: ellipsis; }
/* The summary table may use the page's width: gradio's own cap on it (about 1220 px at 1400)
   left the results column 880 px. */
.gradio-container .main.app { max-width: min(1600px, 100%) !important; }
#summary th, #summary .sizing-body td, #summary .body-cell { font-size: 13px; }
#summary th, #summary .sizing-body td { padding-left: 3px; padding-right: 3px; }
#summary th .cell-wrap { padding-left: 4px; padding-right: 4px; }
/* No number or word breaks inside itself ("1,45 / 2" read as 1.45 on a projector, "comple /
   ted"). The columns are "auto" (session_table.py): gradio measures each on its hidden sizing row,
   one line a cell, so every cell fits on one line; the warnings' fixed column wraps between
   words. gradio's own break-word (on the shown cells, which are divs, not td) broke them. */
#summary .body-cell span.text, #summary th span.text, #summary .sizing-body td {
  word-break: normal !important; overflow-wrap: normal !important; hyphens: none !important; }
/* The run's name (pinned at the left) may wrap between words, so at 400 px it leaves room for
   the figures; never narrower than "accelerate" or "weights+SR", the longest words a label has. */
#summary .sizing-body td:first-child { white-space: normal !important;
  min-width: calc(10ch + 22px); }
#lesson-info p { margin: 2px 0; }
/* At phone width the language box sits on a row of its own: across it, not 200 px wide with one
   language a line (three lines pushed Train below the first screen once a sixth lesson came). */
@media (max-width: 600px) {
  #header > .form:has(> #lang), #lang { flex: 1 1 100% !important; min-width: 100% !important; }
  /* The three languages on one row (Português alone on a second pushed Train 1 px past a
     400 x 860 first screen in Spanish once the lesson had a GPU recording). */
  #lang .wrap { gap: 6px !important; }
  #lang label { padding: 6px 8px !important; }
}
/* A phone: the status and the plots right after Train, the controls below the results (the
   loss plot began 2,638 px down, under every control); the table's columns in the width. */
@media (max-width: 700px) {
  #train-results { order: -1; }
  #lesson-info p:has(> .lesson-rec) { display: none; }
  /* The class columns in a phone's width (504 px of columns in 336 before): a narrower face,
     10 px, and no padding but a pixel; every figure stays whole (measured at 400 px). */
  #summary th, #summary .sizing-body td, #summary .body-cell, #summary span.text {
    font-size: 10px !important; font-family: Arial, Helvetica, sans-serif !important; }
  #summary th, #summary td, #summary .body-cell, #summary .cell-wrap, #summary .header-content {
    padding: 1px !important; margin: 0 !important; }
  #summary th span.text, #summary .body-cell span.text, #summary .sizing-body td {
    white-space: normal !important; }
  #summary .sizing-body td:first-child { min-width: 0; }
}
"""

# gradio's cache (uploads, and the copies of downloads it serves): every five minutes, what is
# older than twenty goes (an upload nobody's event read stayed four hours before; a download is
# written again by the next frame that changes it), and all of it when the server stops. An upload larger than a runs file may be is refused before it is stored; one address keeps at most
# uploads.UPLOADS_PER_CLIENT uploads and UPLOAD_BYTES_PER_CLIENT bytes meanwhile, the oldest deleted first.
DELETE_CACHE = (300, 20 * 60)
MAX_UPLOAD_BYTES = MAX_FILE_BYTES
# gradio keeps every tab's own copy of the page's settings (~2 MB with plots drawn) until this
# many newer tabs have come (its default is 10,000); the least recently used goes first.
STATE_SESSIONS = 400


def launch_options() -> dict[str, object]:
    """What `demo.launch(...)` takes besides the address: app.py and the tests launch with it."""
    return {
        "css": CSS,
        "max_file_size": MAX_UPLOAD_BYTES,
        "state_session_capacity": STATE_SESSIONS,
        "i18n": GRADIO_STRINGS,
        # A class's pages follow one comparison at once, each holding a worker thread while it
        # waits for events: gradio's default of 40 would leave none for Stop (classroom.py).
        "max_threads": max_threads(),
        # Raw uploads bounded per address, the oldest deleted first (mpdemo/ui/uploads.py); an
        # idle page asks for no frames (gradio 6.31's leaked timer, mpdemo/ui/gradio_assets.py);
        # which pages are still there, for the boards and their followers (mpdemo/ui/pages.py).
        "app_kwargs": {
            "middleware": uploads.middleware() + gradio_assets.middleware() + pages.middleware()
        },
    }


# gradio 6.31's screen-reader line announces `common.complete` when an event ends, a key its
# own translations lack (the English "Complete" sits under `chat`): so a screen reader read
# "common.complete". Given here, in each page language (gradio picks by the browser's locale).
GRADIO_STRINGS = gr.I18n(
    en={"common.complete": "Complete"},
    es={"common.complete": "Completado"},
    pt={"common.complete": "Concluído"},
)


Hook = tuple[Handler, list[Component], list[Component]]


TABS: list[Callable[[TabContext], None]] = [build_train_tab, *TEACH_TABS]


def _wire_presets(ctx: TabContext) -> None:
    """The Why tab's Presets menu loads its settings into the Train tab and switches to it.

    The Train tab's status says what was loaded, and, for a GPU preset on a machine without
    one, that the device fell back to auto (so the runs measure the CPU).
    """
    preset, tabs = ctx.preset, ctx.tabs
    if preset is None or ctx.train is None:
        return
    controls, status = ctx.train.controls, ctx.train.status

    names = [n for n in controls if BY_NAME[n].run]  # not the plots' view settings
    outputs = [controls[n] for n in names]
    extra = [c for c in (tabs, status) if c is not None]

    def load(lang: str, preset_id: str | None) -> list[Value]:
        values, note = preset_load(norm_lang(lang), preset_id, defaults(), system.device_choices())
        if not values:
            return [gr.skip()] * (len(outputs) + len(extra))
        out = [gr.update(value=values[n]) for n in names]
        if tabs is not None:
            out.append(gr.Tabs(selected="train"))
        if status is not None:
            out.append(note)
        return out

    preset.input(  # a person's pick only: the language switch re-sets the value too
        load,
        [ctx.lang, preset],
        outputs + extra,
        concurrency_limit=None,
        api_visibility="undocumented",
        show_progress="hidden",
    )


# Why not gr.I18n for the static labels: in gradio 6.31 it is handed to launch(i18n=...), not to
# Blocks, and the browser picks the language from its own locale (or gradio's settings panel).
# The handlers cannot see that choice, so labels and the text they render (status, tables,
# errors, plots) could disagree, and the page's language radio could not drive it. One language
# per page, from the radio: every registered label is re-set from the locale files on change.
def _relabel(registered: list[Registered]) -> Callable[[str], list[Value]]:
    def relabel(lang: str) -> list[Value]:
        lang = norm_lang(lang)
        return [
            gr.update(**{prop: t(key, lang) for prop, key in props.items()})
            for _, props in registered
        ]

    return relabel


def _wire_hooks(trigger: Handler, hooks: list[TabHook], lang: gr.Radio) -> None:
    """On `trigger`: one event for the hooks that share one, one for each hook `alone`."""
    shared = [h for h in hooks if not h[3]]
    for group in [shared, *([h] for h in hooks if h[3])]:
        if not group:
            continue
        fn, inputs, outputs = _merged(group)
        trigger(
            fn,
            [lang, *inputs],
            outputs,
            concurrency_limit=None,
            api_visibility="undocumented",
            show_progress="hidden",
        )


def _merged(hooks: list[TabHook]) -> Hook:
    """Many hooks as one: (fn(lang, *inputs), inputs, outputs), each component listed once.

    A component two hooks update gets one update with both's properties (the later hook's
    win where both set one). A hook that raises leaves its outputs as they were (logged), not
    the other hooks' too.
    """
    inputs: list[Component] = []
    outputs: list[Component] = []
    plan: list[tuple[Handler, list[int], list[Component], list[int]]] = []

    def place(component: Component, into: list[Component]) -> int:
        for i, c in enumerate(into):
            if c is component:
                return i
        into.append(component)
        return len(into) - 1

    for fn, ins, outs, _ in hooks:
        at = [place(c, inputs) for c in ins]
        plan.append((fn, at, outs, [place(c, outputs) for c in outs]))

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


LANG_STORAGE_KEY = "mpdemo-lang"


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


def keep_session(session: sessions.Session, request: gr.Request) -> sessions.Session:
    """On page load: the tab's session becomes an event output, so gradio expires it (and runs
    its delete_callback) after the tab closes; a State never output is never expired."""
    return sessions.attach(session, getattr(request, "session_hash", None))


def end_session(request: gr.Request) -> None:
    """The tab closed (or reloaded): free its session now, not an hour later."""
    sessions.release(getattr(request, "session_hash", None))


def _wire_session(demo: gr.Blocks, ctx: TabContext) -> None:
    if ctx.train is None:
        return
    state = ctx.train.session
    demo.load(keep_session, [state], [state], queue=False, api_visibility="undocumented")
    demo.unload(end_session)


class LangRadio(gr.Radio):
    """The language picker: a value outside its choices (an API caller's "xx", a list) is the
    default language, not gradio's English "Value ... not in the list of choices" (an HTTP 500
    at the events off the queue, /stop and /publish_board), so every handler answers in one line."""

    is_template = True  # the page draws it as gradio's own Radio

    def preprocess(self, payload: object) -> str:
        """A supported language code, whatever was sent."""
        return norm_lang(payload)


def build_app(limits: Limits | None = None) -> gr.Blocks:
    """Build the whole app (no launch, no queue settings: app.py and tests add those)."""
    limits = limits or Limits.from_env()
    system.start_hub_check()  # answers in the background while the page loads
    sessions.sweep_session_dirs()  # what a server that stopped left behind

    keep_busy_sessions()  # whoever launches it: a session with a run or a board stays
    poll_gently()  # and its queue does not wake a thousand times a second
    with gr.Blocks(title=t("page_title", DEFAULT_LANG), delete_cache=DELETE_CACHE) as demo:
        with gr.Row(equal_height=True, elem_id="header"):
            intro = gr.Markdown(t("intro", DEFAULT_LANG), elem_id="intro")
            lang = LangRadio(
                choices=LANG_CHOICES,
                value=DEFAULT_LANG,
                label=t("lang_label", DEFAULT_LANG),
                elem_id="lang",
                scale=0,
                min_width=200,
            )
        ctx = TabContext(lang=lang, limits=limits)
        ctx.i18n(intro, value="intro")
        ctx.i18n(lang, label="lang_label")
        with gr.Tabs() as tabs:
            ctx.tabs = tabs  # presets switch to the Train tab
            for build in TABS:
                build(ctx)
        _wire_presets(ctx)
        _wire_session(demo, ctx)

        # The language picked survives a reload: this browser keeps it (its local storage).
        # A fixed secret: gradio's default is random per process, so a restart (a Space's push
        # or sleep) made every stored choice unreadable and the page opened in English again.
        # A language is no secret.
        lang_store = gr.BrowserState(None, storage_key=LANG_STORAGE_KEY, secret="mpdemo-lang")
        # A switch is one event: the labels, every tab's language hook and the stored choice
        # (hooks `alone` aside), as every load hook is one. gradio 6.31's page sends the events
        # of one trigger one after another, each answered and drawn before the next goes, and
        # each event's status messages make it snapshot every component again: a switch cost
        # chromium a round trip and a pass over the page for each of ~10 events.
        relabel = (_relabel(ctx.registered), [], [c for c, _ in ctx.registered], False)
        keep = (lambda lg: lg, [], [lang_store], False)  # the hooks get it normalised
        _wire_hooks(lang.change, [relabel, *ctx.language_hooks, keep], lang)
        loaded = demo.load(
            detect_language, [lang_store], [lang], queue=False, api_visibility="undocumented"
        )
        _wire_hooks(loaded.then, ctx.load_hooks, lang)
        _progress_nowhere(demo, gr.State(None))
    tolerate(demo)  # a number, slider or choice sent as junk is its own value (tolerant.py)
    check_special_args(demo)  # a handler that asks for the request and would get None: stop
    return demo


def _progress_nowhere(demo: gr.Blocks, sink: gr.State) -> None:
    """Events that show no progress report their status to `sink`, a State, not to their outputs.

    gradio 6.31's page keeps a loading status for every component an event has ever reported to
    and, on each status message of any event (every frame a training streams), copies the
    properties of each of those components and of all their children (update_loading_stati_state
    in Blocks.svelte's dependency manager, then AppTree.update_state). The language switch
    relabels the tabs and the lesson pick selects one: from then on each frame copied the whole
    page. A State is not drawn, so its status costs nothing and shows nowhere, as "hidden" asks.
    `python bench/page.py --rounds 2` twice on a 2-core EPYC, before -> after: a language
    switch 1.56-1.59 -> 0.67-0.75 CPU-s of chromium, a streamed comparison 0.25 -> 0.18 a second.
    """
    for fn in demo.fns.values():
        if fn.show_progress == "hidden" and not fn.show_progress_on:
            fn.show_progress_on = [sink]


def run_app() -> None:
    """Open the page and serve it until Ctrl-C or SIGTERM, then exit (130 / 143 mid-run, 0 idle).

    What `python app.py` and `python -m mpdemo app` do; GRADIO_SERVER_NAME / GRADIO_SERVER_PORT
    pick the address.
    """
    log_setup("INFO")  # a Space's logs show each run's start, end and any failure's first line
    keep_busy_sessions()  # a session with a run or a board is never the one gradio forgets
    demo = build_app().queue(**queue_options())
    # The page's CSS and the upload cap; Ctrl-C / SIGTERM stop the runs.
    exit_now(serve(demo, **launch_options()))
