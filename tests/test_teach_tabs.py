"""Teaching tabs: strings in every language, the finfo table, presets, and handlers called directly."""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

import gradio as gr
import pytest
import torch

from mpdemo.config import Limits, RunConfig
from mpdemo.registry import BACKENDS, PRECISIONS
from mpdemo.ui import app, i18n
from mpdemo.ui.i18n import t
from mpdemo.ui.tabs import TEACH_TABS
from mpdemo.ui.tabs import code as C
from mpdemo.ui.tabs import formats as F
from mpdemo.ui.tabs import underflow as U
from mpdemo.ui.tabs import why as W
from mpdemo.ui.train import controls

# The teaching tabs' strings in the default language (every locale file has the same keys and
# placeholders, and says which keys stay as in English: tests/test_locales.py).
TEACH_EN = i18n.LOCALES[i18n.DEFAULT_LANG].sections["teach"]
LANGS = i18n.LANGS


@pytest.fixture(scope="module")
def built() -> gr.Blocks:
    """The whole app, built once for the tests that only read it."""
    return app.build_app()


def test_app_builds_with_the_teaching_tabs(built) -> None:
    demo = built
    ids = {getattr(b, "elem_id", None) for b in demo.blocks.values()}
    for elem in ("formats-tab", "underflow-tab", "code-tab", "why-tab", "nf-table", "uf-scale",
                 "code-ours", "preset", "start-btn"):  # fmt: skip
        assert elem in ids
    # Anything but a Tab directly under gr.Tabs (e.g. a gr.State) shows up as a phantom tab.
    for tabs in (b for b in demo.blocks.values() if isinstance(b, gr.Tabs)):
        assert all(isinstance(c, gr.Tab) for c in tabs.children)


def test_no_event_reports_its_progress_to_a_tab_or_a_box_of_components(built) -> None:
    # gradio 6.31's page copies every component an event ever reported its status to, with
    # all its children, on each status message of any event (each streamed frame). The language
    # switch outputs every tab; reported there, every later frame copied the whole page.
    config = built.get_config_file()
    kinds = {c["id"]: c["type"] for c in config["components"]}
    boxes = {"tabs", "tabitem", "accordion", "column", "row", "group", "form", "blocks"}
    sinks = set()
    for dep in config["dependencies"]:
        targets = dep["show_progress_on"] or dep["outputs"]
        assert not [t for t in targets if kinds[t] in boxes], (dep["id"], targets)
        if dep["show_progress"] == "hidden":
            sinks.update(targets)
    assert [kinds[t] for t in sinks] == ["state"]  # one State: never drawn, never copied


def test_language_hooks_return_one_update_per_output() -> None:
    with gr.Blocks():
        lang = gr.Radio(list(i18n.LANGS), value=i18n.DEFAULT_LANG)
        ctx = app.TabContext(lang=lang, limits=Limits())
        for build in TEACH_TABS:
            build(ctx)
    assert ctx.preset is not None  # the Why tab's menu, which the app wires to the Train tab
    for key in (k for _, props in ctx.registered for k in props.values()):
        assert key in i18n.LOCALES[i18n.DEFAULT_LANG].strings, key
    assert ctx.language_hooks
    for fn, inputs, outputs, _ in ctx.language_hooks:
        for code in LANGS:
            out = fn(code, *[c.value for c in inputs])
            assert len(out) == len(outputs)


def _number(cell: str) -> float:
    return float(str(cell).split(" ")[0])


@pytest.mark.parametrize("lang", LANGS)
def test_formats_table_matches_finfo(lang: str) -> None:
    frame = F.format_table_frame(lang)
    assert list(frame.columns) == [t(k, lang) for _, k in F.NF_TABLE_COLUMNS]
    dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16,
              "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}  # fmt: skip
    assert [row[0] for row in frame.itertuples(index=False)] == list(dtypes)
    for row in frame.itertuples(index=False):
        fi = torch.finfo(dtypes[row[0]])
        assert row[1] == fi.bits
        assert _number(row[4]) == pytest.approx(fi.max, rel=1e-6)
        assert _number(row[5]) == pytest.approx(fi.smallest_normal, rel=1e-6)
        assert _number(row[6]) == pytest.approx(fi.smallest_normal * fi.eps, rel=1e-6)
        assert _number(row[7]) == pytest.approx(fi.eps, rel=1e-6)
    assert frame.iloc[1, 6].endswith("= 2^-24")  # fp16's smallest subnormal, shown as a power


@pytest.mark.parametrize("lang", LANGS)
def test_formats_handlers(lang: str) -> None:
    page = F.formats_html(lang, "0.1")
    assert page.count('class="mp-bits"') == 5  # fp32, fp16, bf16, e4m3, e5m2
    # fp16's 0.1: sign 0, exponent 01011, mantissa 1001100110 (checked in test_formats too)
    assert (
        "".join(re.findall(r'mp-bit mp-\w+"[^>]*>([01])<', page)).find("0" + "01011" + "1001100110")
        >= 0
    )
    assert t("nf_col_stored", lang) in page
    assert t("nf_bad_input", lang) in F.formats_html(lang, "abc")
    over = F.formats_html(lang, "70000")
    assert t("nf_overflowed", lang) in over
    for k, cat in ((0, "zero"), (8, "subnormal"), (16, "normal"), (44, "inf")):
        assert f'data-category="{cat}"' in F.scale_html(lang, "1e-8", k)
    window = F.scale_html(lang, "1e-8", 16)
    assert "2^43" in window  # 1e-8 * 2^43 > 65504: where overflow starts


def _wired(demo: gr.Blocks, trigger: Any, output: Any) -> Any:
    """The function an event of `trigger` runs to update `output` (None when none is wired)."""
    for fn in demo.fns.values():
        if any(t[0] == trigger._id for t in fn.targets) and output in fn.outputs:
            return fn
    return None


@pytest.mark.parametrize("lang", LANGS)
def test_code_tab_follows_the_train_tab(lang: str) -> None:
    demo = app.build_app()
    ctx_outputs = {b.elem_id: b for b in demo.blocks.values() if getattr(b, "elem_id", None)}
    train = {c.name: ctx_outputs[c.elem_id] for c in controls.CONTROLS}
    listing = ctx_outputs["code-listing-box"]
    for name in ("model", "backends", "precisions", "steps", "batch_size", "loss_scaling"):
        assert _wired(demo, train[name], listing) is not None, f"{name} does not reach the Code tab"
    fn = _wired(demo, train["steps"], listing)
    changed = {"steps": 7, "batch_size": 12, "backends": ["accelerate", "trainer"],
               "precisions": ["fp32", "bf16"], "model": "tiny-gpt2", "loss_scaling": False}  # fmt: skip
    by_id = {c._id: name for name, c in train.items()}
    args = []
    for comp in fn.inputs:
        if comp is demo_lang(demo):
            args.append(lang)
        elif comp._id in by_id:
            args.append(changed.get(by_id[comp._id], comp.value))
        else:  # the Code tab's own run picker: nothing picked yet
            args.append(None)
    out = dict(zip([o.elem_id for o in fn.outputs], fn.fn(*args), strict=True))
    # The first mixed-precision run of the Train tab's grid, with its settings filled in, and
    # named as settings that have not run (no run of this page has them).
    assert out["code-run"]["value"] == C.FORM_PREFIX + "accelerate · bf16"
    labels = ["accelerate · fp32", "accelerate · bf16", "trainer · fp32", "trainer · bf16"]
    assert out["code-run"]["choices"] == [
        (t("code_run_form", lang, label=lab), C.FORM_PREFIX + lab) for lab in labels
    ]
    title = t("code_settings", lang, run="<code>accelerate · bf16</code>", settings="")
    assert out["code-settings"].startswith(title)
    from mpdemo.ui.text import code_text

    for item in ("steps=7", "batch_size=12", "model=tiny-gpt2", "loss_scaling=False"):
        assert code_text(item) in out["code-settings"]
    assert 'data-backend="accelerate"' in out["code-listing-box"]
    assert 'data-precision="bf16" data-steps="7"' in out["code-listing-box"]
    assert 'mixed_precision="bf16"' in out["code-ours"] and "steps=7," in out["code-ours"]
    assert "enabled=False" in out["code-ours"]  # loss scaling off reaches GradScalerKwargs
    assert out["code-course"].startswith('accelerator = Accelerator(mixed_precision="fp16")')
    assert t("code_changes_title", lang) in out["code-changes"]
    # Another run of the grid picked on the Code tab (kept in a State: a Train-tab change never
    # sends the radio's own, possibly stale, value): that run, same settings.
    picked = next(i for i, c in enumerate(fn.inputs) if isinstance(c, gr.State) and
                  c in fn.outputs)  # fmt: skip
    args[picked] = C.FORM_PREFIX + "trainer · bf16"
    out = dict(zip([o.elem_id for o in fn.outputs], fn.fn(*args), strict=True))
    assert "bf16=True," in out["code-ours"] and "max_steps=7," in out["code-ours"]
    assert "compute_metrics=None" in out["code-ours"]  # tiny-gpt2 is a language model


def demo_lang(demo: gr.Blocks) -> Any:
    """The page's language radio."""
    return next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "lang")


@pytest.mark.parametrize("lang", LANGS)
def test_code_view_explains_in_the_page_language(lang: str) -> None:
    from mpdemo.teach import listing as L
    from mpdemo.ui.train.controls import opening_fields

    out = C.code_view(lang, {"backends": ["torch"], "precisions": ["fp16"], "steps": 5})
    # The page's settings where the view is silent: the first lesson's (a language model).
    cfg = RunConfig(**{**opening_fields(), "backend": "torch", "precision": "fp16", "steps": 5})
    lst = L.listing(cfg)
    for english in lst.changes() + lst.mpdemo_lines():
        assert C.why_text(english, lang) in out["changes"]
    assert out["listing"].count('data-kind="changed"') == sum(
        ln.kind == "changed" for ln in lst.lines
    )
    assert out["script"] == L.script_for(cfg)
    bad = C.code_view(lang, {"steps": 0})
    assert bad["script"].startswith("# " + t("code_bad_settings", lang, error=""))
    assert bad["run"]["choices"] == []


def explanations(backend: str) -> list[str]:
    """Every explanation the backend's loop can show: its comments, as the listing reads them."""
    from mpdemo.teach.course import MPDEMO_MARK, _analyse, _covering_comments, _unmarked
    from mpdemo.teach.loop_source import loop_source

    source = loop_source(backend)
    src = _analyse(source)
    out: list[str] = []
    for s, block in zip(src, _covering_comments(source, src), strict=True):
        if block:
            out.append(_unmarked(block) if block.startswith(MPDEMO_MARK + ":") else block)
        if s.stmt >= 0 and s.comment is not None:
            mark = s.comment.startswith(MPDEMO_MARK)
            out.append(_unmarked(s.comment) if mark else s.comment)
    return list(dict.fromkeys(out))


def test_every_explanation_is_translated() -> None:
    wanted = {C.why_key(e): e for b in BACKENDS for e in explanations(b)}
    for code in LANGS:
        have = {k for k in i18n.LOCALES[code].sections["teach"] if k.startswith("code_why_")}
        missing = [wanted[k] for k in wanted.keys() - have]
        assert not missing, f"{code}.toml needs code_why keys for: {missing}"
        assert not have - wanted.keys(), f"{code}.toml keeps explanations no loop has any more"
    for key, english in wanted.items():  # the default language's text is the comment itself
        assert TEACH_EN[key] == english


def test_presets_are_valid_run_configs() -> None:
    from mpdemo.ui.train.inputs import DEFAULTS

    names = {f.name for f in fields(RunConfig)}
    assert {"fp16_vs_fp32_gpu", "bf16_cpu", "underflow_no_scaling", "scale_moves"} <= set(W.PRESETS)
    for pid, preset in W.PRESETS.items():
        own = {k: v for k, v in preset.items() if k not in W.PRESET_EXTRA_KEYS}
        cfg = RunConfig(**own).validate()
        assert set(own) <= names
        # Every field maps onto a Train-tab control, so the lead can load it there.
        assert set(preset) <= set(DEFAULTS), pid
        assert set(preset["backends"]) <= set(BACKENDS)
        assert set(preset["precisions"]) <= set(PRECISIONS)
        runs = W.preset_configs(pid)
        assert runs and all(r.validate() for r in runs)
        assert cfg.model == runs[0].model
    assert W.PRESETS["fp16_vs_fp32_gpu"]["device"] == "cuda"
    assert W.PRESETS["bf16_cpu"]["device"] == "cpu"
    assert W.PRESETS["scale_moves"]["growth_interval"] < 2000
    runs = W.preset_configs("underflow_no_scaling")
    fp16 = [r.loss_scaling for r in runs if r.precision == "fp16"]
    assert sorted(fp16) == [False, True]
    assert [r.precision for r in runs].count("fp32") == 1


@pytest.mark.parametrize("lang", LANGS)
def test_why_and_preset_handlers(lang: str) -> None:
    assert W.preset_view(lang, None) == t("preset_none", lang)
    for pid in W.PRESETS:
        text = W.preset_view(lang, pid)
        assert t(f"preset_{pid}_desc", lang) in text
    assert [v for _, v in W.preset_choices(lang)] == list(W.PRESETS)
    assert "AVX512-FP16" in t("why_speed", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_underflow_view(lang: str, tiny_lab) -> None:
    status, act, wgt, table, reading = U.underflow_view(lang, None, 16)
    assert status == t("uf_status_idle", lang) and act == wgt == "" and table.empty
    status, act, wgt, table, reading = U.underflow_view(lang, tiny_lab, 16)
    assert "tiny-bert" in status
    for svg in (act, wgt):
        assert svg.startswith("<svg") and svg.endswith("</svg>")
        assert svg.count('class="mp-band"') == 4
        bars = re.findall(r'data-count="(\d+)"', svg)
        assert bars
    counts = [int(n) for n in re.findall(r'data-count="(\d+)"', act)]
    assert sum(counts) == tiny_lab.magnitudes["activation"].nonzero
    assert list(table.columns) == [t(c, lang) for c in U.UF_TABLE_COLUMNS]
    assert len(table) == 2
    assert U._pct(tiny_lab.shares("activation", 2.0**16)["underflow_share"], lang) in reading
    # Counts in the page's digits: 191.874 parámetros in Spanish, 191,874 params in English.
    assert i18n.number(tiny_lab.params, lang, ",") in status
    # The slider moves the histogram: at S = 1 more bars sit in the flush-to-zero band.
    low = U.underflow_view(lang, tiny_lab, 0)[1]
    assert low.count("#b42318") > act.count("#b42318")


@pytest.mark.parametrize("lang", LANGS)
def test_the_lab_recommends_only_scales_its_slider_reaches(lang: str, tiny_lab) -> None:
    # The lab once said "S = 2^26 for the activation gradients" beside a slider ending at 2^24.
    from mpdemo.teach.magnitudes import best_scale

    mags = tiny_lab.magnitudes
    for fmt in ("fp16", "e4m3"):
        reading = U.underflow_view(lang, tiny_lab, 16, fmt)[4]
        best = max(best_scale(mags[kind], fmt)["log2"] for kind in ("activation", "weight"))
        beyond = t("uf_best_beyond", lang, k=best, kmax=U.UF_K_MAX)
        assert (beyond in reading) == (best > U.UF_K_MAX)
    assert f"2^{U.UF_K_MAX};" in t("uf_scale_info", lang)


def test_number_formats_take_the_pages_decimal_comma_and_say_errors_its_way() -> None:
    # The Portuguese page writes "0,1" but refused it: "Não é um número: use ... 0.1".
    assert "mp-error" not in F.formats_html("pt", "0,1")
    assert F.formats_html("pt", "0,1") == F.formats_html("pt", "0.1")
    assert "mp-error" in F.formats_html("en", "0,1")  # in English a comma is not a decimal mark
    assert "error relativo 0,000166" in F.scale_html("es", "0,0001", 16)
    assert "relative error 0.000166" in F.scale_html("en", "0.0001", 16)


def test_underflow_compute_reports_errors_in_the_page_language() -> None:

    from mpdemo.runs.runner import RUN_LOCK

    U.forget_labs()  # no kept pass: the busy line is the answer
    with pytest.raises(gr.Error) as err:
        U.underflow_compute("es", "tiny-bert", 0, 0)
    assert "Tamaño de lote debe ser un número entero" in str(err.value)  # by its label, in Spanish
    with RUN_LOCK, pytest.raises(gr.Error) as err:
        U.underflow_compute("es", "tiny-bert", 16, 0)
    assert i18n.message("busy", {}, "es") in str(err.value)


def test_a_repeated_compute_shows_the_kept_pass_even_while_a_run_trains() -> None:
    # A class presses Compute together: the same settings give the same pass (same seed, same
    # first batch), kept, so the second press answers at once, even while the server trains.

    from mpdemo.runs.runner import RUN_LOCK

    U.forget_labs()
    first = U.underflow_compute("en", "tiny-bert", 8, 3)
    assert U.underflow_compute("en", "tiny-bert", 8, 3) is first
    with RUN_LOCK:
        assert U.underflow_compute("en", "tiny-bert", 8, 3) is first
        with pytest.raises(gr.Error):  # another seed is another pass: it waits its turn
            U.underflow_compute("en", "tiny-bert", 8, 4)
    from mpdemo import state

    assert "mpdemo.ui.tabs.underflow.forget_labs" in state._RESETS  # mpdemo.reset() empties it
    U.forget_labs()
    assert U._lab_for.cache_info().currsize == 0


def test_preset_loads_train_tab_values() -> None:
    from mpdemo.ui.train.inputs import DEFAULTS

    values, _ = W.preset_load("en", "underflow_no_scaling", DEFAULTS, ["auto", "cpu"])
    assert set(values) == set(DEFAULTS)
    assert values["compare_scaling"] is True and values["precisions"] == ["fp32", "fp16"]
    assert values["lr"] == DEFAULTS["lr"]  # silent fields fall back to the tab's defaults
    assert W.preset_load("en", None, DEFAULTS, ["auto"]) == ({}, "")
