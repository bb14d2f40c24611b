"""The course's lessons (mpdemo/teach/lessons.py): what each runs, its words, the CLI, the picker."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from mpdemo.cli.main import main
from mpdemo.messages import EN, ConfigError
from mpdemo.teach import lessons as L

LOCALES = Path(__file__).resolve().parent.parent / "mpdemo" / "ui" / "locales"


def test_the_lessons_come_in_the_course_order_with_the_default_first() -> None:
    assert list(L.LESSONS) == [
        "still-trains", "underflow", "loss-scaling", "master-weights", "backends", "where-it-pays"
    ]  # fmt: skip
    assert next(iter(L.LESSONS)) == L.DEFAULT_LESSON


@pytest.mark.parametrize("lang", ["en", "es", "pt"])
def test_every_lesson_names_its_slide_and_what_to_look_for_in_each_language(lang: str) -> None:
    table = (
        EN if lang == "en" else tomllib.loads((LOCALES / f"{lang}.toml").read_text())["messages"]
    )
    for lesson in L.LESSONS.values():
        parts = ["title", "slide", "look", *(["cpu"] if lesson.cpu_note else [])]
        for part in parts:
            key = f"lesson_{lesson.key}_{part}"
            assert table.get(key), (lang, key)
            if lang != "en" and part != "title":
                assert table[key] != EN[key], (lang, key)  # translated, not copied


def test_every_lesson_validates_and_makes_its_point_with_its_runs() -> None:
    for lesson in L.LESSONS.values():
        for cfg in lesson.configs():
            cfg.validate()
    labels = [c.label for c in L.get("underflow").configs()]
    assert labels == ["torch · fp32", "torch · fp16", "torch · fp16 · S=1"]
    first = L.get("still-trains").configs()
    assert any(c.scales_loss for c in first)  # a loss-scale line on the first click
    assert all(c.precision in ("fp32", "fp16") for c in first)
    (scaling,) = L.get("loss-scaling").configs()
    # The scale must be able to grow several times within the lesson's steps.
    assert scaling.scales_loss and scaling.growth_interval * 4 <= scaling.steps
    backends = L.get("backends").configs()
    assert {c.backend for c in backends} == {"torch", "accelerate", "trainer"}
    assert len({c.precision for c in backends}) == 1  # one flag


def test_master_weights_follows_loss_scaling_and_an_unknown_lesson_is_refused() -> None:
    names = list(L.LESSONS)
    assert names[names.index("loss-scaling") + 1] == "master-weights"
    with pytest.raises(Exception, match="lesson must be one of"):
        L.get("nope")
    # A Python caller's list (unhashable) is refused the same way, not with a TypeError.
    with pytest.raises(ConfigError, match="lesson must be one of"):
        L.get(["still-trains"])


def test_the_page_opens_on_the_first_lesson() -> None:
    from mpdemo.ui.train import lessons as ui
    from mpdemo.ui.train.inputs import DEFAULTS, check_inputs

    assert DEFAULTS["precisions"] == list(L.get(L.DEFAULT_LESSON).precisions)
    grid = check_inputs(DEFAULTS)
    assert [c.label for c in grid] == [c.label for c in L.get(L.DEFAULT_LESSON).configs()]
    assert [v for _, v in ui.choices("es")] == [n for n, x in L.LESSONS.items() if x.on_page]
    assert ui.choices("es")[0][0] == "1. ¿Sigue entrenando?"
    values = ui.values(L.get("underflow"))
    assert values["compare_scaling"] is True and values["max_length"] == 32
    assert check_inputs(values) == L.get("underflow").configs()


def test_the_backends_lesson_says_on_a_cpu_why_it_uses_bf16(monkeypatch) -> None:
    from mpdemo.ui import system
    from mpdemo.ui.train import lessons as ui

    cpu_line = EN["lesson_backends_cpu"]
    monkeypatch.setattr(system, "trains_on_cpu", lambda device: True)
    assert cpu_line in ui.info("en", "backends").split("\n\n")
    monkeypatch.setattr(system, "trains_on_cpu", lambda device: False)
    assert cpu_line not in ui.info("en", "backends")  # title+slide, look, its GPU recording


def test_cli_lists_the_lessons_and_refuses_an_unknown_one(capsys) -> None:
    assert main(["lesson", "--list"]) == 0
    out = capsys.readouterr().out
    positions = [out.index(f". {name}: ") for name in L.LESSONS]
    assert positions == sorted(positions)
    assert "slide: Underflow: number vanishes to 0" in out
    assert main(["lesson", "no-such-lesson"]) == 2
    assert "still-trains" in capsys.readouterr().err


def test_cli_runs_a_lesson_and_writes_its_files(tmp_path, monkeypatch, capsys) -> None:
    # A 10-step copy of the underflow lesson: the real path (grid, run, files, its check), short.
    tiny = L.Lesson(
        "tiny",
        "underflow",
        fields={"max_length": 16, "steps": 10, "batch_size": 4, "train_slice": "train[:40]",
                "eval_slice": "validation[:8]", "watch_grads": 5},
        precisions=("fp32", "fp16"),
        compare_scaling=True,
        check=L.checks.underflow,
    )  # fmt: skip
    monkeypatch.setitem(L.LESSONS, "tiny", tiny)
    out_json, out_csv = tmp_path / "l.json", tmp_path / "l.csv"
    assert main(["lesson", "tiny", "--json", str(out_json), "--csv", str(out_csv), "--quiet"]) == 0
    doc = json.loads(out_json.read_text())
    labels = [r["summary"]["label"] for r in doc["runs"]]
    assert labels == ["torch · fp32", "torch · fp16", "torch · fp16 · S=1"]
    assert out_csv.read_text().count("\n") > 3
    out = capsys.readouterr().out
    assert "without loss scaling (S=1)" in out  # what to look for, then whether the runs showed it
    assert "# the lesson's check " in out and "below fp16's normal range" in out, out


def test_a_ratio_reads_n_times_faster_or_slower_with_n_at_least_one() -> None:
    from mpdemo.ui.train.session_table import speedup_cell

    slow = {"precision": "fp16", "speedup_vs_fp32": 816 / 2020, "speedup_interval": [0.35, 0.45],
            "speed_verdict": "slower"}  # fmt: skip
    assert speedup_cell(slow, "en") == "2.48× [2.22–2.86] slower"  # 2,020 vs 816 ms: 2.48
    unsure = {"precision": "bf16", "speedup_vs_fp32": 1.25, "speed_verdict": "unsure"}
    assert speedup_cell(unsure, "es") == "1,25× más rápido (no es seguro)"
    assert speedup_cell({"precision": "fp32", "speedup_vs_fp32": 1.0}, "en") == ""


def test_glitches_of_the_machine_line_and_the_trainer_sentence() -> None:
    from mpdemo.engine.machine import machine_note
    from mpdemo.ui.i18n import message

    bare = {"device_kind": "cpu", "cpu": {"name": "EPYC", "capability": "AVX2", "flags": {}},
            "torch_threads": 2, "versions": {"torch": "2.13"}}  # fmt: skip
    for lang in ("en", "es", "pt"):
        note = machine_note(bare)
        text = message(note.key, note.args, lang)
        assert " -" not in text and "AVX512-BF16" in text, text  # was "has -; lacks ..."
    es = message(
        "fp16_not_applied", {"effective": "fp32", "backend": "Trainer", "device": "CPU"}, "es"
    )
    assert "the Trainer" not in es
    assert "1 interleaved round is too few" in message("unsure_too_few", {"rounds": 1}, "en")
    # The adjective agrees with the count in Spanish and Portuguese too ("1 ronda ... es muy
    # pocas" read wrong).
    assert message("unsure_too_few", {"rounds": 1}, "es").startswith(
        "1 ronda intercalada es insuficiente para"
    )
    assert message("unsure_too_few", {"rounds": 2}, "es").startswith(
        "2 rondas intercaladas son insuficientes para"
    )
    assert message("unsure_too_few", {"rounds": 1}, "pt").startswith(
        "1 rodada intercalada é insuficiente para"
    )
    assert message("unsure_too_few", {"rounds": 3}, "pt").startswith(
        "3 rodadas intercaladas são insuficientes para"
    )


def test_stop_then_train_runs_the_new_comparison() -> None:
    # The comparison just stopped stays joinable on the server a while; the next click of the
    # page that stopped it must train anew, not watch it end at once ("Done: 0 runs").
    import threading

    from mpdemo.ui.train.handlers import arm, stop, train
    from mpdemo.ui.train.session import Session

    values = {"precisions": ["fp32"], "steps": 400, "batch_size": 4, "device": "cpu",
              "train_slice": "train[:64]", "eval_slice": "validation[:16]"}  # fmt: skip
    session = Session()

    def first_step() -> int | None:
        """A click as the page makes it (arm, then train); Stop pressed, as a person does,
        while the stream goes on, once this comparison's own first step is on screen (after a
        frame with none: not the last comparison's steps). Its steps then, or None."""
        arm(session, "en")
        frames = train(values, "en", session)
        fresh = False  # a frame of this comparison before its first step: no old steps shown
        for _ in frames:
            steps = [len(s.step) for s in session.series.values()]
            fresh |= not any(steps)
            if any(steps) and fresh:
                pressed = threading.Thread(target=stop, args=(session, "en"))
                pressed.start()
                for _ in frames:  # the stream runs to its end, as gradio reads it
                    pass
                pressed.join(30)
                return max(steps)
        return None

    first = first_step()
    assert first is not None and first < 400
    # The same comparison, clicked again after Stop: it trains anew from step 1 (it ended at
    # once with "Done: 0 runs", and a Stop's flag left over refused the click).
    again = first_step()
    assert again is not None and again < 400, "clicked again after Stop, it trained nothing"


def test_a_line_under_an_identical_one_is_named_in_the_legend() -> None:
    from mpdemo.ui.train.frames import coinciding, run_legend
    from mpdemo.ui.train.plots import Series
    from mpdemo.ui.train.session import Session

    steps = list(range(1, 11))
    fp32 = Series("torch · fp32", step=steps, loss=[0.7 - 0.02 * s for s in steps])
    bf16 = Series("torch · bf16", step=steps, loss=[0.7005 - 0.02 * s for s in steps])
    apart = Series("torch · fp16 · S=1", step=steps, loss=[0.7 - 0.005 * s for s in steps])
    series = {s.label: s for s in (fp32, bf16, apart)}
    assert coinciding(series) == [("torch · fp32", "torch · bf16")]
    session = Session()
    session.series = series
    session.configs = [c for c in L.get("underflow").configs()]
    legend = run_legend(session, "es")
    assert (
        "Líneas superpuestas (pérdida a menos del 1 % en cada paso): torch · fp32 = torch · bf16"
        in legend
    )


def test_five_lines_that_coincide_make_one_short_note() -> None:
    # A file of 3 runs opened beside 2 live ones: ten pairs made ten sentences; now each group
    # of lines on each other is named once, in one sentence.
    from mpdemo.ui.train.frames import coinciding_groups, run_legend
    from mpdemo.ui.train.plots import Series
    from mpdemo.ui.train.session import Session

    steps = list(range(1, 11))

    def line(label: str, slope: float, lift: float = 0.0) -> Series:
        return Series(label, step=steps, loss=[0.7 + lift - slope * s for s in steps])

    runs = [line("torch · fp32", 0.02), line("torch · fp16", 0.005),
            line("torch · fp32 · H200", 0.02, 0.0004), line("torch · fp16 · H200", 0.005, 0.0003),
            line("torch · bf16 · H200", 0.02, 0.0008)]  # fmt: skip
    series = {s.label: s for s in runs}
    groups = coinciding_groups(series)
    assert groups == [
        ["torch · fp32", "torch · fp32 · H200", "torch · bf16 · H200"],
        ["torch · fp16", "torch · fp16 · H200"],
    ]
    session = Session()
    session.series = series
    session.configs = L.get("still-trains").configs()  # torch · fp32, torch · fp16
    legend = run_legend(session, "en")
    note = (
        "Lines on top of each other (loss within 1 % at every step): torch · fp32 = "
        "torch · fp32 · H200 = torch · bf16 · H200; torch · fp16 = torch · fp16 · H200"
    )
    assert note in legend and legend.count("within 1 %") == 1
    for lang, word in (("es", "Líneas superpuestas"), ("pt", "Linhas sobrepostas")):
        assert run_legend(session, lang).count(word) == 1


def test_the_master_weights_lesson_trains_its_three_weight_recipes(tmp_path, monkeypatch) -> None:
    # The lesson's own runs (fp32 master, pure bf16, pure bf16 + SR), two steps each.
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "2")
    lesson = L.get("master-weights")
    assert [c.weights for c in lesson.configs()] == ["fp32", "bf16", "bf16-sr"]
    assert lesson.on_page  # the tab's "Where the weights live" boxes express it
    out = tmp_path / "mw.json"
    assert main(["lesson", "master-weights", "--json", str(out), "--quiet"]) == 0
    runs = {r["config"]["weights"]: r for r in json.loads(out.read_text())["runs"]}
    assert set(runs) == {"fp32", "bf16", "bf16-sr"}
    for w, r in runs.items():
        shares = [st["lost_update_share"] for st in r["steps"]]
        assert len(shares) == 2 and all(0.0 <= x <= 1.0 for x in shares)
        if w == "fp32":
            assert shares == [0.0, 0.0]  # the fp32 master copy keeps every update
        else:
            assert max(shares) > 0.05  # bf16 weights round small updates away


def test_every_lesson_on_the_page_trains_the_runs_it_names() -> None:
    # The picker loads a lesson into the controls; Train must then run the lesson's own grid:
    # weights x backends x precisions, the master-weights lesson's three recipes included.
    from mpdemo.ui.train import lessons as ui
    from mpdemo.ui.train.inputs import check_inputs

    for lesson in L.LESSONS.values():
        if lesson.on_page and not lesson.sweep:
            assert check_inputs(ui.values(lesson)) == lesson.configs(), lesson.name
    values = ui.values(L.get("master-weights"))
    assert values["weights"] == ["fp32", "bf16", "bf16-sr"] and values["lost_updates"] is True
    labels = [c.label for c in check_inputs(values)]
    assert labels == [
        "torch · bf16",
        "torch · bf16 · bf16 weights",
        "torch · bf16 · bf16 weights+SR",
    ]
    assert "master-weights" in [v for _, v in ui.choices("pt")]
    # The next lesson picked puts the weights back: its silent fields take the page's defaults.
    assert ui.values(L.get("underflow"))["weights"] == ["fp32"]


def test_a_pure_bf16_recipe_beside_fp16_is_refused_in_one_line() -> None:
    from mpdemo.messages import ConfigError
    from mpdemo.ui.train.inputs import DEFAULTS, check_inputs

    with pytest.raises(ConfigError) as err:
        check_inputs({**DEFAULTS, "weights": ["fp32", "bf16"]})  # the page opens on fp32, fp16
    assert err.value.key == "weights_need_bf16"
    with pytest.raises(ConfigError) as err:
        check_inputs({**DEFAULTS, "weights": []})
    assert err.value.key == "empty_choice"


def test_the_status_says_how_many_updates_rounded_away() -> None:
    from mpdemo.ui.train.status import lost_updates_text

    runs = [
        {"summary": {"label": "torch · bf16", "lost_update_share": 0.0}},
        {"summary": {"label": "torch · bf16 · bf16 weights", "lost_update_share": 0.571}},
        {"summary": {"label": "torch · fp32"}},  # did not count them: not named
    ]
    text = lost_updates_text(runs, "es")
    assert "torch · bf16: **0%**; torch · bf16 · bf16 weights: **57,1%**" in text
    assert "fp32" not in text and lost_updates_text(runs[2:], "en") == ""


def test_the_underflow_lesson_watches_the_gradients() -> None:
    assert all(c.watch_grads > 0 for c in L.get("underflow").configs())


def test_fp16_through_the_trainer_on_a_cpu_says_so_in_each_language() -> None:
    # Issue 27: "the Trainer no aplica autocast…" (English prose in the Spanish sentence). The
    # run's own note, from a real Trainer run, rendered in each language.
    from mpdemo import RunConfig
    from mpdemo.ui.i18n import message
    from tests.conftest import events_of, summary_of

    cfg = RunConfig(backend="trainer", precision="fp16", device="cpu", steps=2, batch_size=8,
                    train_slice="train[:32]", eval_slice="validation[:16]")  # fmt: skip
    keys = summary_of(events_of(cfg))["warning_keys"]
    (note,) = [k for k in keys if k["key"] == "fp16_not_applied"]
    said = {lang: message(note["key"], note["args"], lang) for lang in ("en", "es", "pt")}
    assert "Trainer does not autocast fp16 on CPU" in said["en"]
    assert "Trainer no aplica autocast fp16 en CPU" in said["es"]
    assert "Trainer não aplica autocast fp16 em CPU" in said["pt"]
    assert not any("the Trainer" in said[lang] for lang in ("es", "pt"))


def test_a_lesson_opens_its_own_recording_beside_the_live_run(
    tmp_path, monkeypatch, capsys
) -> None:
    # A real recording: the underflow lesson's own runs (2 steps each) through the lesson command into a
    # temp folder named as the shipped recordings' ($MPDEMO_REFERENCE_DIR). It ran on this CPU,
    # so it counts only once the counted devices are widened to the CPU: the path a GPU
    # recording takes, exercised with a file that says truly where it ran.
    from mpdemo.engine.machine import machine_info
    from mpdemo.teach import lesson_recordings as R
    from mpdemo.ui.train import lessons as ui
    from mpdemo.ui.train.handlers import train
    from mpdemo.ui.train.session import Session

    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "2")
    monkeypatch.setenv("MPDEMO_REFERENCE_DIR", str(tmp_path))
    name = R.file_name("underflow", machine_info(), "cpu")
    assert name.startswith("lesson-underflow-cpu-")
    argv = ["lesson", "underflow", "--device", "cpu", "--json", str(tmp_path / name), "--quiet"]
    assert main(argv) == 0
    assert "no GPU recording of this lesson" in capsys.readouterr().out
    # A CPU file never stands in for a GPU recording: not found, not named, not opened.
    assert R.recording_for("underflow") is None
    assert len(ui.info("en", "underflow").split("\n\n")) == 2
    session = Session()
    assert ui.open_recording(session, "underflow") == [] and not session.recordings

    monkeypatch.setattr(R, "COUNTED_DEVICES", ("cpu",))
    rec = R.recording_for("underflow")
    assert rec is not None and rec.path.name == name and rec.device == "cpu"
    assert R.recording_for("still-trains") is None  # its own lesson's runs only
    for lang, word in (("en", "recorded on"), ("es", "se grabó en"), ("pt", "foi gravada em")):
        line = ui.info(lang, "underflow").split("\n\n")[-1]
        assert word in line and rec.machine_name in line and f"· {rec.tag}" in line, line
    assert main(["lesson", "--list"]) == 0
    assert f"recorded on {rec.machine_name}" in capsys.readouterr().out
    # The pick: the recording joins the session, then the lesson's live runs train beside it.
    labels = ui.open_recording(session, "underflow")
    assert sorted(labels) == sorted(f"{c.label} · {rec.tag}" for c in L.get("underflow").configs())
    frames = list(train(ui.values(L.get("underflow")), "en", session))
    live = [c.label for c in L.get("underflow").configs()]
    assert session.plot_labels() == [*live, *labels]
    assert all(session.plot_series()[lab].step for lab in session.plot_labels())
    assert all(lab in frames[0]["legend"] for lab in session.plot_labels())
    assert {*labels} <= {s["label"] for s in session.summaries()}
    # The same lesson again: the same file replaces itself; another lesson closes it.
    ui.open_recording(session, "underflow")
    assert len(session.recordings) == 1
    assert ui.open_recording(session, "still-trains") == [] and not session.recordings


def test_a_shortened_lesson_trains_and_evaluates_a_few_rows(monkeypatch) -> None:
    # The tests' knob shortens the evaluation too: a 5-step run spent as long again on 500 rows.
    full = {name: [c.eval_slice for c in lesson.configs()] for name, lesson in L.LESSONS.items()}
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "3")
    for name, lesson in L.LESSONS.items():
        for cfg, before in zip(lesson.configs(), full[name], strict=True):
            assert cfg.steps == 3, name
            split, rows = before.rstrip("]").split("[:")
            assert cfg.eval_slice == f"{split}[:{min(int(rows), L.SHORT_EVAL_ROWS)}]", name
    monkeypatch.delenv("MPDEMO_LESSON_STEPS")
    assert all(c.eval_slice == "validation[:500]" for c in L.LESSONS["underflow"].configs())
