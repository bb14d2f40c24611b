"""Sweeps recorded on a GPU and shipped: read back through the CLI's own writer's shape, their
sentences say where they ran, a broken file is refused in one line, and the page shows them."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from test_sweep import SIZES, contradictions, fake_point

from mpdemo.files.checks import RecordingError
from mpdemo.sweep.notes import sweep_document
from mpdemo.sweep.recorded import FOLDER, parse_sweep, read_sweep, shipped_sweeps
from mpdemo.ui.i18n import message
from mpdemo.ui.tabs import pays
from mpdemo.ui.tabs.pays_recorded import recorded_html

H200 = "sweep-h200.json"


@pytest.fixture(scope="module")
def h200():
    (rec,) = [r for r in shipped_sweeps() if r.name == H200]
    return rec


def test_the_h200_sweep_ships_with_its_figures(h200) -> None:
    assert h200.tag == "H200" and h200.date == "2026-12-04"
    assert h200.machine["versions"]["torch"] == "2.11.0"
    assert len(h200.points) == 8  # 256x4 .. 1024x24 at batch 32 and 128, 256 tokens a row
    at = {(p.hidden, p.layers, p.batch_size): p for p in h200.points}
    # The figures the README quotes, as sweep-large.txt printed them on the H200.
    assert at[768, 12, 32].check("bf16").speedup == pytest.approx(4.20, abs=0.005)
    assert at[1024, 24, 128].check("bf16").speedup == pytest.approx(7.70, abs=0.005)
    assert at[256, 4, 32].check("bf16").verdict == "slower"
    assert at[768, 12, 32].step_s["fp32"] == pytest.approx(0.1101, abs=1e-4)


def test_its_sentences_say_where_it_paid_and_never_here(h200) -> None:
    ((seq, notes),) = h200.notes()
    assert seq == 256
    assert [n.key for n in notes] == ["pays_from", "pays_always", "pays_always_anywhere"]
    assert contradictions(notes, h200.points) == []
    en = [message(n.key, n.args, "en") for n in notes]
    assert en[0].startswith("at batch 32, bf16 pays on the H200 from about 26.2 M parameters")
    assert en[2].startswith("fp16 pays on the H200 at each of the 4 points measured (86.7 to 305 M")
    for lang in ("en", "es", "pt"):
        said = " ".join(message(n.key, n.args, lang) for n in notes)
        assert not {"here", "this GPU", "aquí", "aqui", "esta GPU", "nesta GPU"} & set(
            said.replace(":", " ").split(" ")
        ), said
        assert "torch.compile" not in said  # this machine's fp8 line is not the recording's


def test_a_sweep_the_cli_writes_reads_back_point_for_point(tmp_path: Path) -> None:
    points = [
        fake_point(SIZES[i], batch, {"bf16": v, "fp16": "slower"})
        for batch in (8, 32)
        for i, v in enumerate(("slower", "same", "faster"))
    ]
    machine = {"device_kind": "cuda", "device_name": "NVIDIA L4",
               "gpu": {"kind": "cuda", "name": "NVIDIA L4"}, "date": "2026-12-05T10:00:00"}  # fmt: skip
    path = tmp_path / "sweep-l4.json"
    path.write_text(json.dumps(sweep_document(points, None, machine)))
    rec = read_sweep(path)
    assert rec.tag == "L4" and len(rec.points) == len(points)
    for old, new in zip(points, rec.points, strict=True):
        assert new.shape() == old.shape() and new.step_s == pytest.approx(old.step_s)
        for precision in ("bf16", "fp16"):
            a, b = old.check(precision), new.check(precision)
            assert (b.verdict, b.speedup, b.low, b.high) == (a.verdict, a.speedup, a.low, a.high)
    ((_, notes),) = rec.notes()
    assert contradictions(notes, rec.points) == []
    assert "fp16 never pays on the L4" in " ".join(n.text for n in notes)


def _doc() -> dict:
    return json.loads(
        (Path(pays.__file__).parents[2] / "assets/reference" / FOLDER / H200).read_text()
    )


@pytest.mark.parametrize(
    ("spoil", "says"),
    [
        (lambda d: d.pop("points"), "points is missing"),
        (lambda d: d.update(points={"a": 1}), "points is not a list"),
        (lambda d: d["points"][0].pop("step_s"), "points[0].step_s is missing"),
        (lambda d: d["points"][1].update(speedup_vs_fp32=float("nan")), "is NaN"),
        (lambda d: d["points"][1].update(precision="fp64"), "is not one of"),
        (lambda d: d["points"].append(dict(d["points"][1])), "has 2 entries (at most 1)"),
        (lambda d: d["points"].pop(0), "fp32 is missing"),
        (lambda d: d.update(version=99), "version is out of range"),
        (lambda d: d["points"][0].update(model="x" * 5000), "characters long"),
    ],
)
def test_a_broken_sweep_file_is_refused_in_one_line(spoil, says) -> None:
    doc = _doc()
    spoil(doc)
    with pytest.raises(RecordingError) as err:
        parse_sweep(doc, "bad.json")
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_broken_file_in_the_folder_is_left_out_with_one_line(tmp_path, caplog) -> None:
    (tmp_path / H200).write_text(json.dumps(_doc()))
    (tmp_path / "sweep-bad.json").write_text("{not json")
    (tmp_path / "other.json").write_text("{}")  # not a sweep's name: never read
    with caplog.at_level(logging.WARNING, logger="mpdemo.files"):
        found = [r.name for r in shipped_sweeps(tmp_path)]
        shipped_sweeps(tmp_path)
    assert found == [H200]
    said = [r.getMessage() for r in caplog.records if "sweep-bad.json" in r.getMessage()]
    assert len(said) == 1 and "not JSON" in said[0]


def test_the_page_section_names_the_machine_in_every_language(monkeypatch, tmp_path) -> None:
    en, es = recorded_html("en"), recorded_html("es")
    assert "Recorded on NVIDIA H200 (2026-12-04), not on this machine" in en
    assert "Grabado en NVIDIA H200" in es and "bf16 compensa en la H200" in es
    assert en.count("<tr>") == 1 + 20  # a row per point and precision, as the file holds them
    assert "4.20× [4.15–4.28] faster" in en
    monkeypatch.setenv("MPDEMO_REFERENCE_DIR", str(tmp_path))  # a folder with no sweeps
    assert recorded_html("en") == ""
