"""A public Space holds: opened runs files are bounded and freed, a bad file leaves the session as
it was, text from a file is shown as text, uploads are capped before they are stored, a failed
download write is a message, /train's last value carries the downloads, the number boxes follow
the CLI's rule, stored runs outlive a restart, recorded runs compare within their own file."""

from __future__ import annotations

import copy
import json
import math
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from mpdemo.files.recorded import MAX_FILE_BYTES, read_runs, reference_files
from mpdemo.ui.text import shown
from mpdemo.ui.train import recorded as recorded_ui
from mpdemo.ui.train import session as sessions
from mpdemo.ui.train import session_life
from mpdemo.ui.train.session import RECORDED_POINTS, RECORDED_POINTS_CAP, Session

HOSTILE = '<img src="http://127.0.0.1:9/t.png"> **Session expired** [log in](http://127.0.0.1:9/p)'


def reference_doc() -> dict[str, Any]:
    """The shipped default CPU recording (fp32 and bf16 through torch) as a JSON document."""
    path = next(p for p in reference_files() if p.name == "default-cpu.json")
    return json.loads(path.read_text(encoding="utf-8"))


def write_doc(path: Path, doc: dict[str, Any]) -> Path:
    """`doc` as a runs file at `path`."""
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def rendered(markdown: str) -> str:
    """What a CommonMark renderer that lets HTML through (as gr.Markdown does) makes of it."""
    return MarkdownIt("commonmark", {"html": True}).render(markdown)


def opened(
    session: Session, path: Path | None, lang: str = "en", name: str | None = None
) -> list[dict[str, Any]]:
    """Every frame load_runs streams for `path` (named `name`, as a browser names an upload)."""
    if name is not None:
        return list(recorded_ui._open(session, lang, path, name))
    return list(recorded_ui.load_runs(str(path) if path else None, lang, session))


# --- 3. text from a file is shown as text ----------------------------------------------------------


def test_a_hostile_machine_name_renders_no_image_and_no_link(tmp_path: Path) -> None:
    doc = reference_doc()
    doc["machine"]["device_name"] = HOSTILE
    doc["runs"][0]["summary"]["label"] = "**bold** <b>x</b>"
    session = Session()
    frames = opened(session, write_doc(tmp_path / "a.json", doc), name="<i>evil</i>.json")
    status = frames[0]["status"]
    assert "Opened" in status
    html = rendered(status)
    assert "<img" not in html and "<a " not in html and "<i>" not in html and "<b>" not in html
    assert html.count("<strong>") == 1  # the template's own bold (the file name), nothing else
    # It still reads as what the file says.
    assert "Session expired" in html and "127.0.0.1:9/p" in html


def test_shown_text_keeps_plain_names_readable() -> None:
    assert shown("cli.json · EPYC 7B13 · torch 2.13.0") == "cli.json · EPYC 7B13 · torch 2.13.0"
    for text in (HOSTILE, "www.example.com", "a@b.example", "$$x$$", "line\n# heading", "`x`"):
        html = rendered(f"Opened **{shown(text)}**")
        assert "<a " not in html and "<img" not in html and "<h1" not in html, html
        assert "<code>" not in html and "<em>" not in html, html
    assert len(shown("x" * 10_000)) < 2100  # bounded on the status line


def test_a_refused_files_error_line_is_text_too(tmp_path: Path) -> None:
    doc = reference_doc()
    doc["runs"][0]["summary"]["steps"] = math.nan
    name = '<img src="http://127.0.0.1:9/x">.json'
    frames = opened(Session(), write_doc(tmp_path / "a.json", doc), name=name)
    html = rendered(frames[0]["status"])
    assert "Not opened" in html and "runs[0].summary.steps" in html
    assert "<img" not in html


# --- 2. a bad file leaves the session exactly as it was ----------------------------------------


def _state(session: Session) -> tuple[Any, ...]:
    return (
        [r.labels for r in session.recordings],
        list(session.plot_labels()),
        session.table("en").data.to_dict(),
    )


@pytest.mark.parametrize(
    "changes",
    [
        {"steps": math.nan},
        {"params": math.inf},
        {"params": 10**400},
        {"warnings": [1, {"a": 2}]},
        {"warning_keys": "abc"},
    ],
)
def test_the_issues_files_change_nothing_and_a_good_file_still_opens(
    tmp_path: Path, changes: dict[str, Any]
) -> None:
    session = Session()
    good = write_doc(tmp_path / "good.json", reference_doc())
    opened(session, good)
    before = _state(session)
    doc = reference_doc()
    doc["runs"][0]["summary"].update(changes)
    bad = tmp_path / "bad.json"
    # json writes 10**400 as digits and NaN/Infinity as the tokens Python reads back
    bad.write_text(json.dumps(doc), encoding="utf-8")
    frames = opened(session, bad)
    assert len(frames) == 1 and frames[0]["status"].startswith("Not opened: bad.json")
    assert "\n" not in frames[0]["status"]
    assert _state(session) == before
    other = reference_doc()
    other["machine"]["date"] = "2026-12-01T00:00:00+00:00"  # another file of that machine
    frames = opened(session, write_doc(tmp_path / "other.json", other))
    assert frames[0]["status"].startswith("Opened")
    assert len(session.recordings) == 2


def test_a_file_that_cannot_be_drawn_is_refused_at_the_join(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session()
    opened(session, write_doc(tmp_path / "good.json", reference_doc()))
    before = _state(session)
    real = recorded_ui.plot_updates

    def broken(sess: Session, lang: str, rebuild: bool) -> dict[str, Any]:
        if len(sess.recordings) > 1:
            raise ValueError("cannot convert float NaN to integer")
        return real(sess, lang, rebuild)

    monkeypatch.setattr(recorded_ui, "plot_updates", broken)
    doc = reference_doc()
    doc["machine"]["date"] = "2026-12-02"
    for lang, words in (("en", "Not opened"), ("es", "No se abrió"), ("pt", "Não foi aberto")):
        frames = opened(session, write_doc(tmp_path / "new.json", doc), lang)
        assert frames[0]["status"].startswith(words) and "new.json" in frames[0]["status"]
        assert _state(session) == before
    monkeypatch.setattr(recorded_ui, "plot_updates", real)
    assert opened(session, tmp_path / "new.json")[0]["status"].startswith("Opened")


# --- 1. what a session holds is bounded, and freed -----------------------------------------------


def big_doc(runs: int, steps: int) -> dict[str, Any]:
    """The reference recording with `runs` runs of `steps` steps each."""
    doc = reference_doc()
    run = doc["runs"][0]
    step = run["steps"][0]
    run["steps"] = [{**step, "step": i + 1} for i in range(steps)]
    run["config"]["steps"] = steps
    run["summary"]["steps"] = steps
    doc["runs"] = []
    for k in range(runs):
        r = copy.deepcopy(run)
        r["summary"]["label"] = f"torch · fp32 #{k}"
        doc["runs"].append(r)
    return doc


def test_an_opened_file_is_thinned_and_the_session_holds_a_bounded_number_of_steps(
    tmp_path: Path,
) -> None:
    session = Session()
    for i in range(4):
        # 80 runs over 4 files pass the cap of 64 runs' points; 1,200 steps a run, over 500.
        doc = big_doc(20, 1200)
        doc["machine"]["date"] = f"2026-11-0{i + 1}"
        frames = opened(session, write_doc(tmp_path / f"big{i}.json", doc))
        assert frames[0]["status"].startswith("Opened"), frames[0]["status"]
    for r in session.recordings:
        for run, label in zip(r.recording.runs, r.labels, strict=True):
            assert len(run["steps"]) <= RECORDED_POINTS
            assert run["steps"][-1]["step"] == 1200  # the line still reaches the last step
            assert len(r.series[label].step) <= RECORDED_POINTS
    held = sum(r.points for r in session.recordings)
    assert held <= RECORDED_POINTS_CAP
    assert session.recordings[-1].recording.name == "big3.json"  # the newest is kept
    # The table still says what the files measured (200 steps... as recorded, not thinned).
    assert session.summaries()[-1]["steps"] == 1200


def test_closing_a_session_frees_its_runs_and_deletes_its_folder(tmp_path: Path) -> None:
    session = Session()
    opened(session, write_doc(tmp_path / "good.json", reference_doc()))
    folder = session.folder()
    (folder / "mpdemo-runs.csv").write_text("x", encoding="utf-8")
    assert folder.is_relative_to(session_life.SESSIONS_ROOT)
    session_life.attach(session, "hash-1")
    assert len(session_life._OPEN) >= 1
    session_life.release("hash-1")
    assert not folder.exists()
    assert not session.recordings and not session.plot_labels()
    session_life.release("hash-1")  # twice (unload, then gradio's delete_callback): harmless


def test_start_up_deletes_the_folders_of_processes_that_are_gone(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    dead = root / "999999999-abcd" / "session-x"
    live = root / f"{os.getppid()}-abcd" / "session-y"
    for d in (dead, live):
        d.mkdir(parents=True)
    assert session_life.sweep_session_dirs(root) >= 1
    assert not dead.parent.exists() and live.exists()


# --- 5. a failed download write is a message ------------------------------------------------------


def test_a_failed_write_is_a_message_and_no_half_pair_is_offered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    session = Session()
    rec = read_runs(next(p for p in reference_files() if p.name == "default-cpu.json"))
    session.history = [{**r, "grid": 1, "status": "completed"} for r in rec.runs]
    session.runs = list(session.history)

    def read_only(*_args: Any, **_kw: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sessions, "write_runs", read_only)
    monkeypatch.setattr(Session, "machine", lambda _self: rec.machine)
    assert session.write_files() == {}
    assert session.files_error == "Permission denied"
    assert not list(session.folder().glob("*.csv"))  # the CSV written first was taken back
    monkeypatch.undo()
    monkeypatch.setattr(Session, "machine", lambda _self: rec.machine)
    files = session.write_files()
    assert set(files) == {"csv", "json"} and session.files_error is None
    assert read_runs(files["json"]).runs


# --- 9. recorded runs compare within their own file -----------------------------------------------


def test_two_files_of_one_machine_are_told_apart_and_compared_within_themselves(
    tmp_path: Path,
) -> None:
    from mpdemo.runs.notes import memory_notes

    a = reference_doc()
    b = reference_doc()
    b["machine"]["date"] = "2026-12-01T10:00:00+00:00"
    # File b's fp32 run saved twice the bytes and stepped twice as long as file a's.
    fp32_b, bf16_b = (r["summary"] for r in b["runs"])
    fp32_b["saved_activation_bytes"] *= 2
    fp32_b["mean_step_s"] *= 2
    bf16_b.pop("speedup_vs_fp32", None)
    session = Session()
    opened(session, write_doc(tmp_path / "a.json", a))
    opened(session, write_doc(tmp_path / "b.json", b))
    labels = session.recorded_labels()
    assert not any("(2)" in lab for lab in labels), labels
    assert any("b.json 2026-12-01" in lab for lab in labels), labels
    assert len(set(labels)) == 4
    summaries = session.summaries()
    by_label = {s["label"]: s for s in summaries}
    bf16_a, bf16_b_label = (lab for lab in labels if "bf16" in lab)
    assert by_label[bf16_b_label]["speedup_vs_fp32"] == pytest.approx(
        fp32_b["mean_step_s"] / bf16_b["mean_step_s"]
    )
    # Each file's bf16 against its own fp32's saved bytes, never the other file's.
    fp32_mb = {n.args["label"]: n.args["fp32_mb"] for n in memory_notes(summaries)}
    a_bytes = a["runs"][0]["summary"]["saved_activation_bytes"]
    assert fp32_mb[bf16_a] == pytest.approx(a_bytes / 2**20)
    assert fp32_mb[bf16_b_label] == pytest.approx(2 * a_bytes / 2**20)


# --- 8. stored runs outlive a restart -------------------------------------------------------------


def test_the_storage_secret_comes_from_the_environment_or_one_kept_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv(recorded_ui.SECRET_ENV, "from-the-space-secret")
    assert recorded_ui.storage_secret() == "from-the-space-secret"
    monkeypatch.delenv(recorded_ui.SECRET_ENV)
    first = recorded_ui.storage_secret()
    assert first and len(first) >= 32
    kept = tmp_path / "mpdemo" / recorded_ui.SECRET_FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert recorded_ui.storage_secret() == first  # the next start reads the same one
    assert kept.read_text(encoding="utf-8").strip() == first  # the kept file holds that secret


# --- 4. uploads are capped at launch --------------------------------------------------------------


def test_launch_caps_uploads_at_the_readers_limit_and_the_cache_is_cleaned() -> None:
    from mpdemo.ui import app

    assert app.launch_options()["max_file_size"] == MAX_FILE_BYTES
    frequency, age = app.DELETE_CACHE
    # A raw upload no event read (a stranger's twenty 2 MB posts) goes within minutes, not hours.
    assert 0 < frequency <= age and frequency + age <= 30 * 60


# --- through the server, as a visitor or an API caller reaches it ---------------------------------

SMALL = {
    "train_slice": "train[:64]",
    "eval_slice": "validation[:32]",
    "batch_size": 8,
    "device": "cpu",
    "precisions": ["fp32"],
}


@pytest.fixture
def server(app_server: Any) -> Any:
    """The shared app (tests/conftest.py), launched with app.py's options: (url, demo)."""
    return app_server


def returned(result: tuple[Any, ...], name: str) -> Any:
    """/train's value for the output `name` (gradio leaves Buttons out of an API's returns); an
    update's value where it is one."""
    from mpdemo.ui.train.frames import OUTPUTS

    value = result[[n for n in OUTPUTS if n != "stop_btn"].index(name)]
    if isinstance(value, dict) and value.get("__type__") == "update":
        return value.get("value", value)
    return value


def _files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file()} if folder.is_dir() else set()


def test_an_upload_over_the_cap_is_refused_and_nothing_stays_on_disk(
    server: Any, tmp_path: Path
) -> None:
    import httpx

    url, demo = server
    uploads = Path(demo.server_app.uploaded_file_dir)
    before = _files_under(uploads)
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.write(b"{" + b" " * (MAX_FILE_BYTES + 1024) + b"}")
    with big.open("rb") as f:
        answer = httpx.post(f"{url}gradio_api/upload", files={"files": f}, timeout=60)
    assert answer.status_code == 413, answer.text
    assert _files_under(uploads) == before
    # A file under the cap is taken (and kept in gradio's cache until its cleaning).
    small = write_doc(tmp_path / "small.json", reference_doc())
    with small.open("rb") as f:
        ok = httpx.post(f"{url}gradio_api/upload", files={"files": f}, timeout=60)
    assert ok.status_code == 200 and len(_files_under(uploads) - before) == 1


def test_train_s_last_value_carries_the_downloads(server: Any) -> None:
    from gradio_client import Client

    client = Client(server[0], verbose=False)
    try:
        result = client.predict(api_name="/train", steps=40, **SMALL)
    finally:
        client.close()
    status = returned(result, "status")
    assert "Done: 1 run" in status, status
    for name, suffix in (("csv", ".csv"), ("json", ".json")):
        value = returned(result, name)
        assert isinstance(value, str) and value.endswith(suffix), (name, value)
        assert Path(value).is_file()
    assert read_runs(returned(result, "json")).runs[0]["summary"]["steps"] == 40


def test_a_failed_download_write_is_said_and_the_runs_still_show(
    server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gradio_client import Client

    from tests.conftest import lines_in

    def read_only(*_args: Any, **_kw: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sessions, "write_runs", read_only)
    client = Client(server[0], verbose=False)
    try:
        result = client.predict(api_name="/train", steps=3, **SMALL)
    finally:
        client.close()
    status = returned(result, "status")
    assert "Done: 1 run" in status and "could not be written (Permission denied)" in status
    assert [row[0] for row in returned(result, "summary")["data"]] == ["torch · fp32"]
    assert lines_in(returned(result, "loss")) == {"torch · fp32": 3}
    assert returned(result, "csv") is None  # no stale or half-written file offered


@pytest.mark.parametrize(
    ("lang", "value", "words"),
    [
        ("en", 2.5, "a whole number from 1 to"),
        ("en", "abc", "a whole number from 1 to"),
        ("en", "1e2", "a whole number from 1 to"),
        ("en", None, "is empty: enter a whole number"),
        ("es", 2.5, "un número entero de 1 a"),
        ("pt", "abc", "um número inteiro de 1 a"),
    ],
)
def test_the_api_refuses_what_the_cli_refuses_in_the_page_s_language(
    server: Any, lang: str, value: Any, words: str
) -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(server[0], verbose=False)
    try:
        with pytest.raises(AppError) as refused:
            client.predict(api_name="/train", steps=value, lang=lang, **SMALL)
    finally:
        client.close()
    text = str(refused.value)
    assert words in text and "got None" not in text, text


def test_an_api_session_that_opened_a_file_is_freed_when_it_goes(
    server: Any, tmp_path: Path
) -> None:
    import time

    from gradio_client import Client, handle_file

    client = Client(server[0], verbose=False)
    before = len(session_life._OPEN)
    try:
        path = write_doc(tmp_path / "a.json", reference_doc())
        result = client.predict(handle_file(str(path)), api_name="/load_runs")
        assert result[0].startswith("Opened")
        assert len(session_life._OPEN) == before + 1
    finally:
        client.close()
    # gradio notices the closed heartbeat at its next beat (every 15 s; in the tests 0.25 s,
    # tests/conftest.py), then runs unload.
    deadline = time.monotonic() + 40
    while len(session_life._OPEN) > before and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(session_life._OPEN) == before
