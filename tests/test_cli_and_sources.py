"""The CLI, local model/dataset folders through the real from_pretrained/load_from_disk code,
offline detection, and the runner's grid."""

from __future__ import annotations

import csv
import json
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import ROOT, events_of, summary_of

from mpdemo import RunConfig, prepare
from mpdemo.cli.main import main
from mpdemo.engine.hfhub import hub_reachable, reset_cache
from mpdemo.messages import ConfigError
from mpdemo.runs.runner import Runner, grid

SMALL = ["--train-slice", "train[:128]", "--eval-slice", "validation[:32]", "--batch-size", "16"]


def test_cli_grid_prints_table_and_writes_json_csv(tmp_path, capsys):
    out_json, out_csv = tmp_path / "runs.json", tmp_path / "steps.csv"
    code = main(
        ["run", "--backend", "torch,accelerate", "--precision", "fp32,bf16", "--steps", "3",
         *SMALL, "--json", str(out_json), "--csv", str(out_csv), "--quiet"]
    )  # fmt: skip
    assert code == 0
    table = capsys.readouterr().out
    lines = [ln for ln in table.splitlines() if ln.startswith(("torch ", "accelerate "))]
    assert len(lines) == 4
    assert "vs fp32" in table and "1.00x" in table
    runs = json.loads(out_json.read_text())["runs"]
    assert [(r["summary"]["backend"], r["summary"]["precision"]) for r in runs] == [
        ("torch", "fp32"), ("torch", "bf16"), ("accelerate", "fp32"), ("accelerate", "bf16"),
    ]  # fmt: skip
    assert all(len(r["steps"]) == 3 and r["config"]["steps"] == 3 for r in runs)
    assert runs[1]["summary"]["speedup_vs_fp32"] > 0
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == 12 and rows[0]["run"] == "torch · fp32"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", "tiny-bertt"], "did you mean 'tiny-bert'"),
        (["--train-slice", "train[:abc]"], "train[:abc]"),
        (["--steps", "0"], "steps"),
        (["--batch-size", "-4"], "batch_size"),
        (["--precision", "fp8"], "fp8"),
        (["--backend", "torch,keras"], "keras"),
        (["--lr", "nan"], "lr"),
        (["--loss-scaling", "maybe"], "maybe"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args, needle, capsys):
    # In this process (importing torch again in a subprocess per case took seconds each); the
    # process's own exit code and stderr are checked once, below.
    try:
        code = main(["run", *SMALL, "--steps", "1", *args])
    except SystemExit as exit_:  # argparse's own refusals exit from parse_args
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], err
    assert "Traceback" not in err


def test_cli_bad_input_as_a_process_exits_2_with_one_line_and_no_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "mpdemo", "run", *SMALL, "--steps", "1", "--model", "tiny-bertt"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and "did you mean 'tiny-bert'" in err[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_cli_cuda_without_gpu_exits_2():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert main(["run", "--device", "cuda", "--steps", "1"]) == 2


def test_offline_detection_is_fast_and_hub_ids_fail_at_once(monkeypatch):
    # A loopback server that accepts connections and never answers: the worst case for a check.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{silent.getsockname()[1]}")
    reset_cache()
    try:
        t0 = time.perf_counter()
        assert hub_reachable() is False
        assert time.perf_counter() - t0 <= 2.0
        t0 = time.perf_counter()
        with pytest.raises(ConfigError, match="Hub is not reachable"):
            prepare(RunConfig(model="prajjwal1/bert-tiny", device="cpu"))
        assert time.perf_counter() - t0 < 1.0  # cached: no second wait
    finally:
        silent.close()
        reset_cache()


def test_local_pretrained_folder_loads_through_from_pretrained(tmp_path, small_cfg):
    # A model folder as a user would have it: save_pretrained of a model and its tokenizer.
    prep = prepare(small_cfg)
    folder = tmp_path / "my-bert"
    prep.model.save_pretrained(folder)
    from transformers import AutoTokenizer

    from mpdemo.catalog import BUNDLED_TOKENIZER_DIR

    AutoTokenizer.from_pretrained(BUNDLED_TOKENIZER_DIR).save_pretrained(folder)
    s = summary_of(events_of(small_cfg.replace(model=str(folder), steps=2)))
    assert s["status"] == "completed"
    assert s["params"] == prep.params
    # Its positions are read from its config: a longer sequence is refused before any step.
    positions = prep.model.config.max_position_embeddings
    long = small_cfg.replace(model=str(folder), steps=2, max_length=positions + 8)
    with pytest.raises(
        ConfigError, match=f"max_length must be a whole number from 8 to {positions}"
    ):
        prepare(long)


def test_local_dataset_folder_and_column_checks(tmp_path, small_cfg):
    import datasets

    dsd = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict(
                {"sentence": ["good film", "bad film"] * 40, "label": [1, 0] * 40}
            ),
            "validation": datasets.Dataset.from_dict(
                {"sentence": ["good", "bad"] * 8, "label": [1, 0] * 8}
            ),
        }
    )
    dsd.save_to_disk(tmp_path / "ds")
    cfg = small_cfg.replace(dataset=str(tmp_path / "ds"), train_slice="train", steps=2)
    assert summary_of(events_of(cfg))["status"] == "completed"
    dsd.remove_columns("label").save_to_disk(tmp_path / "nolabel")
    with pytest.raises(ConfigError, match="no label column"):
        prepare(cfg.replace(dataset=str(tmp_path / "nolabel")))
    with pytest.raises(ConfigError, match="does not exist"):
        prepare(cfg.replace(dataset=str(tmp_path / "missing")))
    with pytest.raises(ConfigError, match="not a model folder"):
        prepare(cfg.replace(model=str(tmp_path / "ds")))
    # One split saved on its own: its slices are checked before any training, as a dict's are
    # (a bad one was exit 1 from inside the run, not exit 2).
    dsd["train"].save_to_disk(tmp_path / "one")
    one = ["run", "--dataset", str(tmp_path / "one"), "--steps", "1", "--quiet"]
    assert main([*one, "--train-slice", "train[:5%]", "--eval-slice", "test[:0]"]) == 2
    assert main([*one, "--train-slice", "anything[:8]", "--eval-slice", "test[:8]"]) == 0


def test_local_paths_outside_roots_and_hosted_mode(tmp_path, monkeypatch, small_cfg):
    monkeypatch.setenv("MPDEMO_LOCAL_ROOTS", str(tmp_path))
    with pytest.raises(ConfigError, match="outside the folders"):
        prepare(small_cfg.replace(model="/etc"))
    monkeypatch.setenv("MPDEMO_HOSTED", "1")
    with pytest.raises(ConfigError, match="local paths are turned off"):
        prepare(small_cfg.replace(model=str(tmp_path)))
    with pytest.raises(ConfigError, match="steps"):
        prepare(small_cfg.replace(steps=5000))


def test_runner_runs_a_comparison_side_by_side(small_cfg):
    configs = grid(small_cfg.replace(steps=2), ["torch", "trainer"], ["bf16", "fp32"])
    assert [c.label for c in configs] == [
        "torch · fp32", "torch · bf16", "trainer · fp32", "trainer · bf16",
    ]  # fmt: skip
    runner = Runner(configs).start()
    events = list(runner.events())
    assert runner.join(5)
    starts = [i for i, e in enumerate(events) if e.kind == "start"]
    ends = [i for i, e in enumerate(events) if e.kind == "end"]
    # The runs take turns step by step: every run starts (in the grid's order) before any ends.
    assert [events[i].label for i in starts] == [c.label for c in configs]
    assert max(starts) < min(ends)
    assert sorted(s["label"] for s in runner.state.fold.summaries) == sorted(
        c.label for c in configs
    )


def test_runner_frees_each_runs_model_by_the_grids_end(small_cfg, monkeypatch):
    # The Accelerator and Trainer keep the model in reference cycles: unless the runner collects
    # them, each click's models stay in memory (a Space runs many grids in one process).
    import weakref

    from mpdemo.engine import core as engine

    models = []
    real_prepare = engine.prepare

    def prepare(cfg, limits=None):
        prep = real_prepare(cfg, limits)
        models.append(weakref.ref(prep.model))
        return prep

    monkeypatch.setattr(engine, "prepare", prepare)
    runner = Runner(grid(small_cfg.replace(steps=2), ["accelerate", "trainer"], ["fp32"]))
    assert len([e for e in runner.start().events() if e.kind == "end"]) == 2
    assert runner.join(5)
    assert len(models) == 2 and all(ref() is None for ref in models)


def test_runner_stop_ends_thread_and_skips_rest(small_cfg):
    configs = grid(small_cfg.replace(steps=500), ["torch"], ["fp32", "bf16"])
    baseline = threading.active_count()
    runner = Runner(configs).start()
    for ev in runner.events():
        if ev.kind == "step" and ev.step == 2:
            runner.stop()
    assert runner.join(10)
    # Both runs stopped within a step of each other (they take turns): none ran to the end.
    assert [s["status"] for s in runner.state.fold.summaries] == ["stopped", "stopped"]
    time.sleep(0.2)
    assert threading.active_count() <= baseline


def test_runner_reports_a_failed_preparation(small_cfg):
    runner = Runner([small_cfg.replace(train_slice="train[:0]"), small_cfg.replace(steps=1)])
    events = list(runner.start().events())
    ends = [e for e in events if e.kind == "end"]
    assert [e.status for e in ends] == ["failed", "completed"]
    assert "selects no rows" in ends[0].summary["error"]


def test_grid_compare_scaling_runs_fp16_twice_with_distinct_labels(small_cfg):
    configs = grid(small_cfg, ["torch"], ["fp16", "fp32"], compare_scaling=True)
    assert [c.label for c in configs] == ["torch · fp32", "torch · fp16", "torch · fp16 · S=1"]
    assert [c.loss_scaling for c in configs] == [True, True, False]


def test_hub_dataset_code_path_slices_through_load_dataset(tmp_path):
    # The Hub branch hands the slice to datasets.load_dataset; a local folder of JSON files is
    # what load_dataset reads without a network, through the same call.
    from mpdemo.engine.data import load_split

    folder = tmp_path / "reviews_json"
    folder.mkdir()
    rows = [{"sentence": f"film number {i} was {'good' if i % 2 else 'bad'}", "label": i % 2}
            for i in range(40)]  # fmt: skip
    (folder / "train.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    split, _notes = load_split(str(folder), "hub", "train[:25%]")
    assert len(split) == 10 and split.column_names == ["sentence", "label"]
    with pytest.raises(ConfigError, match="not a valid slice"):
        load_split(str(folder), "hub", "train[:abc]")


def test_a_hub_dataset_without_a_validation_split_evaluates_on_its_held_out_one(
    tmp_path, monkeypatch
):
    # imdb and ag_news publish train and test only: the default eval slice ('validation[:500]')
    # reads their test split, and the run says so; a train slice is never moved onto it. The
    # same load_dataset call, on local files.
    from mpdemo.catalog import DATASETS, DatasetEntry
    from mpdemo.config import RunConfig
    from mpdemo.engine.data import load_split
    from mpdemo.messages import render

    folder = tmp_path / "two_splits"
    folder.mkdir()
    for split, n in (("train", 30), ("test", 12)):
        rows = [{"text": f"{split} review {i}", "label": i % 2} for i in range(n)]
        (folder / f"{split}.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(ConfigError, match="not a valid slice"):  # as a dataset with no entry
        load_split(str(folder), "hub", "validation[:5]")
    monkeypatch.setitem(DATASETS, str(folder), DatasetEntry(str(folder), False, eval_split="test"))
    with pytest.raises(ConfigError, match="not a valid slice"):  # training: no test rows
        load_split(str(folder), "hub", "validation[:5]")
    split, notes = load_split(str(folder), "hub", RunConfig().eval_slice, evaluating=True)
    assert len(split) == 12 and split[0]["text"] == "test review 0"
    assert [n.key for n in notes] == ["eval_split_held_out"]
    said = render(notes[0].key, notes[0].args)
    assert "no validation split" in said and "test[:500]" in said, said
    split, notes = load_split(str(folder), "hub", "train[:4]")  # another split: as asked
    assert len(split) == 4 and notes == []
    assert DATASETS["imdb"].eval_split == DATASETS["ag_news"].eval_split == "test"
