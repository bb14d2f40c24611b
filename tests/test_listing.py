"""The code on screen is the code that runs: listings, reproduce scripts, and their losses."""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import ROOT
from forked import run_scripts

from mpdemo.cli.main import main
from mpdemo.config import RunConfig
from mpdemo.registry import BACKENDS
from mpdemo.teach import listing as L
from mpdemo.teach import loop_source as S

# Every backend x precision that really runs as asked on a CPU (Accelerate and the Trainer
# run fp16 as fp32 there, so their fp16 script would prove nothing new).
ON_CPU = [
    ("torch", "fp32"),
    ("torch", "fp16"),
    ("torch", "bf16"),
    ("accelerate", "fp32"),
    ("accelerate", "bf16"),
    ("trainer", "fp32"),
    ("trainer", "bf16"),
]
FLAGS = ["--steps", "6", "--batch-size", "8", "--train-slice", "train[:48]",
         "--eval-slice", "validation[:16]", "--device", "cpu"]  # fmt: skip
STEP_LINE = re.compile(r"^step (\d+)\b.*\bloss (\S+)", re.M)
# One thread per process: several run at once on two cores, and the same thread count in the
# engine and in the scripts keeps their float sums in the same order.
ENV = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}


def _code(backend: str, precision: str) -> str:
    """`python -m mpdemo code ...`'s stdout, from the same main() the module runs."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["code", "--backend", backend, "--precision", precision, *FLAGS]) == 0
    return out.getvalue()


def _python(args: list[str], timeout: int = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=ENV, timeout=timeout
    )


def test_scripts_reproduce_the_engines_losses(tmp_path) -> None:
    scripts = {}
    for backend, precision in ON_CPU:
        path = tmp_path / f"{backend}_{precision}.py"
        path.write_text(_code(backend, precision), encoding="utf-8")
        scripts[backend, precision] = path
    grid = [
        "-m", "mpdemo", "run", "--backend", "torch,accelerate,trainer",
        "--precision", "fp32,fp16,bf16", *FLAGS, "--quiet", "--json", str(tmp_path / "runs.json"),
    ]  # fmt: skip
    code_cli = ["-m", "mpdemo", "code", "--backend", "trainer", "--precision", "bf16", *FLAGS]
    with ThreadPoolExecutor(max_workers=1) as pool:
        # The real command line, in a process of its own; the scripts each in a process forked
        # from one that imported torch once (tests/forked.py), two at a time.
        cli = pool.submit(_python, code_cli)
        runs = pool.submit(run_scripts, list(scripts.values()), ROOT)
        # The engine's grid through the CLI's main() in this process, on one thread as the
        # scripts run: the same float sums.
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                assert main(grid[2:]) == 0
        finally:
            torch.set_num_threads(threads)
        # The real command line prints the very text main() printed.
        assert cli.result().returncode == 0, cli.result().stderr[-2000:]
        assert cli.result().stdout == scripts["trainer", "bf16"].read_text(encoding="utf-8")
        recorded = json.loads((tmp_path / "runs.json").read_text(encoding="utf-8"))["runs"]
        engine_losses = {
            (r["summary"]["backend"], r["summary"]["precision"]): [s["loss"] for s in r["steps"]]
            for r in recorded
        }
        for key, proc in zip(scripts, runs.result(), strict=True):
            assert proc.returncode == 0, f"{key}: {proc.stderr[-2000:]}"
            steps = STEP_LINE.findall(proc.stdout)
            assert [int(n) for n, _ in steps] == list(range(1, 7)), f"{key}: {proc.stdout}"
            losses = [float(v) for _, v in steps]
            assert len(engine_losses[key]) == 6, key
            assert losses == pytest.approx(engine_losses[key], rel=1e-5), key


@pytest.mark.parametrize(("backend", "precision"), ON_CPU)
def test_every_changed_line_is_explained(backend: str, precision: str) -> None:
    lst = L.listing(RunConfig(backend=backend, precision=precision, device="cpu"))
    changed = [ln for ln in lst.lines if ln.kind in ("changed", "new")]
    assert changed, "a listing identical to the course's would need no Code tab"
    for ln in changed + [ln for ln in lst.lines if ln.kind == "mpdemo"]:
        assert ln.why, f"{backend}: no comment explains {ln.text!r}"
    assert lst.changes() and lst.mpdemo_lines()
    assert lst.removed == [], "a course line with no counterpart would go unexplained"
    # Nothing said about this machine's speed: that comes from measurements only.
    text = " ".join(lst.changes() + lst.mpdemo_lines()).lower()
    for claim in ("fast path", "faster", "slower", "saves memory"):
        assert claim not in text


@pytest.mark.parametrize("backend", ["torch", "accelerate", "trainer"])
def test_listing_is_the_loops_source_with_settings_filled_in(backend: str) -> None:
    source = inspect.getsource(BACKENDS[backend].load().train_loop)
    cfg = RunConfig(backend=backend, precision="bf16", device="cpu", steps=7, init_scale=1024.0)
    lst = L.listing(cfg)
    names = set(S.settings_names(backend))
    for line in lst.body.splitlines():
        filled = {k for k in names if k in lst.settings and S.literal(lst.settings[k]) in line}
        if line.strip() and not filled:  # untouched lines are the source's own, word for word
            assert line.strip() in source, line
    assert "1024.0" in lst.body  # init_scale reaches the scaler in all three loops
    script = L.script_for(cfg)
    assert script.endswith(lst.body)
    assert "steps=7," in script and 'device="cpu",' in script
    compile(script, "script.py", "exec")


def test_settings_follow_the_run() -> None:
    fp16 = L.listing(RunConfig(backend="torch", precision="fp16", device="cpu", loss_scaling=False))
    assert fp16.settings["loss_scaling"] is False and "enabled=False" in fp16.body
    assert "dtype=torch.float16" in fp16.body
    bf16 = L.listing(RunConfig(backend="torch", precision="bf16", device="cpu"))
    assert "dtype=torch.bfloat16, enabled=True" in bf16.body
    trainer = L.listing(RunConfig(backend="trainer", precision="fp16", device="cpu", steps=9))
    assert "max_steps=9," in trainer.body and "fp16=True," in trainer.body
    assert "logging_nan_inf_filter=False" in trainer.body  # the NaN lesson stays in the listing
    assert "init_scale=65536.0" in trainer.body  # the Trainer's own scaler gets the settings
    acc = L.listing(RunConfig(backend="accelerate", precision="bf16", device="cpu"))
    assert 'mixed_precision="bf16"' in acc.body and "cpu=True" in acc.body
    assert "split_batches=True" in acc.body
    lm = L.listing(RunConfig(backend="trainer", model="tiny-gpt2", device="cpu"))
    assert "compute_metrics=None" in lm.body and "prediction_loss_only=True" in lm.body


def test_code_command_takes_run_flags_and_one_run(capsys) -> None:
    assert main(["code", "--backend", "torch,trainer", *FLAGS]) == 2
    assert "one --backend" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["code", "--steps", "0x"])
    assert exit_info.value.code == 2
    # --json/--csv/--quiet belong to `run` and are accepted (and ignored), so a run's command
    # line becomes its script by changing one word.
    assert main(["code", *FLAGS, "--quiet", "--json", "x.json"]) == 0
    assert "mpdemo_torch_fp32.py" in capsys.readouterr().out


def test_skipped_steps_do_not_step_the_schedule(small_cfg: RunConfig) -> None:
    # A scale of 2^21 overflows fp16 gradients: GradScaler skips steps until the scale fits, and
    # the learning-rate schedule skips them too (as Accelerate's and the Trainer's do).
    import threading

    from mpdemo.engine.core import execute, prepare

    events: list = []
    prep = prepare(small_cfg.replace(precision="fp16", init_scale=2.0**21, steps=4))
    summary = execute(prep, events.append, threading.Event())
    skipped = [e.skipped for e in events if e.kind == "step"]
    assert summary["status"] == "completed" and any(skipped) and not all(skipped)
    assert prep.lr_scheduler.last_epoch == skipped.count(False)


@pytest.mark.parametrize("precision", ["fp32", "fp16", "bf16"])
def test_no_line_contradicts_its_explanation(precision: str) -> None:
    # The torch loop's comment says "the model's own device type, not a hard-coded 'cpu'": the
    # line under it must show the name the loop uses, and the script must define that name.
    lst = L.listing(RunConfig(backend="torch", precision=precision, device="cpu"))
    explained = [ln for ln in lst.lines if ln.why and "hard-coded" in ln.why]
    assert explained, "the torch loop's device-type comment is gone: update this test"
    for ln in explained:
        assert '"cpu"' not in ln.code and "device_type=device_type" in ln.code, ln.text
    assert not [ln.code for ln in lst.lines if '"cpu"' in ln.code]  # a name, not a literal
    script = L.script_of(lst)
    head, body = script[: -len(lst.body)], lst.body
    assert 'device_type = prep.device.type  # "cpu" for this run' in head
    assert "device_type =" not in body  # defined once, above the loop


def test_the_trainer_listing_shows_the_slide_s_arguments_and_folds_mpdemo_s_own() -> None:
    from mpdemo.ui.tabs import code as C

    lst = L.listing(RunConfig(backend="trainer", precision="bf16", device="cpu"))
    call = [ln for ln in lst.lines if ln.code.startswith("    ")][:5]
    # TrainingArguments opens on the slide's arguments: the basics and the precision flags.
    assert [ln.code.split("=")[0].strip() for ln in call[:4]] == [
        "output_dir", "eval_strategy", "fp16", "bf16"
    ]  # fmt: skip
    folded = [ln for ln in lst.lines if ln.fold == "in" and ln.kind != "neutral"]
    assert len(folded) >= 15 and all(ln.code.startswith("    ") for ln in folded)
    assert {"max_steps=100,", "seed=0,", "logging_nan_inf_filter=False,"} <= {
        ln.code.strip() for ln in folded
    }
    assert lst.fold_why and "save or print nothing" in lst.fold_why
    # Each footnote is said once: the shown lines' first, the folded ones' behind the fold.
    assert len(lst.shown_changes()) <= 10
    notes = [*lst.shown_changes(), *lst.folded_changes()]
    assert sorted(notes) == sorted(lst.changes()) and len(set(notes)) == len(notes)
    for lang in ("en", "es", "pt"):
        html = C.listing_html(lst, lang)
        shown, rest = html.split('<details class="mp-fold">')
        inside, after = rest.split("</details>")
        assert "fp16=False" in shown and "bf16=True" in shown and "max_steps" not in shown
        assert "max_steps=100," in inside and "ddp_find_unused_parameters" in inside
        assert "trainer.train()" in after  # the rest of the listing is shown, unfolded
        # Every line of the loop is in the page, folded or not: nothing left out of the copy.
        for line in lst.body.splitlines():
            if line.strip() and not line.strip().startswith("#"):
                assert C.esc(line.split("  #")[0].rstrip()) in html, line
        notes = C.changes_md(lst, lang)
        first, folded_notes = notes.split("<details><summary>", 1)
        assert first.count("\n1. ") == 1 and "\n10. " not in first
        assert f"\n{len(lst.shown_changes()) + 1}. " in folded_notes


@pytest.mark.parametrize("backend", ["torch", "accelerate"])
def test_the_other_listings_have_no_fold(backend: str) -> None:
    from mpdemo.ui.tabs import code as C

    for precision in ("fp16", "bf16"):
        lst = L.listing(RunConfig(backend=backend, precision=precision, device="cpu"))
        assert not any(ln.fold for ln in lst.lines) and lst.fold_why is None
        assert lst.shown_changes() == lst.changes() and lst.folded_changes() == []
        assert "<details" not in C.listing_html(lst, "en")
