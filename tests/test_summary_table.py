"""The summary table on the Train tab: a class's nine columns first, the rest behind "All
columns", the same columns on every path that draws the table, and the downloads untouched."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mpdemo.files.recorded import read_runs, reference_files
from mpdemo.ui import i18n
from mpdemo.ui.train import recorded
from mpdemo.ui.train.handlers import show_columns, summary_update, train
from mpdemo.ui.train.session import Session
from mpdemo.ui.train.session_table import column_widths, summary_table

# What a class reads first (issue 27): run, verdict (status and vs fp32), step ms, loss,
# accuracy, memory, skipped steps, loss scale.
CLASS_KEYS = ["col_run", "col_status", "col_speedup", "col_step_ms", "col_loss", "col_eval_acc",
              "col_saved", "col_skipped", "col_scale"]  # fmt: skip
BEHIND_THE_BOX = ["col_samples", "col_warnings", "col_effective", "col_peak", "col_backend",
                  "col_precision", "col_requested", "col_device", "col_params", "col_steps",
                  "col_tokens"]  # fmt: skip

SUMMARY = {
    "label": "torch · fp16", "backend": "torch", "precision": "fp16", "device": "cpu",
    "requested_dtype": "float16", "effective_dtype": "float16", "status": "stopped",
    "params": 191874, "steps": 3, "skipped_steps": 1, "final_loss": 0.69314,
    "eval_accuracy": 0.544, "median_step_s": 0.0213, "samples_per_s": 1523.4,
    "saved_activation_bytes": 11 * 2**20, "peak_mem_bytes": None, "final_loss_scale": 32768.0,
    "warnings": ["stopped after 3 of 8 steps"],
    "warning_keys": [{"key": "stopped_by_user", "args": {"step": 3, "steps": 8}}],
}  # fmt: skip


def headers(keys: list[str], lang: str) -> list[str]:
    return [i18n.t(k, lang) for k in keys]


def columns_of(value: object) -> list[str]:
    """The headers of what a handler sent to the table (a Styler, a DataFrame or an update)."""
    if isinstance(value, dict):
        value = value["value"]
    frame = value.data if hasattr(value, "data") else value
    assert isinstance(frame, pd.DataFrame)
    return list(frame.columns)


@pytest.mark.parametrize("lang", ["en", "es", "pt"])
def test_the_table_opens_on_a_class_s_columns_and_the_box_adds_the_rest(lang: str) -> None:
    short = summary_table([SUMMARY], lang)
    assert list(short.columns) == headers(CLASS_KEYS, lang)
    row = dict(zip(short.columns, short.iloc[0], strict=True))
    assert row[i18n.t("col_status", lang)] == i18n.t("st_stopped", lang)
    assert row[i18n.t("col_skipped", lang)] == 1 and row[i18n.t("col_scale", lang)] == "32768"
    assert row[i18n.t("col_saved", lang)] == 11  # MiB
    full = summary_table([SUMMARY], lang, all_columns=True)
    # The class's columns keep their place: the box only adds columns at the right.
    assert list(full.columns) == headers(CLASS_KEYS + BEHIND_THE_BOX, lang)
    assert full[i18n.t("col_warnings", lang)][0] == i18n.message(
        "stopped_by_user", {"step": 3, "steps": 8}, lang
    )
    assert full[i18n.t("col_params", lang)][0] == 191874


def test_every_column_is_sized_to_its_cells_but_the_warnings() -> None:
    # "auto": the browser sizes a column to its longest cell on one line, so no number breaks;
    # only the warnings have a width of their own and wrap between words.
    for all_columns in (False, True):
        widths = column_widths(all_columns)
        table = summary_table([SUMMARY], "es", all_columns)
        assert len(widths) == len(table.columns)
        fixed = {h: w for h, w in zip(table.columns, widths, strict=True) if w != "auto"}
        assert fixed == ({"avisos": "300px"} if all_columns else {})


def test_the_box_s_handler_redraws_the_table_and_the_session_keeps_the_choice() -> None:
    session = Session()
    session.runs = [{"summary": SUMMARY}]
    out = show_columns(session, "pt", True)
    assert session.all_columns is True
    update = out["summary"]
    assert columns_of(update) == headers(CLASS_KEYS + BEHIND_THE_BOX, "pt")
    assert update["column_widths"] == column_widths(True)
    # The later frames of a training, and a change of language, draw the same columns.
    assert columns_of(session.table("es")) == headers(CLASS_KEYS + BEHIND_THE_BOX, "es")
    assert columns_of(summary_update(session, "en")) == headers(CLASS_KEYS + BEHIND_THE_BOX, "en")
    out = show_columns(session, "en", False)
    assert session.all_columns is False
    assert columns_of(out["summary"]) == headers(CLASS_KEYS, "en")
    assert out["summary"]["column_widths"] == column_widths(False)
    assert show_columns(None, "en", True) == {}  # no session (an API caller): nothing to redraw


def test_an_opened_runs_file_a_restored_one_and_clear_keep_the_box_s_columns() -> None:
    path = reference_files()[0]
    session = Session()
    show_columns(session, "en", True)
    frames = list(recorded.pick_reference(path.name, "en", session))
    assert frames and all(
        columns_of(f["summary"]) == headers(CLASS_KEYS + BEHIND_THE_BOX, "en") for f in frames
    )
    rows = len(read_runs(path).runs)
    assert len(session.table("en").data) == rows
    # Unticked: the opened file's rows in the class's columns.
    assert columns_of(show_columns(session, "en", False)["summary"]) == headers(CLASS_KEYS, "en")
    # A reload brings the runs back from the browser's store into a page whose box is ticked.
    stored = session.stored()
    again = Session(all_columns=True)
    out = recorded.restore_runs("es", stored, again)
    assert columns_of(out["summary"]) == headers(CLASS_KEYS + BEHIND_THE_BOX, "es")
    assert len(out["summary"].data) == rows
    # Clear runs empties the table, in the columns the box asked for.
    cleared = recorded.clear_runs(again, "en")
    assert columns_of(cleared["summary"]) == headers(CLASS_KEYS + BEHIND_THE_BOX, "en")
    session.close()
    again.close()


def test_a_training_draws_the_box_s_columns_and_its_csv_keeps_every_figure() -> None:
    values = {
        "precisions": ["fp32"],
        "steps": 2,
        "batch_size": 8,
        "device": "cpu",
        "model": "tiny-bert",
        "train_slice": "train[:32]",
        "eval_slice": "validation[:16]",
    }  # fmt: skip (a classifier: the accuracy column)
    csvs = {}
    for all_columns in (True, False):
        session = Session(all_columns=all_columns)
        frames = [f for f in train(values, "en", session) if "summary" in f]
        want = headers(CLASS_KEYS + BEHIND_THE_BOX if all_columns else CLASS_KEYS, "en")
        assert frames and all(columns_of(f["summary"]) == want for f in frames)
        assert len(frames[-1]["summary"].data) == 1  # the finished run's row
        files = session.write_files()
        csvs[all_columns] = Path(files["csv"]).read_text(encoding="utf-8").splitlines()
        session.close()
    # The CSV is written from the runs, not from the table: the box changes nothing in it.
    head = csvs[True][0].split(",")
    assert head == csvs[False][0].split(",")
    assert {"run", "backend", "precision", "loss", "peak_mem_bytes", "speedup_vs_fp32"} <= set(head)
    assert len(csvs[True]) == len(csvs[False]) == 3  # the header and a row per step


def test_a_run_that_ends_before_its_fp32_peer_gets_its_speedup_once_the_peer_ends() -> None:
    """Speed-ups are computed once, in the fold, at each end: the page's copy of an fp16 run
    that ended first reads its ratio after fp32 ends (runs taking turns end in no set order)."""
    from mpdemo.config import RunConfig
    from mpdemo.events import RunFinished
    from mpdemo.files.summary import Summary

    session = Session()
    fp32, fp16 = RunConfig(precision="fp32"), RunConfig(precision="fp16")
    session.begin([fp32, fp16])
    for i, (cfg, step_s) in enumerate([(fp16, 0.1), (fp32, 0.2)]):  # fp16 first
        summary = Summary(label=cfg.label, backend="torch", precision=cfg.precision,
                          model=cfg.model, median_step_s=step_s, steps=5)  # fmt: skip
        session.apply(RunFinished(f"{1 - i}:{cfg.label}", cfg.label, "completed", summary))
    by_label = {s["label"]: s for s in session.summaries()}
    assert by_label[fp16.label]["speedup_vs_fp32"] == pytest.approx(2.0)
    assert [r["summary"]["speedup_vs_fp32"] for r in session.history] == [
        pytest.approx(2.0),
        pytest.approx(1.0),
    ]
