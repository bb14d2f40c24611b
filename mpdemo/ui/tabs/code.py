"""The Code tab: the loop mpdemo runs against the course's listing, for a run of this page or
the Train tab's settings, each line that differs explained by the backend's own comments."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import gradio as gr

from ...config import Limits, RunConfig
from ...messages import MpdemoError
from ...teach import listing as L
from ..context import QUIET, Frame, TabContext, Value
from ..i18n import error_text, norm_lang, t
from ..text import code_text, esc
from ..train.controls import RUN_NAMES
from ..train.inputs import check_inputs
from ..train.session import Session

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
    """The locale key of the source's English comment (an edited one has no stale translation)."""
    return "code_why_" + hashlib.sha1(english.encode("utf-8")).hexdigest()[:8]


def why_text(english: str, lang: str) -> str:
    """An explanation in `lang`; the source's own English where no translation exists."""
    key = why_key(english)
    text = t(key, lang)
    return english if text == key else text


# A code-run value that names the Train tab's settings rather than a run: "form:torch · bf16".
FORM_PREFIX = "form:"


@dataclass(frozen=True)
class CodeEntry:
    """One choice of the Code tab's run picker: a run of this page, or the Train tab's settings."""

    value: str  # the radio's value: the run's label, or FORM_PREFIX + label
    cfg: RunConfig
    ran: bool  # a run of this page (its own config), not the Train tab's current settings


def page_runs(session: Session | None) -> list[RunConfig]:
    """The page's runs that started (finished, restored, or running), each with its own config;
    a run still waiting has not run, so the Train tab's settings stand for it."""
    if session is None:
        return []
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
    """The picked entry, or its counterpart on the side `prefer` names: "form" (the Train tab's
    settings changed), "run" (the runs changed) or None (keep the pick); else the first in
    mixed precision."""
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
    mixed = [e for e in side if e.cfg.precision != "fp32"]
    return (mixed or side or [None])[0]


def _numbers(lst: L.Listing) -> dict[str, str]:
    """Each explanation's footnote number: the lines shown first, then the folded ones."""
    order = [*lst.shown_changes(), *lst.folded_changes()]
    return {why: str(i) for i, why in enumerate(order, start=1)}


def listing_html(lst: L.Listing, lang: str) -> str:
    """The loop as it runs, without comments: lines that differ from the course highlighted and
    numbered (mpdemo's own grey, lettered); mpdemo's own arguments of a call folded."""
    numbers = _numbers(lst)
    letters = {why: chr(ord("a") + i) for i, why in enumerate(lst.mpdemo_lines())}
    folded = sum(1 for ln in lst.lines if ln.fold == "in" and ln.kind != "neutral")
    rows, last, in_fold = [], None, False
    for ln in lst.lines:
        if ln.fold == "start" and not in_fold:
            # A comment line of its own, so the listing copied with the fold open is Python.
            title = esc(t("code_fold_title", lang, n=folded))
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
    """Why the loop differs from the course's, then what mpdemo's own lines do (from the source)."""
    numbers = _numbers(lst)
    out = [f"#### {t('code_changes_title', lang)}"]
    out += [f"{numbers[w]}. {why_text(w, lang)}" for w in lst.shown_changes()]
    # The folded arguments' notes fold too (the Trainer's listing has 27 notes).
    folded = lst.folded_changes()
    if folded:
        title = t("code_fold_notes", lang, n=len(folded), why=why_text(lst.fold_why or "", lang))
        out.append(f"\n<details><summary>{esc(title)}</summary>\n")
        out += [f"{numbers[w]}. {why_text(w, lang)}" for w in folded]
        out.append("\n</details>\n")
    own = [
        f"- **{chr(ord('a') + i)}** · {why_text(w, lang)}" for i, w in enumerate(lst.mpdemo_lines())
    ]
    if lst.removed:  # course lines this loop has no counterpart for
        own += [f"\n**{t('code_removed_title', lang)}**\n"]
        own += [f"- `{line.strip()}`" for line in lst.removed]
    out.append(f"<details><summary>{t('code_mpdemo_title', lang)}</summary>\n")
    out += [*own, "\n</details>"]
    return "\n".join(out)


def settings_md(cfg: RunConfig, device: str, lang: str, ran: bool = False) -> str:
    """The settings this listing was filled in with: a run's own, or the Train tab's."""
    shown = {**{k: getattr(cfg, k) for k in CODE_SETTINGS}, "device": device}
    # A visitor's model or dataset name stays text, whatever backtick or newline it holds.
    items = " · ".join(code_text(f"{k}={v}") for k, v in shown.items())
    key = "code_settings_run" if ran else "code_settings"
    return t(key, lang, run=code_text(cfg.label), settings=items)


def code_view(
    lang: str,
    values: Frame,
    current: str | None = None,
    limits: Limits | None = None,
    runs: list[RunConfig] | None = None,
    prefer: str | None = None,
) -> Frame:
    """Every output by name ("picked": the value to remember): this page's `runs`, each with its
    own config, then the Train tab's grid from `values` where it differs (checked as Train does)."""
    runs = list(runs or [])
    try:
        form, form_error = check_inputs(values, limits), None
    except MpdemoError as err:
        form, form_error = [], err
    entries = code_entries(runs, form)
    entry = choose_entry(entries, current, prefer)
    choices = [
        (e.cfg.label if e.ran else t("code_run_form", lang, label=e.cfg.label), e.value)
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
        bad = t("code_bad_settings", lang, error=error_text(error, lang)) if error else ""
        empty = dict.fromkeys(["listing", "course", "changes"], "")
        script = "# " + bad if bad else ""
        run = gr.update(choices=choices, value=None)
        return {"run": run, "settings": bad, **empty, "script": script, "picked": None}
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
    """Code: the loop for a run of this page or the Train tab's settings, which it follows."""
    shared = ctx.train
    train = shared.controls if shared is not None else {}
    sessions = [shared.session] if shared is not None else []  # gr.State(Session): the page's runs
    runs_changed = [shared.summary, shared.script_run] if shared is not None else []
    names = [n for n in RUN_NAMES if n in train]
    code = {"language": "python", "interactive": False}
    with ctx.i18n(gr.Tab(id="code", elem_id="code-tab"), label="tab_code"):
        ctx.i18n(gr.Markdown(), value="code_intro")
        run = ctx.i18n(gr.Radio([], value=None, elem_id="code-run"), label="code_run_label")
        settings = gr.Markdown("", elem_id="code-settings")  # on load: rendering imports torch
        with gr.Row():
            with gr.Column(scale=3):
                ctx.i18n(gr.Markdown(), value="code_listing_title")
                listing = gr.HTML("", elem_id="code-listing-box")
            with gr.Column(scale=2):
                course = ctx.i18n(
                    gr.Code("", **code, buttons=["copy"], elem_id="code-course"),
                    label="code_course_label",
                )
        changes = gr.Markdown("", elem_id="code-changes")
        script = ctx.i18n(
            gr.Code("", **code, buttons=["copy", "download"], elem_id="code-ours"),
            label="code_ours_label",
        )
        # The pick, kept on the server (inside the Tab: under gr.Tabs a State is a phantom tab).
        # Only the radio's own .input reads the radio: a preset changes a dozen Train controls,
        # each event sent with the radio's old value, which gradio refuses once out of choices.
        picked = gr.State(None)
    outputs = {"run": run, "settings": settings, "listing": listing, "course": course,
               "changes": changes, "script": script, "picked": picked}  # fmt: skip

    def render(lang: str, current: str | None, prefer: str | None, *rest: Value) -> list[Value]:
        sess, vals = (rest[0], rest[1:]) if sessions else (None, rest)
        form = dict(zip(names, vals, strict=True))
        out = code_view(norm_lang(lang), form, current, ctx.limits, page_runs(sess), prefer)
        return [out[k] for k in outputs]

    def on_form(lang: str, current: str | None, *rest: Value) -> list[Value]:
        return render(lang, current, "form", *rest)

    def on_runs(lang: str, current: str | None, *rest: Value) -> list[Value]:
        return render(lang, current, "run", *rest)

    def on_pick(lang: str, current: str | None, *rest: Value) -> list[Value]:
        return render(lang, current, None, *rest)

    inputs = [picked, *sessions, *(train[n] for n in names)]
    out_list = list(outputs.values())
    for name in names:
        train[name].change(on_form, [ctx.lang, *inputs], out_list, **QUIET)
    for comp in runs_changed:
        comp.change(on_runs, [ctx.lang, *inputs], out_list, **QUIET)
    run.input(on_pick, [ctx.lang, run, *inputs[1:]], out_list, **QUIET)
    ctx.on_language(on_pick, inputs, out_list)
    ctx.on_load(on_pick, inputs, out_list, alone=True)  # its first listing takes ~0.4 s
