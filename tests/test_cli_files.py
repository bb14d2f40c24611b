"""The CLI's files and inputs: output paths refused before any training, files written whole or
not at all, a grid stopped by SIGINT or SIGTERM that still writes the runs that finished, and
number fields read by one rule (config.coerce_field) for the page, the API and the CLI."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT

from mpdemo import RunConfig
from mpdemo.cli import main as cli
from mpdemo.files.atomic import check_output_path, write_atomic, write_text_atomic
from mpdemo.files.recorded import read_runs, write_runs, write_steps_csv
from mpdemo.messages import ConfigError

TINY = ["--train-slice", "train[:128]", "--eval-slice", "validation[:32]", "--batch-size", "8"]


def _bad_paths(tmp_path: Path) -> list[tuple[str, str]]:
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "a-folder").mkdir()
    return [
        (str(tmp_path / "missing" / "runs.json"), "does not exist"),
        (str(tmp_path / "a-folder"), "is a folder"),
        (str(tmp_path / "a-file" / "runs.json"), "does not exist"),
    ]


@pytest.mark.parametrize("flag", ["--json", "--csv"])
def test_a_bad_output_path_exits_2_before_any_training(tmp_path, capsys, monkeypatch, flag):
    import mpdemo.runs.runner

    def no_training(*args, **kwargs):
        raise AssertionError("the grid started")

    monkeypatch.setattr(mpdemo.runs.runner, "run_grid", no_training)
    for path, words in _bad_paths(tmp_path):
        code = cli.main(["run", *TINY, "--steps", "1", flag, path])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == cli.EXIT_BAD_INPUT
        assert len(err) == 1 and flag in err[0] and words in err[0], err
        assert "Traceback" not in err[0]


def test_underflow_json_path_is_checked_before_the_batch_runs(tmp_path, capsys):
    t0 = time.perf_counter()
    code = cli.main(["underflow", "--json", str(tmp_path / "no" / "report.json")])
    assert code == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--json" in err[0] and "does not exist" in err[0], err
    assert time.perf_counter() - t0 < 5  # refused before the model and data load


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder anyway")
def test_a_folder_without_write_permission_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ConfigError) as err:
            check_output_path(locked / "runs.json", "--json")
        assert err.value.key == "output_not_writable"
    finally:
        locked.chmod(0o700)


def test_the_output_check_leaves_nothing_behind(tmp_path):
    assert check_output_path(tmp_path / "runs.json", "--json") == tmp_path / "runs.json"
    assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_halfway_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "runs.json"
    target.write_text("the old file", encoding="utf-8")

    def half(f):
        f.write('{"runs": [')
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_atomic(target, half)
    assert target.read_text(encoding="utf-8") == "the old file"
    assert [p.name for p in tmp_path.iterdir()] == ["runs.json"]


def test_files_written_atomically_have_a_normal_mode_and_the_full_content(tmp_path):
    target = tmp_path / "report.json"
    write_text_atomic(target, "é" * 100_000)
    assert target.read_text(encoding="utf-8") == "é" * 100_000
    plain = tmp_path / "plain.txt"
    plain.write_text("x")  # what open() gives under this process's umask
    assert target.stat().st_mode & 0o777 == plain.stat().st_mode & 0o777


def test_runs_json_and_csv_are_written_through_a_temporary_file(tmp_path, monkeypatch):
    # Both writers rename a finished file into place: a reader never sees half of one.
    renames = []
    real = os.replace

    def spy(src, dst):
        renames.append((Path(src).parent, Path(dst).name))
        return real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    summary = {"label": "torch · fp32", "backend": "torch", "precision": "fp32", "steps": 1}
    runs = [{"config": None, "summary": summary, "steps": [{"step": 1, "loss": 0.7}]}]
    write_runs(tmp_path / "runs.json", runs, machine={})
    write_steps_csv(tmp_path / "steps.csv", runs)
    assert renames == [(tmp_path, "runs.json"), (tmp_path, "steps.csv")]
    assert read_runs(tmp_path / "runs.json").runs[0]["steps"][0]["loss"] == 0.7
    assert next(csv.DictReader((tmp_path / "steps.csv").open()))["loss"] == "0.7"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--steps", "2.5"], "steps must be a whole number"),
        (["--steps", "1e2"], "steps must be a whole number"),
        (["--batch-size", "abc"], "batch_size must be a whole number"),
        (["--lr", "inf"], "lr must be a number above 0"),
        (["--max-length", "513"], "max_length must be a whole number from 8 to 512"),
        (["--max-length", "4096"], "from 8 to 512"),
        (["--loss-scaling", "maybe"], "loss_scaling must be on or off"),
    ],
)
def test_number_flags_follow_the_rule_of_the_page_and_the_api(capsys, args, needle):
    # A malformed flag is a usage error, as argparse's own refusals are: exit 2, one line.
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["run", *TINY, "--steps", "1", *args])
    assert exit_info.value.code == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"]
)
def test_a_signal_during_the_grid_writes_the_finished_runs(tmp_path, sig, code):
    out_json, out_csv = tmp_path / "runs.json", tmp_path / "steps.csv"
    out_json.write_text("an older file", encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mpdemo", "run", *TINY, "--steps", "100", "--precision",
         "fp32,bf16", "--json", str(out_json), "--csv", str(out_csv)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines = []
    try:
        # '[2/2] torch · bf16 ...': the second run started, after the first run's first step
        # (the runs of a comparison take turns step by step).
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("[2/"):
                proc.send_signal(sig)
                break
        out, err = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == code, "".join(lines) + err
    assert f"stopped by {sig.name}" in err and "Traceback" not in err, err
    runs = json.loads(out_json.read_text(encoding="utf-8"))["runs"]
    # Every run stops at its next step and says so, like the page's Stop, keeping its steps.
    assert [r["summary"]["label"] for r in runs] == ["torch · fp32", "torch · bf16"]
    assert [r["summary"]["status"] for r in runs] == ["stopped", "stopped"]
    assert all(1 <= len(r["steps"]) < 100 for r in runs)
    assert "stopped" in out and "torch" in out  # the table of what was measured
    rows = list(csv.DictReader(out_csv.open(encoding="utf-8")))
    assert sum(r["run"] == "torch · fp32" for r in rows) == len(runs[0]["steps"])
    assert {p.name for p in tmp_path.iterdir()} == {"runs.json", "steps.csv"}


# --- inputs: one rule for the page, the API and the command line ----------------------------


@pytest.mark.parametrize(
    ("name", "raw", "value"),
    [
        ("steps", "12", 12),
        ("steps", " 12 ", 12),
        ("steps", 12.0, 12),  # a number box sends 12.0
        ("steps", 12, 12),
        ("max_length", "512", 512),
        ("lr", "1e-3", 0.001),
        ("lr", 1, 1.0),
        ("init_scale", 65536, 65536.0),
        ("loss_scaling", "off", False),
        ("loss_scaling", True, True),
        ("model", "  tiny-bert ", "tiny-bert"),
    ],
)
def test_coerce_field_reads_what_people_type(name, raw, value):
    from mpdemo.config import coerce_field

    got = coerce_field(name, raw)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(
    ("name", "raw", "key"),
    [
        ("steps", 2.5, "bad_number"),  # not 2 steps
        ("steps", "2.5", "bad_number"),
        ("steps", "1e2", "bad_number"),
        ("steps", "abc", "bad_number"),
        ("steps", float("nan"), "bad_number"),
        ("steps", float("inf"), "bad_number"),
        ("steps", True, "bad_number"),
        ("steps", None, "missing_number"),  # an empty box
        ("steps", "  ", "missing_number"),
        ("steps", 0, "bad_number"),
        ("batch_size", 1.5, "bad_number"),
        pytest.param("seed", "9" * 400, "bad_number", id="seed-400-digits"),
        ("growth_interval", [1], "bad_number"),
        ("max_length", 513, "bad_number"),  # the built-in models have 512 positions
        ("lr", "nan", "bad_number"),
        ("lr", "Infinity", "bad_number"),
        ("lr", float("-inf"), "bad_number"),
        pytest.param("lr", 10**400, "bad_number", id="lr-10**400"),
        ("init_scale", "abc", "bad_number"),
        ("loss_scaling", "maybe", "bad_number"),
    ],
)
def test_coerce_field_refuses_with_the_keyed_message_and_the_range(name, raw, key):
    from mpdemo.config import coerce_field
    from mpdemo.ui import i18n

    with pytest.raises(ConfigError) as err:
        coerce_field(name, raw, model="tiny-bert")
    assert err.value.key == key and err.value.note.args["field"] == name
    text = str(err.value)
    assert text.startswith(name) and "\n" not in text and len(text) < 200, text
    if name != "loss_scaling":
        assert err.value.note.args["rule"]["key"] in ("rule_whole", "rule_above")
    es = i18n.error_text(err.value, "es")
    assert " must be " not in es and " is empty" not in es, es


def test_max_length_is_bounded_by_the_models_positions_before_anything_loads():
    from mpdemo.config import BUILTIN_POSITIONS, MAX_LENGTH
    from mpdemo.engine.models import builtin_model

    with pytest.raises(ConfigError, match="from 8 to 512; got 513"):
        RunConfig(max_length=513).validate()
    RunConfig(max_length=512).validate()
    # A Hub id or folder: its positions are known only once it loads; the general cap holds.
    RunConfig(model="owner/name", max_length=MAX_LENGTH).validate()
    with pytest.raises(ConfigError):
        RunConfig(model="owner/name", max_length=MAX_LENGTH + 1).validate()
    # The bound is the built-ins' real size.
    bert = builtin_model("tiny-bert", 100, 2, 0, 0)
    gpt = builtin_model("tiny-gpt2", 100, 0, 0, 0)
    assert bert.config.max_position_embeddings == BUILTIN_POSITIONS
    assert gpt.config.n_positions == BUILTIN_POSITIONS


def test_a_model_folder_given_as_tilde_path_is_loaded_from_that_folder(
    tmp_path, monkeypatch, small_cfg
):
    from conftest import events_of, summary_of
    from transformers import AutoTokenizer

    from mpdemo import prepare
    from mpdemo.catalog import BUNDLED_TOKENIZER_DIR

    home = tmp_path / "home"
    folder = home / "m"
    prepare(small_cfg).model.save_pretrained(folder)
    AutoTokenizer.from_pretrained(BUNDLED_TOKENIZER_DIR).save_pretrained(folder)
    monkeypatch.setenv("HOME", str(home))  # expanduser and the allowed roots read it
    monkeypatch.chdir(tmp_path)  # no folder named '~' here to load by mistake
    s = summary_of(events_of(small_cfg.replace(model="~/m", steps=2)))
    assert s["status"] == "completed", s.get("error")


# --- only regular files it may replace (issue 28) ------------------------------------------------


def _odd_paths(tmp_path: Path) -> list[tuple[list[str], str]]:
    fifo = tmp_path / "a-fifo"
    os.mkfifo(fifo)
    target = tmp_path / "target.json"
    target.write_text("the target", encoding="utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    same = str(tmp_path / "x.out")
    return [
        (["--json", str(fifo)], "not a regular file"),
        (["--csv", "/dev/null"], "not a regular file"),
        (["--json", str(link)], "symbolic link"),
        (["--json", ""], "empty"),
        (["--csv", "  "], "empty"),
        (["--json", same, "--csv", same], "--json writes too"),
    ]


def test_the_cli_writes_only_regular_files_it_may_replace(tmp_path, capsys, monkeypatch):
    import mpdemo.runs.runner

    def no_training(*args, **kwargs):
        raise AssertionError("the grid started")

    monkeypatch.setattr(mpdemo.runs.runner, "run_grid", no_training)
    for flags, words in _odd_paths(tmp_path):
        code = cli.main(["run", *TINY, "--steps", "1", *flags])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == cli.EXIT_BAD_INPUT, flags
        assert len(err) == 1 and words in err[0] and "Traceback" not in err[0], (flags, err)
    # Nothing was replaced: the FIFO is a FIFO, the link a link to its untouched target.
    assert (tmp_path / "a-fifo").is_fifo() and (tmp_path / "link.json").is_symlink()
    assert (tmp_path / "target.json").read_text(encoding="utf-8") == "the target"


def test_an_atomic_write_never_replaces_a_fifo_or_a_symlink(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    link = tmp_path / "l"
    link.symlink_to(tmp_path / "elsewhere")
    for path in (fifo, link):
        with pytest.raises(ConfigError):
            write_text_atomic(path, "x")
    assert fifo.is_fifo() and link.is_symlink() and not (tmp_path / "elsewhere").exists()


def test_a_grid_the_cli_can_write_is_a_grid_it_reads_back():
    # 72 runs written by `run --repeat 8` were refused at 64 by the reader and the page.
    from mpdemo.config import MAX_REPEAT
    from mpdemo.files.recorded import MAX_RUNS, parse_document
    from mpdemo.registry import BACKENDS, PRECISIONS

    assert len(BACKENDS) * len(PRECISIONS) * MAX_REPEAT <= MAX_RUNS
    run = {"config": RunConfig().to_dict(), "summary": {"backend": "torch", "precision": "fp32"}}
    assert len(parse_document({"runs": [run] * 72}).runs) == 72


def test_a_cap_below_one_in_the_environment_is_ignored(monkeypatch):
    from mpdemo.config import Limits

    monkeypatch.setenv("MPDEMO_MAX_STEPS", "-1")
    assert Limits.from_env().max_steps == Limits().max_steps


def test_sigterm_during_a_sweep_keeps_its_measured_points(tmp_path):
    out_json = tmp_path / "sweep.json"
    # A 6 s budget: 1 s a point of six, five still ahead when the first one's line comes.
    proc = subprocess.Popen(
        [sys.executable, "-m", "mpdemo", "sweep", "--sizes", "32x1,64x1,96x1", "--batch-sizes",
         "8,16", "--budget", "6", "--device", "cpu", "--no-memory", "--quiet",
         "--json", str(out_json)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for line in proc.stdout:  # a point measured: stop the sweep now
            if line.strip() and not line.startswith("#"):
                proc.send_signal(signal.SIGTERM)
                break
        _, err = proc.communicate(timeout=180)
    finally:
        proc.kill()
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "points measured are kept" in err
    doc = json.loads(out_json.read_text(encoding="utf-8"))
    assert doc["points"] and doc["status"] == "stopped"
    assert {p.name for p in tmp_path.iterdir()} == {"sweep.json"}
