"""fp8: refused before anything loads where the hardware lacks it (this CPU machine), and the
CUDA paths exercised without a GPU (torch.cuda and torchao replaced where needed)."""

from __future__ import annotations

import sys
import types

import pytest
import torch
from torch import nn

from mpdemo import RunConfig
from mpdemo.cli.main import main
from mpdemo.engine import fp8
from mpdemo.engine import precision as P
from mpdemo.messages import ConfigError
from mpdemo.registry import PRECISION_NAMES, PRECISIONS
from mpdemo.teach.formats import LAYOUTS

REFUSAL = "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper)"


def fake_gpu(monkeypatch, name: str, cc: tuple[int, int]) -> None:
    """torch.cuda as a machine with one GPU of this name and compute capability would report."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: name)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: cc)


def fake_torchao(monkeypatch, version: str | None) -> None:
    """torchao installed at `version`, or missing (None), as importlib sees it."""
    import importlib.metadata
    import importlib.util

    real_find, real_version = importlib.util.find_spec, importlib.metadata.version

    def find_spec(name, *a, **k):
        if name == "torchao":
            return None if version is None else types.SimpleNamespace(name="torchao")
        return real_find(name, *a, **k)

    real_metadata = importlib.metadata.metadata

    def dist_version(name):
        if name == "torchao":
            if version is None:
                raise importlib.metadata.PackageNotFoundError(name)
            return version
        return real_version(name)

    def dist_metadata(name):  # accelerate asks for the metadata before the version
        if name == "torchao":
            if version is None:
                raise importlib.metadata.PackageNotFoundError(name)
            return {"Name": "torchao", "Version": version}
        return real_metadata(name)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    monkeypatch.setattr(importlib.metadata, "version", dist_version)
    monkeypatch.setattr(importlib.metadata, "metadata", dist_metadata)


# --- the record --------------------------------------------------------------------------------


def test_fp8_is_one_registry_record_after_the_others() -> None:
    rec = PRECISIONS["fp8"]
    assert rec.needs_compute_capability == (8, 9)
    assert rec.torch_dtype() is torch.float8_e4m3fn and rec.accelerate == "fp8"
    assert rec.torch_autocast_dtype() is torch.bfloat16 and not rec.needs_scaler
    assert rec.float8 and rec.format == "e4m3" and rec.watch_format == "e5m2"
    lay = LAYOUTS[rec.format]  # its format facts: the Number formats tab's, checked against torch
    fi = torch.finfo(rec.torch_dtype())
    assert fi.bits == lay.bits and fi.eps == lay.eps
    assert PRECISION_NAMES[0] == "fp32" and PRECISION_NAMES[-1] == "fp8"
    assert P.dtype_name(torch.float8_e4m3fn) == "fp8"


def test_adding_fp8_leaves_defaults_presets_and_colours_alone() -> None:
    from mpdemo.colours import color_map
    from mpdemo.ui.tabs.why import PRESETS

    assert RunConfig().precision == "fp32"
    for preset in PRESETS.values():
        assert "fp8" not in preset["precisions"]
    colours = color_map()
    assert "torch · fp8" in colours and "trainer · fp8" in colours


# --- refused on this machine (no GPU here) ------------------------------------------------------


def test_refused_on_a_cpu_with_what_the_machine_has(monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError) as err:
        P.check_precision_on(torch.device("cpu"), "fp8")
    assert err.value.key == "fp8_needs_gpu"
    assert str(err.value) == REFUSAL + "; this machine has no CUDA GPU (torch sees only the CPU)"
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    with pytest.raises(ConfigError, match="an Apple GPU, MPS"):
        P.check_precision_on(torch.device("mps"), "fp8")
    for other in ("fp32", "fp16", "bf16"):
        P.check_precision_on(torch.device("cpu"), other)  # the others pass as before


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without one")
def test_cli_refuses_fp8_before_anything_loads(monkeypatch, capsys) -> None:
    import mpdemo.engine.core as engine

    def must_not_load(*a, **k):
        raise AssertionError("loaded something before refusing fp8")

    monkeypatch.setattr(engine, "prepare", must_not_load)
    monkeypatch.setattr(engine.D, "load_split", must_not_load)
    code = main(["run", "--precision", "fp32,fp8", "--backend", "torch,accelerate,trainer"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("mpdemo: error: " + REFUSAL + "; this machine has")
    assert "Traceback" not in err[0]


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without one")
def test_train_refuses_fp8_before_its_worker_starts() -> None:
    import threading

    from mpdemo import train

    before = threading.active_count()
    with pytest.raises(ConfigError, match="compute capability 8.9"):
        next(train(RunConfig(precision="fp8")))
    assert threading.active_count() == before


def test_ui_renders_the_refusal_in_each_language(monkeypatch) -> None:
    from mpdemo.ui.i18n import error_text

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ConfigError) as err:
        fp8.check(torch.device("cpu"))
    assert error_text(err.value, "en") == str(err.value)
    for lang, words in (
        ("es", ("capacidad de cómputo 8.9", "torch solo ve la CPU")),
        ("pt", ("capacidade de computação 8.9", "o torch só vê a CPU")),
    ):
        text = error_text(err.value, lang)
        assert all(w in text for w in words) and "machine" not in text  # all of it translated


# --- the CUDA paths, without a GPU -------------------------------------------------------------


def test_an_older_gpu_is_named_in_the_refusal(monkeypatch) -> None:
    fake_gpu(monkeypatch, "NVIDIA A100-SXM4-80GB", (8, 0))
    with pytest.raises(ConfigError) as err:
        P.check_precision_on(torch.device("cuda"), "fp8")
    assert str(err.value) == (
        REFUSAL + "; this machine has NVIDIA A100-SXM4-80GB (compute capability 8.0)"
    )


def test_a_capable_gpu_without_torchao_says_how_to_install_it(monkeypatch) -> None:
    fake_gpu(monkeypatch, "NVIDIA L4", (8, 9))
    fake_torchao(monkeypatch, None)
    with pytest.raises(ConfigError) as err:
        P.check_precision_on(torch.device("cuda"), "fp8")
    assert err.value.key == "fp8_no_torchao"
    assert "pip install -r requirements-gpu.txt" in str(err.value)
    fake_torchao(monkeypatch, "0.5.0")
    with pytest.raises(ConfigError, match=r"found 0\.5\.0"):
        fp8.check(torch.device("cuda"))


def test_a_capable_gpu_with_torchao_passes(monkeypatch) -> None:
    fake_gpu(monkeypatch, "NVIDIA H100 80GB HBM3", (9, 0))
    fake_torchao(monkeypatch, "0.14.1+cu128")
    assert fp8.torchao_version() == (0, 14, 1)
    P.check_precision_on(torch.device("cuda"), "fp8")
    # The same machine, asked to run on its CPU: the line says so.
    with pytest.raises(ConfigError, match="this run's device is cpu"):
        P.check_precision_on(torch.device("cpu"), "fp8")


def tiny_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 48), nn.Linear(48, 20), nn.Linear(20, 32),
        nn.Linear(32, 16),
    )  # fmt: skip


def test_filter_keeps_first_last_and_odd_sizes() -> None:
    model = tiny_model()
    keep = fp8.linear_filter(model)
    chosen = [n for n, m in model.named_modules() if isinstance(m, nn.Linear) and keep(m, n)]
    # 0 is first, 5 is last, 3 (48 -> 20) and 4 (20 -> 32) have a size that is not 16k.
    assert chosen == ["2"]


class Float8Linear(nn.Linear):
    """Stands in for torchao.float8.Float8Linear (matched by class name, as torchao's is)."""

    def __init__(self, mod: nn.Linear, config) -> None:
        super().__init__(mod.in_features, mod.out_features, bias=mod.bias is not None)
        self.weight, self.bias, self.config = mod.weight, mod.bias, config


def fake_torchao_float8(monkeypatch) -> list:
    """A torchao.float8 module whose convert swaps layers the way torchao's does."""
    calls: list = []

    class Float8LinearConfig:
        def __init__(self, **kw) -> None:
            self.kw = kw
            self.cast_config_input = types.SimpleNamespace(target_dtype=torch.float8_e4m3fn)
            self.cast_config_grad_output = types.SimpleNamespace(target_dtype=torch.float8_e5m2)

    def convert_to_float8_training(model, module_filter_fn=None, config=None):
        calls.append(config.kw)
        for parent_name, parent in list(model.named_modules()):
            for name, mod in list(parent.named_children()):
                fqn = f"{parent_name}.{name}" if parent_name else name
                keep = module_filter_fn is not None and not module_filter_fn(mod, fqn)
                if type(mod) is nn.Linear and not keep:
                    setattr(parent, name, Float8Linear(mod, config))
        return model

    import importlib.machinery

    pkg = types.ModuleType("torchao")
    sub = types.ModuleType("torchao.float8")
    # A spec, as an imported package has: transformers' find_spec("torchao") must not choke.
    pkg.__spec__ = importlib.machinery.ModuleSpec("torchao", None, is_package=True)
    sub.__spec__ = importlib.machinery.ModuleSpec("torchao.float8", None)
    sub.convert_to_float8_training = convert_to_float8_training
    sub.Float8LinearConfig = Float8LinearConfig
    pkg.float8 = sub
    monkeypatch.setitem(sys.modules, "torchao", pkg)
    monkeypatch.setitem(sys.modules, "torchao.float8", sub)
    return calls


def test_convert_and_audit_report_what_really_ran(monkeypatch) -> None:
    calls = fake_torchao_float8(monkeypatch)
    model = tiny_model()
    params = [id(p) for p in model.parameters()]
    assert fp8.audit(model)["float8_layers"] == 0
    # What the torch loop does for fp8 (backends/torch_amp.py), with the same pieces.
    fp8.converter()(model, module_filter_fn=fp8.linear_filter(model), config=fp8.float8_config())
    assert calls == [{"pad_inner_dim": True}]
    assert [id(p) for p in model.parameters()] == params  # the optimizer's tensors survive
    report = fp8.audit(model)
    assert report["float8_layers"] == 1 and report["linear_layers"] == 5
    assert report["kept"] == ["0", "3", "4", "5"]
    assert report["formats"] == {"input": "float8_e4m3fn", "grad_output": "float8_e5m2"}


# --- the teaching tabs: fp8 beside fp16 and bf16, on any machine -----------------------------


@pytest.mark.parametrize("lang", ["en", "es", "pt"])
def test_number_formats_show_fp8_and_what_torch_does_past_the_range(lang: str) -> None:
    from mpdemo.teach import formats
    from mpdemo.ui.i18n import t
    from mpdemo.ui.tabs import formats as F

    page = F.formats_html(lang, "500")
    assert "<b>E4M3</b>" in page and "<b>E5M2</b>" in page
    assert "448.0" in page  # E4M3's 500, as torch stores it here
    measured = formats.cast_overflow("e4m3")
    assert t(f"nf_cast_{measured}", lang) in page  # the sentence follows the measurement
    assert t(f"nf_cast_{formats.cast_overflow('e5m2')}", lang) in page
    assert torch.__version__.split("+")[0] in page
    frame = F.format_table_frame(lang)
    assert list(frame.iloc[:, 0]) == ["fp32", "fp16", "bf16", "e4m3", "e5m2"]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_scale_slider_per_format(lang: str) -> None:
    from mpdemo.ui.i18n import t
    from mpdemo.ui.tabs import formats as F
    from mpdemo.ui.text import esc

    # 1e-8 at S = 2^16: a normal fp16 number, still zero in E4M3 (smallest subnormal 2^-9).
    assert 'data-category="normal" data-format="fp16"' in F.scale_html(lang, "1e-8", 16)
    assert 'data-category="zero" data-format="e4m3"' in F.scale_html(lang, "1e-8", 16, "e4m3")
    # 1000 overflows E4M3 at S = 1 and fits once scaled down: per-tensor scaling below 1.
    assert 'data-category="inf"' in F.scale_html(lang, "1000", 0, "e4m3")
    down = F.scale_html(lang, "1000", -2, "e4m3")
    assert 'data-category="normal"' in down and "256.0" in down
    assert 'data-category="normal"' in F.scale_html(lang, "1000", 0, "e5m2")
    assert esc(t("nf_v_inf_fp8", lang)) in F.scale_html(lang, "1e6", 0, "e5m2")
    assert esc(t("nf_v_inf_scaler", lang)) in F.scale_html(lang, "1e6", 0, "fp16")
    assert "2^-24" in F.scale_html(lang, "1000", 0, "e5m2")  # the window reaches below 1


def test_underflow_view_in_each_format(magnitudes_of) -> None:
    import re

    from mpdemo.teach.magnitudes import format_band, shares_at
    from mpdemo.ui.i18n import t
    from mpdemo.ui.tabs import underflow as U

    gen = torch.Generator().manual_seed(1)
    grads = torch.exp2(torch.empty(4000).uniform_(-40, 2, generator=gen))
    mags = magnitudes_of(grads, kind="activation")
    lab = types.SimpleNamespace(
        model="tiny-bert", params=1, batch_size=8, loss=0.7, activation_layers=3,
        magnitudes={"activation": mags, "weight": mags},
        shares=lambda kind, scale, fmt="fp16": shares_at(mags, scale, fmt),
    )  # fmt: skip
    for fmt, name in (("e4m3", "E4M3"), ("e5m2", "E5M2"), ("bf16", "bf16")):
        status, act, wgt, table, reading = U.underflow_view("en", lab, 8, fmt)
        assert f"{name} · S = 2^8" in act and act.count('class="mp-band"') == 4
        assert f"in {name}" in reading and "2^" in reading
        band = format_band(fmt)
        assert band["min_subnormal_log2"] < band["min_normal_log2"] < band["max_log2"]
        # A dashed line at each band edge on the axis (bf16's lie beyond it: none drawn there).
        edges = [v for v in band.values() if U.CHART_LO < v < U.CHART_HI]
        lines = [float(x) for x in re.findall(r'<line x1="([\d.]+)"[^>]*dasharray', act)]
        assert len(lines) == len(edges) and lines == sorted(lines)
        assert len(edges) == (0 if fmt == "bf16" else 3)
    assert "Micikevicius et al., 2022" in U.underflow_view("en", lab, 8, "e4m3")[4]
    assert t("uf_amax", "en").split(",")[0] in U.underflow_view("en", lab, 8, "e5m2")[4]


@pytest.mark.parametrize("lang", ["en", "es", "pt"])
def test_why_tab_explains_fp8_with_sources_and_no_claim_about_this_machine(lang: str) -> None:
    from mpdemo.ui.i18n import t
    from mpdemo.ui.tabs import why as W

    assert "why_fp8" in W.WHY_KEYS
    text = t("why_fp8", lang)
    for needle in ("E4M3", "E5M2", "8.9", "Hopper", "Ada", "arxiv.org/abs/2209.05433",
                   "transformer-engine", "torchao"):  # fmt: skip
        assert needle in text, needle
    assert "this machine has" not in text.lower()


# --- with the real torchao (where installed: pip install -r requirements-gpu.txt) ---------------
# torchao's emulate=True runs Float8Linear's matmuls in high precision, so its conversion, the
# per-tensor casts and the training step run on a CPU: the code path, not fp8 speed.

needs_torchao = pytest.mark.skipif(
    fp8.torchao_version() is None, reason="torchao is not installed (requirements-gpu.txt)"
)


@pytest.fixture
def emulated(monkeypatch):
    from torchao.float8 import Float8LinearConfig

    monkeypatch.setattr(
        fp8, "float8_config", lambda: Float8LinearConfig(pad_inner_dim=True, emulate=True)
    )


@needs_torchao
def test_torchao_converts_tiny_bert_and_trains_a_step(emulated, small_cfg) -> None:
    from mpdemo import prepare

    prep = prepare(small_cfg)
    model = prep.model
    fp8.converter()(model, module_filter_fn=fp8.linear_filter(model), config=fp8.float8_config())
    assert fp8.audit(model)["float8_layers"] == 12  # 14 Linear layers, the first and last kept
    report = fp8.audit(prep.model)
    assert report["kept"] == ["bert.encoder.layer.0.attention.self.query", "classifier"]
    assert report["formats"]["input"] == "float8_e4m3fn"
    assert report["formats"]["grad_output"] == "float8_e5m2"  # torchao's default: hybrid
    batch = next(iter(prep.train_dataloader))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = prep.model(**batch).loss
    loss.backward()
    prep.optimizer.step()
    assert torch.isfinite(loss)


@needs_torchao
def test_accelerate_fp8_prepares_with_torchao(emulated, small_cfg) -> None:
    from accelerate import Accelerator

    from mpdemo import prepare
    from mpdemo.backends.accelerate import reset_accelerate_state

    prep = prepare(small_cfg)
    reset_accelerate_state()
    try:
        acc = Accelerator(mixed_precision="fp8", cpu=True)  # builds its AORecipeKwargs itself
        assert acc.fp8_backend.name == "AO"
        model, _opt = acc.prepare(prep.model, prep.optimizer)
        assert fp8.audit(model)["float8_layers"] == 12
    finally:
        reset_accelerate_state()


# --- the Train tab: fp8's own box ---------------------------------------------------------------


def test_fp8_has_its_own_box_built_disabled() -> None:
    from mpdemo.ui.train import controls

    assert "fp8" not in [v for _, v in controls.precision_choices("en")]
    box = controls.BY_NAME["fp8"]
    assert box.kind == "checkbox" and box.default_value() is False
    assert dict(box.props)["interactive"] is False  # until the page load has asked torch
    assert "fp8" not in controls.defaults()["precisions"]


@pytest.mark.parametrize("lang", ["en", "es", "pt"])
def test_fp8_box_stays_disabled_here_with_the_reason(monkeypatch, lang: str) -> None:
    from mpdemo.ui.i18n import error_text
    from mpdemo.ui.train.inputs import fp8_box

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    state = fp8_box(lang)
    assert state["interactive"] is False and state["value"] is False
    with pytest.raises(ConfigError) as err:
        fp8.check(torch.device("cpu"))
    assert state["info"] == error_text(err.value, lang)


def test_fp8_box_is_enabled_on_a_capable_gpu(monkeypatch) -> None:
    from mpdemo.ui.train.inputs import fp8_box

    fake_gpu(monkeypatch, "NVIDIA L4", (8, 9))
    fake_torchao(monkeypatch, "0.18.0")
    state = fp8_box("en")
    assert state["interactive"] is True
    assert (
        "NVIDIA L4 (compute capability 8.9)" in state["info"] and "torchao 0.18.0" in state["info"]
    )
    fake_torchao(monkeypatch, None)
    missing = fp8_box("es")
    assert missing["interactive"] is False and "requirements-gpu.txt" in missing["info"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="the refusal is for machines without one")
def test_train_tab_refuses_a_ticked_fp8_box_with_the_sentence() -> None:
    from mpdemo.ui.train.inputs import check_inputs, with_fp8

    assert with_fp8({"precisions": ["fp32"], "fp8": True}) == ["fp32", "fp8"]
    assert with_fp8({"precisions": ["fp32"], "fp8": False}) == ["fp32"]
    assert all(c.precision != "fp8" for c in check_inputs({"fp8": False}))
    with pytest.raises(ConfigError) as err:
        check_inputs({"fp8": True})  # what a tampered page or an API call could send
    assert err.value.key == "fp8_needs_gpu" and str(err.value).startswith(REFUSAL)
    with pytest.raises(ConfigError, match="compute capability 8.9"):
        check_inputs({"precisions": ["fp8"]})


# --- the three backends with fp8, on this CPU as a capable machine would run them ---------------


@pytest.fixture
def fp8_machine(monkeypatch) -> list:
    """fp8.check passes (as on a GPU of compute capability 8.9+ with torchao), training stays on
    the CPU, and torchao is a stand-in whose Float8Linear computes as nn.Linear does."""
    monkeypatch.setattr(fp8, "check", lambda device: None)
    accelerate_sees_torchao(monkeypatch)
    return fake_torchao_float8(monkeypatch)


def accelerate_sees_torchao(monkeypatch) -> None:
    """accelerate 1.15's torchao checks answer yes (each module holds its own binding)."""
    import accelerate.accelerator
    import accelerate.state
    import accelerate.utils.dataclasses
    import accelerate.utils.imports

    monkeypatch.setattr(accelerate.state, "is_fp8_available", lambda: True)
    for mod in (accelerate.accelerator, accelerate.utils.dataclasses, accelerate.utils.imports):
        monkeypatch.setattr(mod, "is_torchao_available", lambda: True)


@pytest.mark.parametrize("backend", ["torch", "accelerate", "trainer"])
def test_every_backend_trains_fp8_and_the_audit_says_what_ran(fp8_machine, small_cfg, backend):
    from conftest import events_of, summary_of

    cfg = small_cfg.replace(backend=backend, precision="fp8", device="cpu")
    s = summary_of(events_of(cfg))
    assert s["status"] == "completed", s.get("warnings")
    assert s["effective_dtype"] == "fp8" and s["requested_dtype"] == "fp8"
    audit = s["fp8_audit"]
    assert audit["float8_layers"] == 12 and audit["linear_layers"] == 14  # the same 12 in all
    assert audit["kept"] == ["bert.encoder.layer.0.attention.self.query", "classifier"]
    assert any("12 of 14 Linear layers trained as torchao Float8Linear" in w for w in s["warnings"])
    assert s["final_loss_scale"] is None  # no GradScaler: each tensor has its own scale
    assert len(fp8_machine) == 1  # converted once: by the loop, or by Accelerate's prepare()


def test_a_run_that_converted_nothing_says_so(monkeypatch, small_cfg) -> None:
    """torchao present but converting no layer: the audit reports bf16, not fp8."""
    from conftest import events_of, summary_of

    monkeypatch.setattr(fp8, "check", lambda device: None)
    calls = fake_torchao_float8(monkeypatch)
    sub = sys.modules["torchao.float8"]
    monkeypatch.setattr(sub, "convert_to_float8_training", lambda model, **kw: calls.append(kw))
    s = summary_of(events_of(small_cfg.replace(precision="fp8", device="cpu")))
    assert s["effective_dtype"] == "bf16" and s["fp8_audit"]["float8_layers"] == 0
    assert any("fp8 requested" in w and "bf16" in w for w in s["warnings"])


def test_the_code_tab_shows_torchaos_call_for_fp8_only(fp8_machine, small_cfg) -> None:
    from mpdemo.teach.listing import listing

    for backend in ("torch", "accelerate", "trainer"):
        plain = listing(small_cfg.replace(backend=backend, device="cpu"))
        assert "float8" not in plain.body and "fp8" not in plain.body  # a dead branch is not shown
        assert not any("fp8" in why for why in plain.changes())
    body = listing(small_cfg.replace(precision="fp8", device="cpu")).body
    assert "if True" not in body and "if float8" not in body
    assert "convert_to_float8_training(\n    model, module_filter_fn=linear_filter(model)" in body
    assert "dtype=torch.bfloat16, enabled=True" in body
    trainer = listing(small_cfg.replace(backend="trainer", precision="fp8", device="cpu")).body
    assert '\ntraining_args.mixed_precision = "fp8"\n' in trainer
    acc = listing(small_cfg.replace(backend="accelerate", precision="fp8", device="cpu")).body
    assert 'mixed_precision="fp8"' in acc


def test_dead_branches_are_left_out_and_live_ones_unwrapped() -> None:
    from mpdemo.teach.loop_source import drop_dead_branches

    src = (
        "a = 1\n"
        "# explains the branch\n"
        "if False:\n"
        "    b = 2\n"
        "    if True:\n"
        "        c = 3\n"
        "if True:\n"
        "    d = 4  # kept\n"
        "\n"
        "    e = 5\n"
        "if x:\n"
        "    f = 6\n"
    )
    assert drop_dead_branches(src) == "a = 1\nd = 4  # kept\n\ne = 5\nif x:\n    f = 6\n"


@needs_torchao
@pytest.mark.parametrize("backend", ["torch", "accelerate", "trainer"])
def test_every_backend_with_the_real_torchao(monkeypatch, emulated, small_cfg, backend) -> None:
    """Where torchao is installed, the same three runs go through its real Float8Linear."""
    from conftest import events_of, summary_of

    monkeypatch.setattr(fp8, "check", lambda device: None)
    s = summary_of(events_of(small_cfg.replace(backend=backend, precision="fp8", device="cpu")))
    assert s["status"] == "completed", s.get("warnings")
    assert s["effective_dtype"] == "fp8" and s["fp8_audit"]["float8_layers"] == 12
    assert s["fp8_audit"]["formats"] == {
        "input": "float8_e4m3fn",
        "weight": "float8_e4m3fn",
        "grad_output": "float8_e5m2",
    }
