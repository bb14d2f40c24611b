"""The size sweep: points stream, Stop keeps them, the crossover sentence never says more than
the points, memory figures are the tensors' bytes, oversized grids are refused in one line."""

from __future__ import annotations

import json
import math
import threading

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdemo.catalog import MODELS
from mpdemo.config import Limits, RunConfig
from mpdemo.engine.memory import accelerate_estimate, one_step
from mpdemo.messages import ConfigError
from mpdemo.runs.timing import MIN_ROUNDS, VERDICTS, SpeedCheck, verdict
from mpdemo.sweep import plan as sweep_plan
from mpdemo.sweep.events import SweepPoint
from mpdemo.sweep.notes import crossover_notes, sweep_document
from mpdemo.sweep.plan import build_model, peak_tflops, plan_sweep, size_params
from mpdemo.sweep.run import SweepRunner, run_sweep
from mpdemo.sweep.sizes import Size, parse_batch_sizes, parse_sizes
from mpdemo.sweep.spec import SweepPlan, SweepSpec

BASE = RunConfig(train_slice="train[:256]", device="cpu")
# Fast rates for plan_sweep in tests that do not time: the probe is left out.
FAST = {"fp32": 1e11, "bf16": 1e11, "fp16": 1e11}


def tiny_plan(**changes) -> SweepPlan:
    spec = SweepSpec(
        **{
            "sizes": parse_sizes("32x1,64x2"),
            "batch_sizes": (8,),
            "precisions": ("fp32", "bf16"),
            "base": BASE,
            "budget_s": 1.0,
            "memory_size": None,
            **changes,
        }
    )
    return plan_sweep(spec, rates=FAST)


# --- sizes and refusals ------------------------------------------------------------------------


def test_the_built_ins_are_points_of_the_grid():
    assert size_params(Size(64, 2)) == MODELS["tiny-bert"].approx_params
    assert size_params(Size(256, 4)) == MODELS["small-bert"].approx_params
    assert parse_sizes("small-bert,tiny-bert,128x2") == (
        Size(64, 2), Size(128, 2), Size(256, 4),
    )  # fmt: skip
    assert Size(64, 2).model == "tiny-bert" and Size(512, 8).model == "bert-512x8"


def test_a_sized_model_is_the_built_in_with_the_same_seed():
    from mpdemo import prepare

    prep = prepare(BASE.replace(steps=1, batch_size=8))
    again = build_model(prep.model, Size(64, 2), BASE.seed, torch.device("cpu"))
    mine, theirs = again.state_dict(), prep.model.state_dict()
    assert mine.keys() == theirs.keys()
    assert all(torch.equal(mine[k], theirs[k]) for k in mine)


@pytest.mark.parametrize(
    ("call", "key"),
    [
        (lambda: parse_sizes("64by2"), "sweep_bad_sizes"),
        (lambda: parse_sizes("100x2"), "sweep_bad_hidden"),
        (lambda: parse_sizes("64x0"), "sweep_bad_layers"),
        (lambda: parse_batch_sizes("8,x"), "sweep_bad_batch_sizes"),
        (lambda: parse_batch_sizes("0"), "bad_number"),
        (lambda: parse_batch_sizes("256", Limits(max_batch_size=128)), "bad_number"),
        (lambda: tiny_plan(precisions=("fp32",)), "sweep_one_precision"),
        (lambda: tiny_plan(precisions=("fp32", "fp8")), "sweep_precision"),
        (lambda: tiny_plan(sizes=parse_sizes(",".join(f"{32 * i}x1" for i in range(1, 70)))),
         "sweep_too_many_points"),
    ],
)  # fmt: skip
def test_bad_grids_are_refused_in_one_line(call, key):
    with pytest.raises(ConfigError) as err:
        call()
    assert err.value.key == key
    assert "\n" not in str(err.value) and str(err.value)


def test_oversized_grids_are_refused_before_anything_runs(monkeypatch):
    # Parameters over the server's cap (hosted: 150 M).
    spec = SweepSpec(sizes=parse_sizes("64x2,2048x4"), base=BASE, memory_size=None)
    with pytest.raises(ConfigError) as err:
        plan_sweep(spec, Limits(max_params=150_000_000), rates=FAST)
    assert err.value.key == "model_too_big" and "2048x4" in str(err.value)
    # More memory than is free.
    monkeypatch.setattr(sweep_plan, "free_memory_bytes", lambda device: 2**30)
    spec = SweepSpec(sizes=parse_sizes("1024x8"), batch_sizes=(128,), base=BASE)
    with pytest.raises(ConfigError) as err:
        plan_sweep(spec, rates=FAST)
    assert err.value.key == "sweep_memory" and "1024x8 at batch 128" in str(err.value)
    # Longer than the cap, by the estimate from the measured rate.
    monkeypatch.setenv("MPDEMO_MAX_SWEEP_S", "60")
    monkeypatch.setattr(sweep_plan, "free_memory_bytes", lambda device: 2**40)
    slow = {"fp32": 1e10, "bf16": 2e9}
    spec = SweepSpec(sizes=parse_sizes("512x8"), batch_sizes=(128,), base=BASE)
    with pytest.raises(ConfigError) as err:
        plan_sweep(spec, rates=slow)
    text = str(err.value)
    assert err.value.key == "sweep_too_long" and "\n" not in text
    assert "512x8 at batch 128" in text and "cap of 1 min" in text
    # The estimate itself: 6 x params x tokens over the rate; a warm-up and at least one
    # round (interleave stops at the point's cap), at most MIN_ROUNDS rounds past the budget.
    params = size_params(Size(512, 8))
    one_round = sum(6 * params * 128 * 64 / r for r in slow.values())
    total_s = err.value.note.args["total_min"] * 60
    assert 3 * one_round <= total_s <= (MIN_ROUNDS + 2) * one_round


def test_the_plan_orders_points_cheapest_first_and_always_times_fp32():
    plan = tiny_plan(batch_sizes=(32, 8), precisions=("bf16",))
    assert plan.precisions == ("fp32", "bf16")
    cost = [p.params * p.batch_size for p in plan.points]
    assert cost == sorted(cost) and len(plan.points) == 4


# --- running: points stream, Stop keeps them ---------------------------------------------------


def test_points_stream_and_stop_keeps_the_points_measured():
    plan = tiny_plan(sizes=parse_sizes("32x1,64x1,64x2"), budget_s=6.0)  # 2 s a point
    stop = threading.Event()
    events = []
    for ev in SweepRunner(plan, stop).start().events():
        events.append(ev)
        if ev.kind == "point":
            stop.set()  # after the first point: the rest are not measured
    kinds = [e.kind for e in events]
    assert kinds[0] == "sweep_plan" and kinds[-1] == "sweep_end"
    assert kinds.count("point") == 1 and "memory" not in kinds
    end, point = events[-1], events[1]
    assert end.status == "stopped" and end.points == 1 and end.total == 3
    assert point.model == "bert-32x1" and set(point.step_s) == {"fp32", "bf16"}
    check = point.check("bf16")
    assert check.rounds >= MIN_ROUNDS and check.verdict in ("faster", "slower", "same", "unsure")
    assert point.samples_per_s["fp32"] == pytest.approx(8 / point.step_s["fp32"])
    flops = 6 * point.params * 8 * BASE.max_length
    assert point.tflops["fp32"] == pytest.approx(flops / point.step_s["fp32"] / 1e12)
    assert point.mfu == {"fp32": None, "bf16": None}  # no peak for a CPU
    # The sentence is rendered from the one point kept, and names it.
    assert [n["args"]["sizes"] for n in end.notes] == ["32x1"]
    assert "32x1" in end.notes[0]["text"]


def test_a_point_never_shares_the_cores_with_a_training_of_this_process():
    from mpdemo.runs.runner import RUN_LOCK

    plan = tiny_plan(sizes=parse_sizes("32x1"))
    stop = threading.Event()
    events: list = []
    with RUN_LOCK:  # a training holds the cores: the point waits for them
        worker = threading.Thread(target=run_sweep, args=(plan, events.append, stop))
        worker.start()
        worker.join(1.0)
        assert [e.kind for e in events] == ["sweep_plan"]  # nothing timed meanwhile
        stop.set()  # Stop while it waits: it ends at once, nothing measured
        worker.join(10)
    assert not worker.is_alive()
    assert events[-1].kind == "sweep_end" and events[-1].status == "stopped"
    assert events[-1].points == 0


def test_mfu_uses_the_dense_peak_of_the_named_device():
    assert peak_tflops("NVIDIA H100 80GB HBM3", "bf16") == ("bf16", 989.0)
    assert peak_tflops("NVIDIA H200", "fp8") == ("fp8", 1979.0)
    assert peak_tflops("NVIDIA H100 PCIe", "bf16") == ("bf16", 756.0)
    assert peak_tflops("NVIDIA GeForce RTX 3060", "bf16") is None
    assert peak_tflops(None, "bf16") is None
    before = torch.get_float32_matmul_precision()
    try:
        torch.set_float32_matmul_precision("highest")
        assert peak_tflops("NVIDIA H200", "fp32") == ("fp32", 67.0)
        torch.set_float32_matmul_precision("high")  # fp32 matmuls run as TF32
        assert peak_tflops("NVIDIA H200", "fp32") == ("tf32", 494.5)
    finally:
        torch.set_float32_matmul_precision(before)


# --- the crossover sentence never contradicts the points ---------------------------------------

VERDICT = st.sampled_from(VERDICTS)
SIZES = [Size(64, 2), Size(128, 2), Size(256, 4), Size(512, 4), Size(512, 8)]
# Intervals (speed-up, low, high) that the one rule calls each verdict.
INTERVALS = {"faster": (1.5, 1.3, 1.7), "slower": (0.5, 0.4, 0.6), "same": (1.0, 0.97, 1.03),
             "unsure": (1.1, 0.8, 1.5)}  # fmt: skip


def test_the_simulated_intervals_are_what_the_rule_says():
    for v, (_, low, high) in INTERVALS.items():
        assert verdict(low, high, 8)[0] == v


def fake_point(size: Size, batch: int, verdicts: dict[str, str]) -> SweepPoint:
    """A point whose precisions have the given verdicts, as SpeedChecks the rule would make (a
    bigger batch steps longer: one size's checks at two batches differ, as measured ones do)."""
    checks = {}
    for precision, v in verdicts.items():
        mid, low, high = INTERVALS[v]
        base = 0.01 * batch / 8
        checks[precision] = SpeedCheck(
            precision, "fp32", mid, low, high, 8, 1, base / mid, base, 0.02, 0.0, 0.0, v,
            "wide" if v == "unsure" else None,
        ).to_dict()  # fmt: skip
    steps = {"fp32": 0.01, **{p: 0.01 / INTERVALS[v][0] for p, v in verdicts.items()}}
    return SweepPoint(
        index=0, total=1, model=size.model, hidden=size.hidden, layers=size.layers,
        params=size_params(size), batch_size=batch, seq=64, device="cpu", step_s=steps,
        checks=checks, samples_per_s={p: batch / s for p, s in steps.items()},
        tflops={p: 0.0 for p in steps}, mfu={p: None for p in steps},
        peak={p: None for p in steps}, load=None, wall_s=0.1,
    )  # fmt: skip


def listed(arg) -> dict[str, set[str]]:
    """{verdict: sizes} a breakdown names (its nested at_<verdict> parts)."""
    out: dict[str, set[str]] = {}
    if isinstance(arg, dict) and "key" in arg:
        if arg["key"].startswith("at_"):
            verdict_ = arg["key"][3:].removesuffix("_then")
            assert verdict_ not in out, f"{verdict_} named twice"
            out[verdict_] = set(arg["args"]["sizes"].split(", "))
        for v in (arg.get("args") or {}).values():
            out.update(listed(v))
    return out


def contradictions(notes, points) -> list[str]:
    """Every claim of every note checked against the points, independently of the renderer."""
    bad = []
    for note in notes:
        a, key = note.args, note.key
        series = sorted(
            (p.params, f"{p.hidden}x{p.layers}", p.check(a["precision"]).verdict)
            for p in points
            if p.check(a["precision"]) is not None
            and ("batch" not in a or p.batch_size == a["batch"])
        )
        verdicts = [v for _, _, v in series]
        k = [n for _, n, _ in series].index(a["size"]) if "size" in a else len(series)
        # A breakdown names exactly the sizes of each verdict (below the crossover for "from").
        scope = series[:k] if key == "pays_from" else series
        truth: dict[str, set[str]] = {}
        for _, n, v in scope:
            truth.setdefault(v, set()).add(n)
        if "breakdown" in a and listed(a["breakdown"]) != truth:
            bad.append(f"{key}: names {listed(a['breakdown'])}, points say {truth}")
        if "sizes" in a and set(a["sizes"].split(", ")) != {n for _, n, _ in series}:
            bad.append(f"{key}: sizes {a['sizes']} but {series}")
        if key in ("pays_never", "pays_never_anywhere", "pays_never_anywhere_one") and {
            "faster",
            "unsure",
        } & set(verdicts):
            bad.append(f"{key} but {verdicts}")
        if key == "pays_never_unsure" and ("faster" in verdicts or "unsure" not in verdicts):
            bad.append(f"{key} but {verdicts}")
        if key in ("pays_always", "pays_always_anywhere", "pays_always_anywhere_one") and set(
            verdicts
        ) != {"faster"}:
            bad.append(f"{key} but {verdicts}")
        if key == "pays_unsure" and set(verdicts) != {"unsure"}:
            bad.append(f"{key} but {verdicts}")
        if key == "pays_from":
            if set(verdicts[k:]) != {"faster"} or "faster" in verdicts[:k] or k == 0:
                bad.append(f"{key} from {a['size']} but {verdicts}")
            if abs(a["from_m"] - series[k][0] / 1e6) > 1e-9:
                bad.append(f"{key}: from {a['from_m']} M, the point has {series[k][0]}")
        if key == "pays_mixed":
            faster = [v == "faster" for v in verdicts]
            if not any(faster) or all(faster[faster.index(True) :]):
                bad.append(f"{key} but {verdicts}")
    # Every precision and batch measured is spoken of, once.
    spoken = [(n.args["precision"], n.args.get("batch")) for n in notes]
    if len(spoken) != len(set(spoken)):
        bad.append(f"spoken of twice: {spoken}")
    for p in points:
        for precision in p.checks:
            if (precision, p.batch_size) not in spoken and (precision, None) not in spoken:
                bad.append(f"{precision} at batch {p.batch_size} is not spoken of")
    return bad


@pytest.mark.parametrize(
    ("pattern", "expect", "says"),
    [
        (
            {8: "ssff", 32: "sfff"},
            ["pays_from", "pays_from"],
            # "bf16 pays from about 3 M parameters at batch 32": the first faster point's size.
            "at batch 8, bf16 pays here from about 3.58 M parameters: faster from 256x4 up (1.50x "
            "there, 95 % interval 1.30-1.70x); below it, slower at 64x2, 128x2 at batch 32, bf16 "
            "pays here from about 0.589 M parameters",
        ),
        ({8: "ssss", 32: "ssss"}, ["pays_never_anywhere"], "bf16 never pays on this CPU:"),
        ({8: "ffff", 32: "ffff"}, ["pays_always_anywhere"], "bf16 pays on this CPU at each"),
        ({32: "suff"}, ["pays_from"], "below it, slower at 64x2; unsure at 128x2"),
        ({32: "fsfs"}, ["pays_mixed"], "faster at 64x2, 256x4; slower at 128x2, 512x4"),
        ({32: "uuuu"}, ["pays_unsure"], "unsure at every size measured"),
        ({8: "sssu", 32: "ssss"}, ["pays_never_unsure", "pays_never"], "unsure at 512x4"),
        ({32: "f"}, ["pays_always"], "paid at every size measured (64x2;"),
        ({32: "=s=s"}, ["pays_never"], "slower at 128x2, 512x4; the same as fp32 at 64x2, 256x4"),
    ],
)
def test_the_crossover_sentence_on_simulated_points(pattern, expect, says):
    code = {"f": "faster", "s": "slower", "=": "same", "u": "unsure"}
    points = [
        fake_point(SIZES[i], batch, {"bf16": code[c]})
        for batch, verdicts in pattern.items()
        for i, c in enumerate(verdicts)
    ]
    notes = crossover_notes(points, "cpu")
    assert [n.key for n in notes] == expect
    assert contradictions(notes, points) == []
    assert says in " ".join(n.text for n in notes)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from([8, 32, 128]),
        st.lists(st.tuples(VERDICT, VERDICT), min_size=1, max_size=len(SIZES)),
        min_size=1,
    )
)
def test_the_crossover_sentence_never_contradicts_any_point_set(pattern):
    points = [
        fake_point(SIZES[i], batch, {"bf16": bf16, "fp16": fp16})
        for batch, verdicts in pattern.items()
        for i, (bf16, fp16) in enumerate(verdicts)
    ]
    notes = crossover_notes(points, "cpu")
    assert contradictions(notes, points) == []
    for n in notes:  # every sentence renders in full (no template left over)
        assert "{" not in n.text and n.args["precision"] in n.text


# --- memory anatomy: the tensors' own bytes ---------------------------------------------------


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_memory_figures_are_the_tensors_bytes(precision):
    from mpdemo import prepare

    prep = prepare(BASE.replace(steps=1, batch_size=16))
    model, optimizer = prep.model, prep.optimizer
    batch = next(iter(prep.train_dataloader))
    a = one_step(model, optimizer, batch, torch.device("cpu"), precision, BASE)
    params = list(model.parameters())
    assert a.params == sum(p.numel() for p in params) == prep.params
    assert a.weights_bytes == sum(p.numel() * p.element_size() for p in params)
    assert a.weights_bytes == 4 * a.params  # autocast keeps the weights in fp32
    assert a.grads_bytes == sum(p.grad.numel() * p.grad.element_size() for p in params)
    assert a.grads_bytes == 4 * a.params  # and the gradients
    state = [t for s in optimizer.state.values() for t in s.values() if torch.is_tensor(t)]
    moments = sum(
        optimizer.state[p][k].numel() * 4 for p in params for k in ("exp_avg", "exp_avg_sq")
    )
    assert moments == 8 * a.params
    assert a.optimizer_bytes == sum(t.numel() * t.element_size() for t in state)
    assert a.optimizer_bytes == moments + sum(optimizer.state[p]["step"].nbytes for p in params)
    # Saved activations: at most what autograd saved in all (the hooks count a subset of it).
    saved_all: dict[int, int] = {}

    def pack(t):
        saved_all[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    from mpdemo.engine.precision import autocast

    with (
        torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t),
        autocast(torch.device("cpu"), precision),
    ):
        model(**batch).loss.backward()
    assert 0 < a.saved_activation_bytes <= sum(saved_all.values())
    assert a.peak_mem_bytes is None  # no CUDA allocator here
    assert (
        a.total_bytes
        == a.weights_bytes + a.grads_bytes + a.optimizer_bytes + a.saved_activation_bytes
    )


def test_accelerates_rule_is_its_own_function():
    assert accelerate_estimate(1000, "fp32")["training"] == 4 * 4000
    assert accelerate_estimate(1000, "bf16")["training"] == 2 * 4000
    assert accelerate_estimate(1000, "fp16")["gradients"] == 6000  # 1.5 x the fp32 model
    assert accelerate_estimate(1000, "fp8") is None


# --- the command line --------------------------------------------------------------------------


def test_cli_sweep_writes_the_documented_json_and_csv(tmp_path, capsys):
    from mpdemo.cli.main import main

    out, csv_path = tmp_path / "s.json", tmp_path / "s.csv"
    rc = main([
        "sweep", "--sizes", "32x1", "--batch-sizes", "8", "--budget", "1", "--device", "cpu",
        "--train-slice", "train[:256]", "--batch-size", "8", "--memory-size", "32x1",
        "--json", str(out), "--csv", str(csv_path), "--published",
    ])  # fmt: skip
    printed = capsys.readouterr().out
    assert rc == 0, printed
    doc = json.loads(out.read_text())
    assert {"version", "machine", "points", "memory"} <= set(doc)
    assert len(doc["points"]) == 2  # fp32 and bf16 at the one point
    for row in doc["points"]:
        assert {"model", "params", "hidden", "layers", "batch_size", "precision", "step_s",
                "speedup_vs_fp32", "speedup_interval", "speed_verdict"} <= set(row)  # fmt: skip
        assert (row["hidden"], row["layers"], row["batch_size"]) == (32, 1, 8)
    bf16 = next(r for r in doc["points"] if r["precision"] == "bf16")
    lo, hi = bf16["speedup_interval"]
    assert lo <= bf16["speedup_vs_fp32"] <= hi and bf16["speed_verdict"] in VERDICTS
    for part in doc["memory"].values():
        assert {"weights_bytes", "grads_bytes", "optimizer_bytes", "saved_activation_bytes",
                "peak_mem_bytes"} <= set(part)  # fmt: skip
    assert doc["memory"]["fp32"]["weights_bytes"] == 4 * doc["memory_of"]["params"]
    assert "[1/1] bert-32x1" in printed and "bf16" in printed
    assert doc["crossover"][0]["text"] in printed  # the sentence printed is the file's
    # Published figures come last, under their own heading, and never into the file's points.
    assert printed.index("# published, not run here") > printed.index(doc["crossover"][0]["text"])
    assert "issues/15026" in printed and "15026" not in json.dumps(doc["points"])
    # So do the GPU sweeps that ship, each under a heading naming its machine and file.
    recorded = printed.index("# recorded with this code on NVIDIA H200")
    assert printed.index(doc["crossover"][0]["text"]) < recorded < printed.index("# published")
    assert "bf16 pays on the H200 from about 26.2 M parameters" in printed[recorded:]
    assert "H200" not in json.dumps(doc)
    # The file this command wrote is one the recorded-sweep reader opens (a GPU's, copied over).
    from mpdemo.sweep.recorded import read_sweep

    (point,) = read_sweep(out).points
    assert point.check("bf16").verdict == bf16["speed_verdict"] and point.shape()["seq"] == 64
    assert csv_path.read_text().splitlines()[0].startswith("model,params,hidden,layers")


@pytest.mark.parametrize(
    "args",
    [
        ["sweep", "--sizes", "64x"],
        ["sweep", "--batch-sizes", "8,0"],
        ["sweep", "--precision", "fp32,fp9"],
        ["sweep", "--model", "tiny-gpt2"],
        ["sweep", "--budget", "nan"],
        ["sweep", "--sizes", "4096x48"],
    ],
)
def test_cli_sweep_bad_input_exits_2_with_one_line(args, capsys):
    from mpdemo.cli.main import main

    try:
        rc = main(args)
    except SystemExit as exit_:  # argparse's own refusals (a precision it does not know)
        rc = exit_.code
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("mpdemo: error:") and err.count("\n") == 1


def test_cli_sweep_refuses_an_output_path_it_cannot_write_before_timing(tmp_path, capsys):
    from mpdemo.cli.main import main

    rc = main(["sweep", "--sizes", "32x1", "--json", str(tmp_path / "no" / "s.json")])
    err = capsys.readouterr()
    assert rc == 2 and err.err.count("\n") == 1 and "does not exist" in err.err
    assert "[1/" not in err.out  # nothing was timed


# --- published figures and other languages -----------------------------------------------------


def test_published_figures_are_data_with_their_sources_and_never_points():
    from mpdemo.cli.sweep import published_lines
    from mpdemo.teach.published import PUBLISHED

    assert len(PUBLISHED) == 6
    for row in PUBLISHED:
        assert row.url.startswith("https://") and row.hardware and row.workload
        if row.figure is not None:
            assert row.speedup == pytest.approx(row.figure / row.baseline_figure)
    t5 = {r.precision: r.figure for r in PUBLISHED if "15026" in r.url}
    assert t5 == {"tf32": 210.5, "fp16": 217.8, "bf16": 224.1}
    lines = published_lines()
    assert lines[0].startswith("# published, not run here")
    doc = sweep_document([], None, machine={"device_kind": "cpu"})
    assert doc["points"] == [] and "published" not in json.dumps(doc)


def test_the_crossover_renders_in_every_language():
    from mpdemo.ui import i18n

    code = {"f": "faster", "s": "slower", "=": "same", "u": "unsure"}
    points = [fake_point(SIZES[i], 32, {"bf16": code[c]}) for i, c in enumerate("=uff")]
    (note,) = crossover_notes(points, "cpu")
    es = i18n.message(note.key, note.args, "es")
    assert es.startswith("con lote 32, bf16 compensa aquí a partir de unos 3,58 M parámetros")
    assert "igual que fp32 en 64x2; en duda en 128x2" in es
    pt = i18n.message(note.key, note.args, "pt")
    assert "igual a fp32 em 64x2; em dúvida em 128x2" in pt and "3,58 M" in pt


# --- the "Where it pays" tab's handlers ----------------------------------------------------------


def test_the_tab_streams_points_and_stop_keeps_them():
    import gradio as gr

    from mpdemo.ui.tabs import pays

    state = pays.SweepState()
    assert pays.stop_sweep(state, "en").startswith("No sweep is running")
    frames = []
    answers = []
    # 2 s a point: Stop, pressed once the first point is in, lands inside the second.
    for out in pays.run_sweep_ui("es", "32x1,64x1,64x2", "8", ["bf16"], 6, state):
        frames.append(out)
        if state.points and not state.stop.is_set():
            # Stop from another thread, as the page's button does: it answers with the outcome.
            press = threading.Thread(target=lambda: answers.append(pays.stop_sweep(state, "es")))
            press.start()
    press.join()
    kept = len(state.points)
    assert 1 <= kept < 3 and state.end.status == "stopped" and state.end.points == kept
    assert answers[0].startswith(f"Detenido: se conservan {kept} de 3 puntos"), answers
    assert frames[0]["plot"]["__type__"] == "update" and frames[0]["plot"]["value"] is None
    cmap = frames[0]["plot"]["color_map"]
    assert set(cmap) == {"fp32 = 1", "bf16 · batch 8", "bf16 · batch 8 · 95 % low",
                         "bf16 · batch 8 · 95 % high"}  # fmt: skip
    last = frames[-1]
    assert last["status"] == answers[0]  # the button's answer is the page's last word
    df = last["plot"]
    assert set(df["series"]) <= set(cmap)  # every series drawn has its colour from the start
    bf16 = df[df["series"] == "bf16 · batch 8"]
    assert bf16["speedup"].tolist() == [round(p.check("bf16").speedup, 4) for p in state.points]
    assert bf16["log10_params"].tolist() == [
        pytest.approx(math.log10(p.params), abs=1e-4) for p in state.points
    ]
    assert len(last["table"]) == 2 * kept and "32x1" in last["crossover"]
    assert last["memory"] is None  # stopped: no anatomy
    assert isinstance(last["stop"], dict) and last["stop"]["interactive"] is False
    # A refusal: one line, in the page's language, and nothing runs.
    with pytest.raises(gr.Error) as err:
        list(pays.run_sweep_ui("es", "64y2", "8", ["bf16"], 1, pays.SweepState()))
    assert "los tamaños son pares ancho x capas" in str(err.value.message)
    assert "\n" not in str(err.value.message)


def test_the_tab_draws_the_memory_anatomy_and_published_figures():
    from mpdemo.ui.tabs import pays

    state = pays.SweepState()
    *_, last = pays.run_sweep_ui("en", "32x1", "8", ["bf16"], 1, state)
    assert state.end.status == "completed" and state.memory is not None
    bars = last["memory"]
    fp32 = bars[bars["bar"] == "fp32"].set_index("part")["mib"]
    parts = state.memory.parts["fp32"]
    assert fp32["weights"] == pytest.approx(parts["weights_bytes"] / 2**20)
    assert fp32["saved activations"] == pytest.approx(parts["saved_activation_bytes"] / 2**20)
    rule = bars[bars["bar"] == "fp32 · Accelerate’s rule"]["mib"].item()
    assert rule == pytest.approx(16 * state.memory.params / 2**20)  # 4S, S = 4 bytes a parameter
    assert (
        "Memory of one step:" in last["memory_notes"]
        and "Accelerate's rule" in last["memory_notes"]
    )
    table = pays.published_html("pt")
    assert "Publicado, não executado aqui" in table and table.count("<a href=") == 6
    # torchao's small fp8 matmul (0.80 of bf16's speed): N >= 1 in words, never "0,80×".
    assert "1,25× mais lento" in table and "0,80×" not in table
    assert "Done: 1 of 1 points" in last["status"]


def test_a_point_whose_warm_up_outran_its_cap_is_still_on_the_plot(monkeypatch):
    # The largest size's 16-bit steps on a CPU without 16-bit instructions: the warm-up steps
    # alone outran the point's cap. The point still gets one interleaved round, so the plot
    # draws it (issue 27: "the 512x8 bf16 points missing") and the table says why it is unsure.
    from mpdemo.runs import timing
    from mpdemo.sweep import run as sweep_run
    from mpdemo.ui.tabs import pays

    def capped(steppers, **kw):  # every point's cap already spent by its warm-up steps
        return timing.interleave(steppers, **{**kw, "budget_s": 0.0, "cap_s": 0.0})

    monkeypatch.setattr(sweep_run, "interleave", capped)
    state = pays.SweepState()
    last = list(pays.run_sweep_ui("en", "32x1", "8", ["bf16"], 1, state))[-1]
    (point,) = state.points
    check = point.check("bf16")
    assert check.rounds == 1 and check.speedup is not None and check.interval is None
    df = last["plot"]
    drawn = df[(df["series"] == "bf16 · batch 8") & df["speedup"].notna()]
    assert drawn["speedup"].tolist() == [round(check.speedup, 4)]
    assert (check.verdict, check.reason) == ("unsure", "too_few")


@pytest.mark.parametrize("verdict_", ["slower", "faster"])
def test_two_points_of_one_size_name_one_size_not_a_range(verdict_):
    # Issue 27: "(0.19 to 0.19 M parameters)" after two points (two batch sizes) of one size.
    from mpdemo.ui.i18n import message

    points = [fake_point(SIZES[0], b, {"bf16": verdict_}) for b in (8, 32)]
    (note,) = crossover_notes(points, "cpu")
    assert note.key.endswith("_anywhere_one")
    said = {lang: message(note.key, note.args, lang) for lang in ("en", "es", "pt")}
    assert "one size, 0.192 M parameters" in said["en"]
    assert "un solo tamaño, 0,192 M" in said["es"] and "um só tamanho, 0,192 M" in said["pt"]
    assert not any("0.19 to" in s or "0,19 a" in s for s in said.values())
