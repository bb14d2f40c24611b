"""The benchmark scripts run end to end on the CPU (figures are printed, never asserted), their
main() in this process: each would import torch again in a process of its own."""

from __future__ import annotations

import json
import sys

from conftest import ROOT

from mpdemo.files.recorded import read_runs
from mpdemo.teach import lesson_recordings as R
from mpdemo.teach.lesson_recordings import recording_for
from mpdemo.teach.lessons import get


def _bench(name: str):
    """A bench script as a module (its main() then runs in this process)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{name}_bench", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_check_runs_on_cpu_and_writes_json(tmp_path, monkeypatch, capsys):
    # In this process (a GPU machine runs it as a script; what it does is the same code).
    out = tmp_path / "cpu.json"
    # One lesson, two steps a run: the lesson recording's path, not its minute (on a GPU every
    # comparison lesson runs its own steps).
    # The overhead step too (on an H200 it stopped at `from overhead import measure`): its
    # paired children run in this process, the real code of each side (bench/overhead.one).
    _children_in_process(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["gpu_check.py", "--device", "cpu", "--steps", "4",
                                      "--overhead-backends", "torch", "--lessons", "underflow",
                                      "--lesson-steps", "2", "--out", str(out), "--sweep",
                                      "--sweep-args", "--sizes 64x2 --batch-sizes 4 --budget 1 "
                                      "--max-length 16 --no-memory --quiet"])  # fmt: skip
    _bench("gpu_check").main()
    printed = capsys.readouterr().out
    result = json.loads(out.read_text())
    overhead = result["overhead_vs_bare_loop"]
    assert list(overhead) == ["torch"] and overhead["torch"]["ratio"] > 0
    assert "overhead torch: engine/bare steps/s" in printed
    # The sweep, through the sweep command, beside --out, named for the device it ran on.
    sweep = result["sweep"]
    assert sweep["exit"] == 0 and sweep["file"].startswith("sweep-cpu-")
    points = json.loads((tmp_path / sweep["file"]).read_text())["points"]
    assert points and {(p["hidden"], p["layers"], p["batch_size"]) for p in points} == {(64, 2, 4)}
    assert set(result["lessons"]["underflow"]["loss_fall"]) == {
        c.label for c in get("underflow").configs()
    }
    runs = result["runs"]
    assert len(runs) == 9  # 3 backends x fp32/fp16/bf16
    # The runs JSON's shape, with the machine it ran on: the app loads it as a recording.
    assert result["version"] == 2 and result["machine"]["device_kind"] == "cpu"
    assert [r["summary"]["label"] for r in read_runs(out).runs] == [
        r["summary"]["label"] for r in runs
    ]
    for r in runs:
        s = r["summary"]
        assert s["status"] == "completed" and len(r["steps"]) == 4
        assert all("loss_scale" in st for st in r["steps"])  # the scale trajectory
        # The audit must tell the truth: only the torch loop autocasts fp16 on a CPU.
        expect = "fp32" if s["precision"] == "fp16" and s["backend"] != "torch" else s["precision"]
        assert s["effective_dtype"] == expect
    assert "wrote" in printed.splitlines()[-1]
    # The lesson's own runs, as `mpdemo lesson underflow --json` writes them, beside --out.
    lesson = result["lessons"]["underflow"]
    assert lesson["exit"] == 0 and lesson["file"].startswith("lesson-underflow-cpu-")
    rec = read_runs(tmp_path / lesson["file"])
    assert rec.machine["device_kind"] == "cpu"
    assert sorted(r["summary"]["label"] for r in rec.runs) == sorted(
        c.label for c in get("underflow").configs()
    )
    assert all(r["summary"]["device"] == "cpu" and len(r["steps"]) == 2 for r in rec.runs)
    # Found as the lesson's recording only where CPU runs are asked for: never as a GPU one.
    monkeypatch.setenv("MPDEMO_REFERENCE_DIR", str(tmp_path))
    assert recording_for("underflow") is None
    monkeypatch.setattr(R, "COUNTED_DEVICES", ("cpu",))
    found = recording_for("underflow")
    assert found is not None and found.path.name == lesson["file"]


def _children_in_process(monkeypatch) -> None:
    """bench/child.run_paired's two children run one after the other in this process (each
    as if it had run alone: its spans the whole time): the bench's own code, no torch import."""
    import contextlib
    import io

    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import child

    bench = _bench("overhead")

    def paired_in_process(script, args_a, args_b, slice_s):  # noqa: ANN001, ANN202
        outs = []
        for args in (args_a, args_b):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                bench.one(args[1], args[2], runs=int(args[4]), paired=True)
            outs.append(json.loads(out.getvalue().strip().splitlines()[-1]))
        return outs, [[(0.0, float("inf"))]] * 2

    monkeypatch.setattr(child, "run_paired", paired_in_process)
    from mpdemo.engine import cores

    monkeypatch.setattr(cores, "CHECK_S", cores.CHECK_S)  # the paired child switches it off


def test_overhead_bench_prints_ratios(tmp_path, monkeypatch, capsys):
    # In this process: each of the bench's measurements is a fresh process (bench/overhead.py's
    # spawn), eight torch imports that took 50-90 s of the suite; here `spawn` calls the same
    # child code (`one`) in-process, and main's rounds, ratios, table and JSON are the bench's own.
    import contextlib
    import io

    bench = _bench("overhead")
    spawned: list[str] = []

    def in_process(side: str, cfg: dict, runs: int = 1) -> dict[str, float]:
        spawned.append(side)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            bench.one(side, json.dumps(cfg), runs=runs)
        return json.loads(out.getvalue().strip().splitlines()[-1])

    monkeypatch.setattr(bench, "spawn", in_process)
    monkeypatch.setattr(sys, "argv", ["overhead.py", "--sequential", "--steps", "8",
                                      "--rounds", "1", "--backends", "torch",
                                      "--precisions", "fp32,bf16",
                                      "--json", str(tmp_path / "o.json")])  # fmt: skip
    bench.main()
    printed = capsys.readouterr().out
    assert "ratio" in printed and "speed-up vs fp32" in printed
    assert sorted(spawned) == ["bare"] * 4 + ["engine"] * 4  # long and short, both precisions
    assert set(json.loads((tmp_path / "o.json").read_text())) == {"torch/fp32", "torch/bf16"}

    # The paired design (the default): both sides' child code in this process, one after the
    # other, as if each had run alone (its spans: the whole time).
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import child

    def paired_in_process(script, args_a, args_b, slice_s):  # noqa: ANN001, ANN202
        outs = []
        for args in (args_a, args_b):
            side, cfg = args[1], args[2]
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                bench.one(side, cfg, runs=int(args[4]), paired=True)
            outs.append(json.loads(out.getvalue().strip().splitlines()[-1]))
        return outs, [[(0.0, float("inf"))]] * 2

    monkeypatch.setattr(child, "run_paired", paired_in_process)
    # The paired child switches off mpdemo's reading of the cores (module state): monkeypatch
    # puts it back after this test, or test_cores' tests on this worker would see it off.
    from mpdemo.engine import cores

    monkeypatch.setattr(cores, "CHECK_S", cores.CHECK_S)
    monkeypatch.setattr(sys, "argv", ["overhead.py", "--steps", "8", "--rounds", "1",
                                      "--backends", "torch", "--runs", "2",
                                      "--json", str(tmp_path / "p.json")])  # fmt: skip
    bench.main()
    printed = capsys.readouterr().out
    assert "taking turns every 0.5 s; 2 run(s) a side" in printed and " of 1 " in printed
    ratios = json.loads((tmp_path / "p.json").read_text())["torch/fp32"]["ratio"]
    assert len(ratios) == 1 and ratios[0] > 0


def test_paired_processes_never_run_at_once(tmp_path, monkeypatch):
    # bench/child.run_paired for real, on two small Python processes that spin for 1.5 s of
    # their own running time: one runs while the other is stopped, and the time each was let
    # run covers its work (its own clock, less the spans it was stopped).
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    import child

    script = tmp_path / "spin.py"
    script.write_text(
        "import json, time\n"
        "t0 = time.perf_counter(); cpu0 = time.process_time()\n"
        "while time.process_time() - cpu0 < 1.5: pass\n"
        "print(json.dumps({'t0': t0, 't1': time.perf_counter()}))\n"
    )
    (a, b), spans = child.run_paired(script, [], [], slice_s=0.2)
    import itertools

    # (b's first span is the moment it was being started, before its first stop)
    joined = sorted((s, e, i) for i in (0, 1) for s, e in spans[i][i:])
    for (_, end, i), (start, _, j) in itertools.pairwise(joined):
        assert i == j or start >= end - 1e-3, joined  # never both let run
    for out, sp in ((a, spans[0]), (b, spans[1])):
        ran = child.active_s(sp, out["t0"], out["t1"])
        assert 1.4 < ran < out["t1"] - out["t0"], (ran, out)


def test_lessons_bench_prints_wall_ratios_and_peak_memory(monkeypatch, capsys):
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "6")  # the tests' knob: every lesson in seconds
    monkeypatch.setattr(sys, "argv", ["lessons.py", "underflow", "--seeds", "3"])
    _bench("lessons").main()  # a 6-step lesson need not make its point: the figures print
    printed = capsys.readouterr().out
    assert "underflow seed 3: " in printed and "3 runs, peak RSS" in printed, printed
    assert "first 5 -> last 10" in printed and "below fp16's normal range" in printed, printed


def test_first_step_bench_prints_cold_and_warm(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["first_step.py", "--times", "2"])
    _bench("first_step").main()
    printed = capsys.readouterr().out
    assert "cold: first step" in printed and "warm: first step" in printed, printed


def test_every_bench_script_imports_names_that_exist():
    # bench/first_step.py imported a constant the Train tab no longer had, inside main(): it
    # failed only when someone ran it. Every `from mpdemo... import name` of every script,
    # wherever it sits in the file, must find its name.
    import ast
    import importlib

    missing = []
    for script in sorted((ROOT / "bench").glob("*.py")):
        for node in ast.walk(ast.parse(script.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mpdemo"):
                module = importlib.import_module(node.module)
                missing += [
                    f"{script.name}: {node.module}.{a.name}"
                    for a in node.names
                    if not hasattr(module, a.name)
                    and not (  # a submodule of a package: `from mpdemo.engine import fp8`
                        hasattr(module, "__path__")
                        and importlib.util.find_spec(f"{node.module}.{a.name}")
                    )
                ]
    assert not missing, missing
