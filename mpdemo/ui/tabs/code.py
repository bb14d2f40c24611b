"""The Code tab: the loop mpdemo runs, against the course's listing, for a run of this page or
for the Train tab's settings, each line that differs explained from the backend's own comments.

Handlers are plain functions of (lang, *inputs) so tests call them directly; the listing is
mpdemo.teach.listing's, read from each backend's source.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import gradio as gr

from ...config import Limits, RunConfig
from ...messages import MpdemoError
from ...teach import listing as L
from ..context import Frame, TabContext, Value
from ..i18n import DEFAULT_LANG, error_text, norm_lang
from ..text import code_text
from ..train.controls import RUN_NAMES
from ..train.inputs import check_inputs
from ..train.session import Session
from .common import esc, tt

CODE_STYLES = {
    "changed": "background:#fef3c7;color:#713f12",
    "new": "background:#dcfce7;color:#14532d",
    "mpdemo": "background:#e5e7eb;color:#4b5563",
}
CODE_PRE = (
    "margin:0;padding:8px 0;background:#f9fafb;color:#1f2937;border:1px solid #e5e7eb;"
    "border-radius:6px;font-size:13px;line-height:1.45;overflow-x:auto"
)
# The fold's line in the listing reads as a comment (grey, italic) that opens on a click.
FOLD_SUMMARY = "cursor:pointer;padding:0 10px;color:#6b7280;font-style:italic"
CODE_SETTINGS = ("model", "dataset", "device", "steps", "batch_size", "lr", "seed",
                 "loss_scaling", "init_scale", "growth_interval")  # fmt: skip


def why_key(english: str) -> str:
    """The locale key of a listing's explanation: a digest of the source's English comment.

    The comment in the backend's source is the explanation; locale files hold translations
    under this key, so an edited comment has no stale translation (tests ask for new ones).
    """
    return "code_why_" + hashlib.sha1(english.encode("utf-8")).hexdigest()[:8]


def why_text(english: str, lang: str) -> str:
    """An explanation in `lang`; the source's own English where no translation exists."""
    key = why_key(english)
    text = tt(key, lang)
    return english if text == key else text


def pick_run(configs: list[RunConfig], current: str | None) -> RunConfig:
    """The grid's run the Code tab shows: the one picked, else the first in mixed precision."""
    for cfg in configs:
        if cfg.label == current:
            return cfg
    mixed = [c for c in configs if c.precision != "fp32"]
    return (mixed or configs)[0]


# A code-run value that names the Train tab's settings rather than a run: "form:torch · bf16".
FORM_PREFIX = "form:"


@dataclass(frozen=True)
class CodeEntry:
    """One choice of the Code tab's run picker: a run of this page, or the Train tab's settings."""

    value: str  # the radio's value: the run's label, or FORM_PREFIX + label
    cfg: RunConfig
    ran: bool  # a run of this page (its own config), not the Train tab's current settings


def page_runs(session: Session | None) -> list[RunConfig]:
    """The page's runs that started (finished, restored after a reload, or running), each with
    its own config as it ran; a run of the grid still waiting has not run, so the Train tab's
    settings stand for it."""
    if session is None:
        return []
    # The running runs live in the session's fold (session.state.fold.current, by run id).
    started = [*session.runs, *session.state.fold.current.values()]
    out: dict[str, RunConfig] = {}
    for run in started:
        data = run.get("config") if isinstance(run, dict) else None
        if isinstance(data, dict):
            try:
                cfg = RunConfig.from_dict(data)
            except (TypeError, ValueError):  # a config this version cannot read: no code for it
                continue
            out.setdefault(cfg.label, cfg)
    return list(out.values())


def code_entries(runs: list[RunConfig], form: list[RunConfig]) -> list[CodeEntry]:
    """This page's runs (their own configs), then the Train tab's grid where it differs."""
    out = [CodeEntry(c.label, c, True) for c in runs]
    out += [CodeEntry(FORM_PREFIX + c.label, c, False) for c in form if c not in runs]
    return out


def choose_entry(
    entries: list[CodeEntry], current: str | None, prefer: str | None
) -> CodeEntry | None:
    """The entry to show: the picked one, or its counterpart on the side `prefer` names.

    prefer="form": the Train tab's settings just changed, show them; "run": the runs changed
    (a training, a reload, Clear runs), show the run; None: keep the pick as it is.
    """
    by_value = {e.value: e for e in entries}
    label = (current or "").removeprefix(FORM_PREFIX)
    order = {
        "form": [FORM_PREFIX + label, label],
        "run": [label, FORM_PREFIX + label],
    }.get(prefer or "", [current or "", label, FORM_PREFIX + label])
    for value in order:
        if value in by_value:
            return by_value[value]
    side = [e for e in entries if e.ran == (prefer != "form")] or entries
    if not side:
        return None
    cfg = pick_run([e.cfg for e in side], None)
    return next(e for e in side if e.cfg is cfg)


def _numbers(lst: L.Listing) -> dict[str, str]:
    """Each explanation's footnote number: the lines shown first, then the folded ones."""
    order = [*lst.shown_changes(), *lst.folded_changes()]
    return {why: str(i) for i, why in enumerate(order, start=1)}


def listing_html(lst: L.Listing, lang: str) -> str:
    """The loop as it runs, comments taken out: lines that differ from the course highlighted,
    numbered like the explanations below (mpdemo's own lines grey, lettered). mpdemo's own
    arguments of a call (the Trainer's) are folded under the course's, one click away."""
    numbers = _numbers(lst)
    letters = {why: chr(ord("a") + i) for i, why in enumerate(lst.mpdemo_lines())}
    folded = sum(1 for ln in lst.lines if ln.fold == "in" and ln.kind != "neutral")
    rows, last, in_fold = [], None, False
    for ln in lst.lines:
        if ln.fold == "start" and not in_fold:
            # A comment line of its own, so the listing copied with the fold open is Python.
            title = esc(tt("code_fold_title", lang, n=folded))
            rows.append(
                f'<details class="mp-fold"><summary style="{FOLD_SUMMARY}"># {title}</summary>'
            )
            in_fold = True
        elif in_fold and ln.fold != "in" and ln.fold != "start":
            rows.append("</details>")
            in_fold = False
        if ln.kind == "neutral" and not ln.code.strip() and ln.text.strip():
            continue  # a comment line: its words are in the list below
        mark = (numbers if ln.kind != "mpdemo" else letters).get(ln.why or "")
        style = CODE_STYLES.get(ln.kind, "")
        sup = ""
        if mark and (ln.why, ln.kind) != last:  # once per run of lines with one explanation
            sup = f'<sup style="font-weight:700;padding-left:6px">{mark}</sup>'
        last = (ln.why, ln.kind) if mark else None
        rows.append(
            f'<span class="mp-ln" data-kind="{ln.kind}" style="display:block;padding:0 10px;'
            f'{style}">{esc(ln.code.rstrip()) or " "}{sup}</span>'
        )
    if in_fold:
        rows.append("</details>")
    return (
        f'<div class="mp-listing" id="code-listing" data-backend="{lst.cfg.backend}" '
        f'data-precision="{lst.cfg.precision}" data-steps="{lst.cfg.steps}">'
        f'<pre style="{CODE_PRE}"><code>{"".join(rows)}</code></pre></div>'
    )


def changes_md(lst: L.Listing, lang: str) -> str:
    """Why the loop differs from the course's, then what mpdemo's own lines do: both read from
    the comments in the backend's source (mpdemo.teach.course), in the order of the lines."""
    numbers = _numbers(lst)
    out = [f"#### {tt('code_changes_title', lang)}"]
    out += [f"{numbers[w]}. {why_text(w, lang)}" for w in lst.shown_changes()]
    # The folded arguments' notes fold too: the Trainer's slide has three arguments, and its
    # listing grew to 22 highlighted ones and 27 notes.
    folded = lst.folded_changes()
    if folded:
        title = tt("code_fold_notes", lang, n=len(folded), why=why_text(lst.fold_why or "", lang))
        out.append(f"\n<details><summary>{esc(title)}</summary>\n")
        out += [f"{numbers[w]}. {why_text(w, lang)}" for w in folded]
        out.append("\n</details>\n")
    # mpdemo's own lines (events, timing, its data) and the course lines it drops are folded.
    own = [
        f"- **{chr(ord('a') + i)}** · {why_text(w, lang)}" for i, w in enumerate(lst.mpdemo_lines())
    ]
    if lst.removed:  # course lines this loop has no counterpart for
        own += [f"\n**{tt('code_removed_title', lang)}**\n"]
        own += [f"- `{line.strip()}`" for line in lst.removed]
    out.append(f"<details><summary>{tt('code_mpdemo_title', lang)}</summary>\n")
    out += [*own, "\n</details>"]
    return "\n".join(out)


def settings_md(cfg: RunConfig, device: str, lang: str, ran: bool = False) -> str:
    """The settings this listing was filled in with: a run's own, or the Train tab's."""
    shown = {**{k: getattr(cfg, k) for k in CODE_SETTINGS}, "device": device}
    # A visitor's dataset or model name, trained by a teacher, shows in a follower's page: as
    # text, whatever backtick or newline it holds (a backtick span would end at the first).
    items = " · ".join(code_text(f"{k}={v}") for k, v in shown.items())
    key = "code_settings_run" if ran else "code_settings"
    return tt(key, lang, run=code_text(cfg.label), settings=items)


def code_view(
    lang: str,
    values: Frame,
    current: str | None = None,
    limits: Limits | None = None,
    runs: list[RunConfig] | None = None,
    prefer: str | None = None,
) -> Frame:
    """The Code tab: every output, by name ("picked" is the value to remember).

    `runs` are this page's runs (page_runs: finished, running, or back after a reload); each
    shows its own config, as the Train tab's "Python script" does. The Train tab's values (by
    control name) add its grid (check_inputs: what Train would refuse is refused here too)
    wherever it differs from the runs, titled as not run yet.
    """
    runs = list(runs or [])
    try:
        form, form_error = check_inputs(values, limits), None
    except MpdemoError as err:
        form, form_error = [], err
    entries = code_entries(runs, form)
    entry = choose_entry(entries, current, prefer)
    choices = [
        (e.cfg.label if e.ran else tt("code_run_form", lang, label=e.cfg.label), e.value)
        for e in entries
    ]
    if form_error is not None and (prefer == "form" or entry is None):
        entry = None  # the settings just typed are refused: say why, not an older run's code
    error = form_error
    if entry is not None:
        try:
            lst = L.listing(entry.cfg)
        except MpdemoError as err:  # e.g. a restored run's device is not on this machine
            entry, error = None, err
    if entry is None:
        bad = tt("code_bad_settings", lang, error=error_text(error, lang)) if error else ""
        return {
            "run": gr.update(choices=choices, value=None),
            "settings": bad,
            "listing": "",
            "course": "",
            "changes": "",
            "script": "# " + bad if bad else "",
            "picked": None,
        }
    return {
        "run": gr.update(choices=choices, value=entry.value),
        "settings": settings_md(entry.cfg, lst.device, lang, entry.ran),
        "listing": listing_html(lst, lang),
        "course": lst.course,
        "changes": changes_md(lst, lang),
        "script": L.script_of(lst),
        "picked": entry.value,
    }


def build_code_tab(ctx: TabContext) -> None:
    """Code: the loop mpdemo runs, against the course's listing, for a run or for the Train tab.

    The run picker lists this page's runs (the Train tab's session: each shows its own config)
    and the Train tab's grid where it differs from them; every run control's change shows its
    settings (ctx.train.controls), and a new table of runs shows the run again.
    """
    lang0 = DEFAULT_LANG
    limits = ctx.limits
    shared = ctx.train
    train = shared.controls if shared is not None else {}
    session = shared.session if shared is not None else None  # gr.State(Session): this page's runs
    # Components whose change means the runs changed: a grid started or ended a run, a reload
    # restored runs, Clear runs.
    runs_changed = [shared.summary, shared.script_run] if shared is not None else []
    names = [n for n in RUN_NAMES if n in train]
    with ctx.i18n(gr.Tab(tt("tab_code", lang0), id="code", elem_id="code-tab"), label="tab_code"):
        ctx.i18n(gr.Markdown(tt("code_intro", lang0)), value="code_intro")
        run = ctx.i18n(
            gr.Radio([], value=None, label=tt("code_run_label", lang0), elem_id="code-run"),
            label="code_run_label",
        )
        # Filled once the page has loaded: rendering imports torch, which the app's start
        # leaves for later.
        settings = gr.Markdown("", elem_id="code-settings")
        with gr.Row():
            with gr.Column(scale=3):
                ctx.i18n(gr.Markdown(tt("code_listing_title", lang0)), value="code_listing_title")
                listing = gr.HTML("", elem_id="code-listing-box")
            with gr.Column(scale=2):
                course = ctx.i18n(
                    gr.Code("", language="python", label=tt("code_course_label", lang0),
                            interactive=False, buttons=["copy"], elem_id="code-course"),
                    label="code_course_label",
                )  # fmt: skip
        changes = gr.Markdown("", elem_id="code-changes")
        script = ctx.i18n(
            gr.Code("", language="python", label=tt("code_ours_label", lang0),
                    interactive=False, buttons=["copy", "download"], elem_id="code-ours"),
            label="code_ours_label",
        )  # fmt: skip
        # The pick, kept on the server (inside the Tab: under gr.Tabs it would be a phantom
        # tab). Only the radio's own .input reads the radio: a Train-tab change (a preset sets
        # a dozen controls at once) fires one event per control, all sent with the radio's old
        # value, and gradio refuses a value the first answer took out of the choices.
        picked = gr.State(None)
    outputs = {"run": run, "settings": settings, "listing": listing, "course": course,
               "changes": changes, "script": script, "picked": picked}  # fmt: skip
    sessions = [session] if session is not None else []

    def render(lang: str, current: str | None, prefer: str | None, *rest: Value) -> list[Value]:
        sess, vals = (rest[0], rest[1:]) if sessions else (None, rest)
        runs = page_runs(sess)
        out = code_view(
            norm_lang(lang), dict(zip(names, vals, strict=True)), current, limits, runs, prefer
        )
        return [out[k] for k in outputs]

    def on_form(lang: str, current: str | None, *rest: Value) -> list[Value]:
        return render(lang, current, "form", *rest)

    def on_runs(lang: str, current: str | None, *rest: Value) -> list[Value]:
        return render(lang, current, "run", *rest)

    def on_pick(lang: str, current: str | None, *rest: Value) -> list[Value]:
        return render(lang, current, None, *rest)

    inputs = [picked, *sessions, *(train[n] for n in names)]
    out_list = list(outputs.values())
    quiet = {"concurrency_limit": None, "api_visibility": "undocumented", "show_progress": "hidden"}
    for name in names:
        train[name].change(on_form, [ctx.lang, *inputs], out_list, **quiet)
    for comp in runs_changed:
        comp.change(on_runs, [ctx.lang, *inputs], out_list, **quiet)
    run.input(on_pick, [ctx.lang, run, *inputs[1:]], out_list, **quiet)
    ctx.on_language(on_pick, inputs, out_list)
    ctx.on_load(on_pick, inputs, out_list, alone=True)  # its first listing takes ~0.4 s
