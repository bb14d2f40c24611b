"""The hardware profile and every sentence built from it; activation memory; offline Hub entries.

Simulated profiles of each hardware class (AVX2-only CPU, AVX512-BF16 CPU, AVX512-FP16 CPU, CUDA
with and without bf16, Apple MPS) go through the same render functions the UI and CLI use: no
sentence may contradict the measurement it was built from.
"""

from __future__ import annotations

import re
import threading
from types import SimpleNamespace

import pytest
import torch
from conftest import events_of, summary_of

from mpdemo import RunConfig
from mpdemo.engine import machine as M
from mpdemo.engine.memory import SavedBytes
from mpdemo.engine.precision import effective_precision
from mpdemo.messages import EN, Note, render
from mpdemo.runs import notes as N
from mpdemo.runs.runner import grid, run_grid
from mpdemo.runs.timing import compare
from mpdemo.wording import ENGLISH

LANGS = ("en", "es", "pt")


def _machine(kind: str, **flags: bool) -> dict:
    base = {f: False for f in M.CPU_FLAGS}
    base.update(flags)
    cap = "AVX512" if base["avx512"] else "AVX2"
    gpu = None
    if kind == "cuda":
        gpu = {"kind": "cuda", "name": "NVIDIA Test GPU", "capability": flags.get("cc", "8.0"),
               "bf16": flags.get("bf16", True)}  # fmt: skip
    elif kind == "mps":
        gpu = {"kind": "mps", "name": "Apple GPU (MPS)", "capability": None, "bf16": None}
    return {
        "device_kind": kind,
        "device_name": gpu["name"] if gpu else "Test CPU",
        "cpu": {"name": "Test CPU", "capability": cap, "flags": base, "cores": 2},
        "gpu": gpu,
        "versions": {"torch": "2.13.0"},
        "torch_threads": 2,
    }


def interleaved_times(step_s: dict, spread: float = 0.02, rounds: int = 12) -> dict:
    """Simulated interleaved blocks: 3 steps a block, each within ±spread of its precision's step."""
    return {
        p: [
            [s * (1 + spread * (((r * 7 + i) % 5) - 2) / 2) for i in range(3)]
            for r in range(rounds)
        ]
        for p, s in step_s.items()
    }


def _cal(device: str, fp32: float, bf16: float, fp16: float, spread: float = 0.02):
    """A device's step times and their interleaved SpeedChecks against fp32."""
    step_s = {"fp32": fp32, "bf16": bf16, "fp16": fp16}
    checks = compare(interleaved_times(step_s, spread))
    return SimpleNamespace(device=device, step_s=step_s, checks=checks)


# (name, machine, calibration, what each precision must be called: slower/faster/same)
PROFILES = [
    ("avx2-only CPU", _machine("cpu", avx2=True), _cal("cpu", 0.046, 0.340, 0.390),
     {"bf16": "slower", "fp16": "slower"}),
    ("AVX512-BF16 CPU", _machine("cpu", avx2=True, avx512=True, avx512_bf16=True),
     _cal("cpu", 0.28, 0.14, 7.9), {"bf16": "faster", "fp16": "slower"}),
    ("AVX512-FP16 CPU",
     _machine("cpu", avx2=True, avx512=True, avx512_bf16=True, avx512_fp16=True),
     _cal("cpu", 0.050, 0.0505, 0.0496), {"bf16": "same", "fp16": "same"}),
    ("CUDA with bf16", _machine("cuda", avx2=True, bf16=True, cc="8.6"),
     _cal("cuda", 0.020, 0.009, 0.008), {"bf16": "faster", "fp16": "faster"}),
    ("CUDA without bf16", _machine("cuda", avx2=True, bf16=False, cc="7.5"),
     _cal("cuda", 0.020, 0.060, 0.009), {"bf16": "slower", "fp16": "faster"}),
    ("MPS", _machine("mps", avx2=False), _cal("mps", 0.030, 0.030, 0.0302),
     {"bf16": "same", "fp16": "same"}),
]  # fmt: skip
IDS = [p[0] for p in PROFILES]


def _texts(note: Note) -> list[str]:
    from mpdemo.ui.i18n import message

    return [message(note.key, note.args, lang) for lang in LANGS]


@pytest.mark.parametrize(("name", "machine", "cal", "expect"), PROFILES, ids=IDS)
def test_speed_sentences_say_what_the_calibration_measured(name, machine, cal, expect):
    for precision, verdict in expect.items():
        note = N.check_note(cal.checks[precision], machine, cal.device)
        assert note.key == f"speed_{verdict}", (name, precision, note.key)
        text = note.text
        assert text.startswith(precision)
        words = set(re.findall(r"[a-z]+", text.lower()))
        # No word that contradicts the measurement (e.g. "fast" for a precision measured slower).
        if verdict == "slower":
            assert "slower" in words and not words & {"faster", "fast"}, text
            assert f"{cal.step_s[precision] / cal.step_s['fp32']:.2f}x slower" in text
        elif verdict == "faster":
            assert "faster" in words and not words & {"slower", "slow"}, text
        else:
            assert not words & {"faster", "slower", "fast", "slow"}, text
        # The measured milliseconds are in the sentence: the page shows the measurement.
        assert ENGLISH.number(cal.step_s[precision] * 1000, ".3g") in text
        for other in _texts(note):
            assert "{" not in other and f"{cal.step_s['fp32'] * 1000:.3g}".split(".")[0] in other


@pytest.mark.parametrize(("name", "machine", "cal", "expect"), PROFILES, ids=IDS)
def test_hardware_reasons_match_the_flags(name, machine, cal, expect):
    for precision in ("bf16", "fp16"):
        why = M.hardware_reason(machine, precision, cal.device)
        text = render(why["key"], why["args"])
        flags = machine["cpu"]["flags"]
        if cal.device == "cuda":
            assert machine["gpu"]["name"] in text and machine["gpu"]["capability"] in text
        elif cal.device == "mps":
            assert "Apple" in text
        else:
            fast = {"bf16": ("avx512_bf16", "amx_bf16"), "fp16": ("avx512_fp16", "amx_fp16")}
            has = [M._FLAG_LABELS[f] for f in fast[precision] if flags[f]]
            if has:
                assert all(h in text for h in has) and "without" not in text
            else:
                assert f"without {precision} instructions" in text
            assert ("AVX512" in text) == flags["avx512"]


@pytest.mark.parametrize(("name", "machine", "cal", "expect"), PROFILES, ids=IDS)
def test_machine_line_names_the_hardware_and_claims_no_speed(name, machine, cal, expect):
    note = M.machine_note(machine)
    for text in _texts(note):
        assert not re.search(r"\b(fast|slow|faster|slower|rápid|lent)", text.lower()), text
    text = note.text
    if machine["device_kind"] == "cuda":
        assert machine["gpu"]["name"] in text
        assert ("no bf16" in text) == (not machine["gpu"]["bf16"])
    elif machine["device_kind"] == "mps":
        assert "MPS" in text
    else:
        flags = machine["cpu"]["flags"]
        # An empty list is left out ("has -" read as a flag named "-"): no "; has " then.
        has = text.split("; has ")[1].split("; lacks ")[0] if "; has " in text else ""
        lacks = text.split("; lacks ")[1] if "; lacks " in text else ""
        for f, label in M._FLAG_LABELS.items():
            assert (label in has) == flags[f] and (label in lacks) == (not flags[f])


def test_fp16_through_accelerate_or_trainer_on_cpu_computes_in_fp32():
    for backend in ("accelerate", "trainer"):
        assert effective_precision(backend, "fp16", "cpu") == "fp32"
        assert effective_precision(backend, "bf16", "cpu") == "bf16"
        # On CUDA they autocast fp16.
        assert effective_precision(backend, "fp16", "cuda") == "fp16"
    assert effective_precision("torch", "fp16", "cpu") == "fp16"
    # No autocast: it computes in what it is (tf32's TF32 is the GPU's flags, not autocast).
    assert effective_precision("trainer", "tf32", "cpu") == "tf32"
    assert effective_precision("accelerate", "fp32", "cpu") == "fp32"


def test_no_message_or_ui_text_claims_speed_or_memory_in_advance():
    """Speed/memory words only in templates that carry a measurement ({ratio}, {ms}, {pct}...)."""
    from mpdemo.ui import i18n

    claim = re.compile(
        r"fast path|fast mixed precision|saves memory|bf16 is the|\b(is|are|runs?) (fast|slow)"
    )
    for code, loc in i18n.LOCALES.items():
        for key in ("precision_info_cpu", "precision_info_gpu"):
            assert not claim.search(loc.strings[key]), (code, key)
    for key, template in EN.items():
        assert not claim.search(template), key


def test_machine_info_is_cheap_json_and_names_this_machine():
    import json

    info = M.machine_info()
    json.dumps(info)
    assert info["device_kind"] in ("cpu", "cuda", "mps")
    assert set(info["cpu"]["flags"]) == set(M.CPU_FLAGS)
    assert info["versions"]["torch"] == torch.__version__
    assert info["torch_threads"] == torch.get_num_threads()
    if torch.cuda.is_available():
        assert info["gpu"]["name"] == torch.cuda.get_device_name()


def test_runs_that_take_turns_are_not_timed_before(small_cfg):
    configs = grid(small_cfg.replace(steps=3), ["torch"], ["fp32", "bf16"])
    events = []
    run_grid(configs, events.append, threading.Event())
    plan = events[0]
    assert plan.kind == "plan" and plan.interleaved
    assert [n["key"] for n in plan.notes] == ["side_by_side"]
    # The runs' warnings carry no calibration sentence: their own figures speak.
    bf16 = next(e for e in events if e.kind == "end" and e.summary["precision"] == "bf16")
    assert not any(w["key"].startswith("speed_") for w in bf16.summary["warning_keys"])
    assert bf16.summary.get("speed_check") is None  # 3 steps: all warm-up, no round timed


@pytest.mark.parametrize(
    ("fp32_ms", "bf16_ms", "runs_bf16_ms", "key", "changed"),
    [(50, 340, 345, "speed_slower", False), (280, 140, 141, "speed_faster", False),
     (50, 50.5, 50, "speed_same", False), (50, 50.5, 65, "speed_same", True),
     (280, 140, 400, "speed_faster", True)],
)  # fmt: skip
def test_after_the_runs_the_interleaved_measurement_speaks(
    fp32_ms, bf16_ms, runs_bf16_ms, key, changed
):
    # The status after the runs says the sentence the page said before them, from the same
    # check; where the runs' own medians disagree with its interval, the load changed.
    from mpdemo.files.summary import with_speedups

    machine = PROFILES[0][1]
    checks = compare(interleaved_times({"fp32": fp32_ms / 1000, "bf16": bf16_ms / 1000}))

    def run(precision, ms, effective=None):
        return {"label": f"torch · {precision}", "backend": "torch", "precision": precision,
                "effective_dtype": effective or precision, "median_step_s": ms / 1000,
                "step_time_mad": 0.03, "steps": 100, "device": "cpu",
                "status": "completed"}  # fmt: skip

    bf16 = {**run("bf16", runs_bf16_ms), "speed_check": checks["bf16"].to_dict()}  # the runner's
    runs = with_speedups([run("fp32", fp32_ms), bf16, run("fp16", 60, effective="fp32")])
    notes = N.run_speed_notes(runs, machine)  # the fp32-computing fp16 run: the audit's to say
    assert [n.key for n in notes] == [key] + (["load_changed"] if changed else [])
    note = notes[0]
    assert note.text == N.check_note(checks["bf16"], machine, "cpu").text
    words = set(re.findall(r"[a-z]+", note.text.lower()))
    verdict = key.removeprefix("speed_")
    other = {"slower": {"faster"}, "faster": {"slower"}, "same": {"faster", "slower"}}[verdict]
    assert not words & other, note.text
    assert f"{bf16_ms:.3g} vs {fp32_ms:.3g} ms" in note.text
    assert runs[1]["speed_verdict"] == verdict and runs[2]["speed_reason"] == "ran_fp32"
    for n in notes:
        for text in _texts(n):
            assert "{" not in text


def test_runs_timed_one_after_the_other_get_no_verdict(small_cfg):
    # A browser drawing the plots on the same two cores stalls some steps (60-480 ms among
    # 20 ms ones): the mean doubled and the page called bf16 1.7x slower, then the same speed.
    # Runs that were not timed interleaved show the ratio of their medians, and "unsure".
    import threading

    from mpdemo import prepare
    from mpdemo.engine.recorder import Recorder
    from mpdemo.files.summary import with_speedups

    prep = prepare(small_cfg.replace(steps=1, warmup_steps=3))

    def summary(precision, times):
        rec = Recorder(prep, lambda ev: None, threading.Event())
        rec.cfg = rec.cfg.replace(precision=precision, warmup_steps=3)
        rec.times = times
        return rec.summary("completed").replace(steps=len(times), effective_dtype=precision)

    calm = [0.02] * 3 + [0.020 + 0.0004 * (i % 5) for i in range(100)]
    stalled = list(calm)
    for i in range(3, 103, 6):  # one step in six stalls, 0.1-0.4 s
        stalled[i] = 0.1 + 0.3 * (i % 4) / 3
    fp32, bf16 = summary("fp32", stalled), summary("bf16", calm)
    assert fp32["mean_step_s"] > 1.5 * bf16["mean_step_s"]  # what the page used to compare
    assert fp32["median_step_s"] == pytest.approx(bf16["median_step_s"], rel=0.05)
    _, s = with_speedups([fp32, bf16])
    assert s.speedup_vs_fp32 == pytest.approx(1.0, rel=0.05)
    assert (s.speed_verdict, s.speed_reason, s.speedup_interval) == (
        "unsure",
        "not_interleaved",
        None,
    )
    assert N.run_speed_notes([fp32, s], PROFILES[0][1]) == []


def test_a_grid_without_fp32_keeps_its_speed_sentence_at_the_end():
    # The "watch the scale move" preset is one fp16 run: its "fp16 ran 9.5x slower" vanished
    # when the grid ended, as no fp32 run was there to compare with.
    from mpdemo.events import GridPlanned
    from mpdemo.ui.train.session import Session
    from mpdemo.ui.train.status import status_text

    cal = _cal("cpu", 0.0173, 0.0173, 0.165)
    note = N.check_note(cal.checks["fp16"], M.machine_info(), cal.device)
    session = Session()
    session.state.plan = GridPlanned(machine={}, notes=[note.to_dict()])
    fp16 = {"label": "torch · fp16", "backend": "torch", "precision": "fp16", "status": "completed",
            "effective_dtype": "fp16", "median_step_s": 0.17, "steps": 50}  # fmt: skip
    session.runs = [{"summary": fp16, "status": "completed"}]
    assert note.text in status_text(session, "en", finished=True)
    fp32 = {**fp16, "label": "torch · fp32", "precision": "fp32", "effective_dtype": "fp32",
            "median_step_s": 0.0175}  # fmt: skip
    # With fp32 as well, the runs carry the same check: the same sentence, once.
    from mpdemo.files.summary import with_speedups

    session.runs = [
        {"summary": s, "status": "completed"}
        for s in with_speedups([fp32, {**fp16, "speed_check": cal.checks["fp16"].to_dict()}])
    ]
    done = status_text(session, "en", finished=True)
    assert done.count(note.text) == 1 and "fp16 stepped 9.54x slower than fp32" in done


# --- memory ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "dataset"),
    [("tiny-bert", "reviews"), ("small-bert", "reviews"), ("tiny-gpt2", "reviews"),
     ("amp-mlp", "random")],
)  # fmt: skip
def test_autocast_keeps_fewer_activation_bytes_on_the_built_in_models(model, dataset):
    from mpdemo import prepare
    from mpdemo.engine.precision import autocast

    prep = prepare(RunConfig(model=model, dataset=dataset, steps=1, batch_size=4, device="cpu",
                             train_slice="train[:8]", eval_slice="validation[:4]"))  # fmt: skip
    batch = next(iter(prep.train_dataloader))
    saved = {}
    for precision in ("fp32", "bf16", "fp16"):
        with SavedBytes(prep.model) as meter, autocast(prep.device, precision):
            loss = prep.model(**batch).loss
        loss.backward()
        prep.optimizer.zero_grad(set_to_none=True)
        saved[precision] = meter.bytes
    assert saved["fp32"] > 0
    assert saved["bf16"] < 0.7 * saved["fp32"], saved
    assert saved["fp16"] < 0.7 * saved["fp32"], saved


@pytest.mark.parametrize("backend", ["torch", "accelerate", "trainer"])
def test_runs_report_saved_activation_bytes(small_cfg, backend):
    cfg = small_cfg.replace(backend=backend, steps=2)
    fp32 = summary_of(events_of(cfg))
    bf16 = summary_of(events_of(cfg.replace(precision="bf16")))
    assert fp32["saved_activation_bytes"] > 0
    assert bf16["saved_activation_bytes"] < 0.7 * fp32["saved_activation_bytes"]
    assert fp32["peak_mem_bytes"] is None  # a CPU has no allocator peak; RSS is not the run's
    notes = N.memory_notes([fp32, bf16])
    assert [n.key for n in notes] == ["mem_less"]
    assert "less activation memory" in notes[0].text


def test_saved_activation_bytes_reach_the_json_and_csv(tmp_path):
    import csv
    import json

    from mpdemo.cli.main import main

    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    assert main(["run", "--steps", "2", "--batch-size", "8", "--train-slice", "train[:32]",
                 "--eval-slice", "validation[:8]", "--device", "cpu",
                 "--quiet", "--json", str(out_json), "--csv", str(out_csv)]) == 0  # fmt: skip
    (run,) = json.loads(out_json.read_text())["runs"]
    saved = run["summary"]["saved_activation_bytes"]
    assert saved > 0
    rows = list(csv.DictReader(out_csv.open()))
    assert [int(r["saved_activation_bytes"]) for r in rows] == [saved, saved]


def _hooks_pushed() -> bool:
    return torch._C._autograd._top_saved_tensors_default_hooks(False) is not None


def test_saved_bytes_count_step_one_only_and_never_leave_hooks(small_cfg):
    from mpdemo import prepare
    from mpdemo.engine.recorder import Recorder

    prep = prepare(small_cfg)
    rec = Recorder(prep, lambda ev: None, threading.Event())
    rec.start()
    batches = iter(prep.train_dataloader)
    for _ in range(2):
        rec.begin()
        assert _hooks_pushed() == (rec.step == 0)  # armed for the first step only
        loss = prep.model(**next(batches)).loss
        loss.backward()
        prep.optimizer.step()
        prep.optimizer.zero_grad()
        rec.end(loss.detach(), None)
        assert not _hooks_pushed()
        if rec.step == 1:
            first = rec.saved_activation_bytes
    assert first > 0 and rec.saved_activation_bytes == first
    # A step that raises between begin() and end(): finish() pops the hooks all the same.
    rec2 = Recorder(prep, lambda ev: None, threading.Event())
    rec2.start()
    rec2.begin()
    assert _hooks_pushed()
    rec2.fail(RuntimeError("boom"))
    rec2.finish()
    assert not _hooks_pushed()


# --- numbers shown -----------------------------------------------------------------------------


def test_loss_scale_and_speedups_are_shown_exactly():
    from mpdemo.files.summary import scale_text, speedup_text, with_speedups
    from mpdemo.ui.train.session_table import speedup_cell

    assert scale_text(65536.0) == "65536"
    assert scale_text(2.0**18) == "262144"
    assert scale_text(2.0**24) == "2^24"
    assert scale_text(0.5) == "0.5"
    runs = [
        {"backend": "accelerate", "precision": "fp32", "samples_per_s": 100.0,
         "effective_dtype": "fp32", "step_time_cv": 0.3},
        {"backend": "accelerate", "precision": "fp16", "samples_per_s": 120.0, "median_step_s": 0.01,
         "effective_dtype": "fp32"},
        {"backend": "accelerate", "precision": "bf16", "samples_per_s": 120.0, "median_step_s": 0.01,
         "effective_dtype": "bf16"},
    ]  # fmt: skip
    runs = with_speedups(runs)
    # Accelerate's fp16 on a CPU computes in fp32: said so, the same way for every backend.
    assert speedup_text(runs[1]) == "ran in fp32"
    assert speedup_cell(runs[1], "es") == "se ejecutó en fp32"
    checks = compare(interleaved_times({"fp32": 0.012, "bf16": 0.010}))
    bf16 = with_speedups([*runs[:2], runs[2].replace(speed_check=checks["bf16"].to_dict())])[2]
    lo, hi = bf16.speedup_interval
    assert lo <= 1.2 <= hi and bf16.speed_verdict == "faster"
    assert speedup_text(bf16) == f"1.20x [{lo:.2f}-{hi:.2f}] faster"
    assert speedup_cell(bf16, "es") == f"1,20× [{lo:.2f}–{hi:.2f}] más rápido".replace(".", ",")


def test_speedups_compare_within_a_backend_and_a_model():
    # A GPU check's file holds two models: small-bert's bf16 is not measured against tiny-bert.
    from mpdemo.files.summary import with_speedups

    def run(model, precision, sps):
        return {"backend": "torch", "precision": precision, "model": model,
                "median_step_s": 1 / sps, "effective_dtype": precision}  # fmt: skip

    runs = [run("tiny-bert", "fp32", 1000.0), run("tiny-bert", "bf16", 2000.0),
            run("small-bert", "fp32", 100.0), run("small-bert", "bf16", 300.0)]  # fmt: skip
    out = with_speedups(runs)
    assert [s.speedup_vs_fp32 for s in out] == pytest.approx([1.0, 2.0, 1.0, 3.0])
    # Timed one after the other, in a file without an interval: the ratio, and no verdict.
    assert [s.speed_verdict for s in out] == [None, "unsure", None, "unsure"]


def test_a_loaded_files_run_is_never_measured_against_this_pages_fp32():
    # An H200 recording's bf16 next to this CPU's live fp32 once read "10x faster".
    def run(precision, ms, machine=None):
        return {"label": f"torch · {precision}", "backend": "torch", "precision": precision,
                "model": "tiny-bert", "median_step_s": ms / 1000, "steps": 100,
                "status": "completed", "effective_dtype": precision, "machine": machine,
                "saved_activation_bytes": 100 if precision == "fp32" else 50}  # fmt: skip

    from mpdemo.files.summary import with_speedups

    mixed = [run("fp32", 20.0), run("bf16", 2.0, machine="H200")]
    assert with_speedups(mixed)[1].speedup_vs_fp32 is None and N.memory_notes(mixed) == []
    same = [run("fp32", 4.0, machine="H200"), run("bf16", 2.0, machine="H200")]
    assert with_speedups(same)[1].speedup_vs_fp32 == pytest.approx(2.0)
    assert [n.key for n in N.memory_notes(same)] == ["mem_less"]


# --- the Hub entries the app offers, offline -----------------------------------------------------


@pytest.fixture
def offline(monkeypatch):
    import mpdemo.engine.hfhub

    monkeypatch.setattr(mpdemo.engine.hfhub, "hub_reachable", lambda *a, **k: False)


@pytest.mark.parametrize(
    "args", [["--model", "distilbert-base-uncased"], ["--dataset", "rotten_tomatoes"],
             ["--model", "prajjwal1/bert-tiny"]],
)  # fmt: skip
def test_offline_catalog_hub_entries_need_internet_in_the_cli(offline, capsys, args):
    from mpdemo.cli.main import EXIT_BAD_INPUT, main

    assert main(["run", *args, "--steps", "1"]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "needs internet (the Hugging Face Hub is not reachable" in err
    assert "did you mean" not in err and "is not a" not in err


def test_offline_catalog_hub_entries_need_internet_in_the_ui(offline):
    from mpdemo.messages import MpdemoError
    from mpdemo.ui.i18n import error_text
    from mpdemo.ui.train.inputs import DEFAULTS, check_inputs

    for change in ({"model": "distilbert-base-uncased"}, {"dataset": "rotten_tomatoes"}):
        with pytest.raises(MpdemoError) as info:
            check_inputs({**DEFAULTS, **change})
        assert info.value.key == "hub_entry_offline"
        assert "needs internet" in error_text(info.value, "en")
        assert "necesita internet" in error_text(info.value, "es")
        assert "precisa de internet" in error_text(info.value, "pt")


# --- the CLI header ------------------------------------------------------------------------------


def test_cli_header_prints_the_profile_and_the_same_sentences(capsys, small_cfg):
    from mpdemo.cli.main import main

    code = main(["run", "--precision", "fp32,bf16", "--steps", "5", "--quiet", "--batch-size",
                 "16", "--train-slice", "train[:128]", "--eval-slice", "validation[:32]",
                 "--device", "cpu"])  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"# {M.machine_note().text}"
    # The runs take turns: nothing is timed before them, and the header says how they measure.
    assert out[1].startswith("# the 2 runs take turns")
    # Under the table, the sentence of the runs' own measurement (2 timed rounds: too few).
    assert any(line.startswith("  bf16 against fp32 here: unsure") for line in out)
    assert any("less activation memory" in line for line in out)
