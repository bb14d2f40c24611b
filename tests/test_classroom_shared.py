"""A class on one server, on the page: shared comparisons, Run my own, the line, the board."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from test_ui import FAST, wait_no_runner

from mpdemo.classroom import broadcast
from mpdemo.ui.train import classroom
from mpdemo.ui.train.handlers import stop, train
from mpdemo.ui.train.session import Session
from mpdemo.ui.train.status import status_text
from tests.conftest import lines_in

# A seed no other test trains with: nothing here joins another test's comparison.
SETTINGS = {**FAST, "steps": 6, "precisions": ["fp32"], "seed": 11}


@pytest.fixture(autouse=True)
def fresh_hub(monkeypatch):
    """Each test its own server-wide hub (the app reads broadcast.hub() at each click)."""
    hub = broadcast.Hub()
    monkeypatch.setattr(broadcast, "_HUB", hub)
    yield hub
    for c in [*hub.index.values(), *hub.waiting, hub.current]:
        if c is not None:
            c.stop()
    assert wait_no_runner(30)


def run(values: dict, session: Session, mode: str = "train", lang: str = "en") -> list[dict]:
    """Every frame train() streams for one click."""
    return list(train(values, lang, session, mode))


def in_thread(values: dict, session: Session, out: dict, name: str, mode: str = "train"):
    th = threading.Thread(target=lambda: out.__setitem__(name, run(values, session, mode)))
    th.start()
    return th


def json_runs(session: Session) -> list[dict]:
    return json.loads(Path(session.write_files()["json"]).read_text(encoding="utf-8"))["runs"]


def test_a_shared_run_streams_to_two_visitors_through_the_api(app_url):  # noqa: F811
    from gradio_client import Client

    first, second = Client(app_url, verbose=False), Client(app_url, verbose=False)
    try:
        jobs = [c.submit(api_name="/train", **SETTINGS) for c in (first, second)]
        results = [j.result(timeout=240) for j in jobs]
    finally:
        first.close()
        second.close()
    statuses = [r[0] for r in results]
    assert all("Done: 1 run (1 completed)" in s for s in statuses), statuses
    # One of them trained it; the other watched it and is told so, in words.
    shared = [s for s in statuses if "another visitor started" in s]
    assert len(shared) == 1 and "streamed live" in shared[0]
    assert lines_in(results[0][1]) == lines_in(results[1][1]) == {"torch · fp32": 6}
    # The downloads say where each visitor's runs came from.
    origins = []
    for r in results:
        path = r[-3]["value"] if isinstance(r[-3], dict) else r[-3]  # the JSON download
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        origins.append([run.get("shared_from") for run in doc["runs"]])
    assert sorted(o[0]["kind"] if o[0] else "own" for o in origins) == ["own", "shared"]


def test_run_my_own_trains_again_and_says_nothing_is_shared() -> None:
    watcher, mine = Session(), Session()
    first = run(SETTINGS, Session())  # someone trained it a moment ago
    assert "another visitor" not in first[-1]["status"]
    watched = run(SETTINGS, watcher)
    assert "another visitor ran" in watched[-1]["status"]  # replayed as recorded
    assert "as recorded then" in watched[-1]["status"]
    pressed = time.monotonic()
    frames = run(SETTINGS, mine, mode="own")
    assert "another visitor" not in frames[-1]["status"]
    assert "Done: 1 run (1 completed)" in frames[-1]["status"]
    own = mine.runner.comparison
    assert own is not watcher.runner.comparison and own.started_at >= pressed  # trained now
    assert [r.get("shared_from") for r in json_runs(mine)] == [None]
    assert json_runs(watcher)[0]["shared_from"]["kind"] == "shared"
    script = Path(watcher.script_file("torch · fp32")).read_text(encoding="utf-8")
    assert script.startswith("# The run this script reproduces was not trained by you")
    compile(script, "script.py", "exec")
    assert "not trained by you" not in Path(mine.script_file("torch · fp32")).read_text("utf-8")


def test_a_different_setting_never_joins_a_shared_run() -> None:
    a, b, c = Session(), Session(), Session()
    run(SETTINGS, a)
    for session, changed in ((b, {"steps": 7}), (c, {"precisions": ["bf16"]})):
        frames = run({**SETTINGS, **changed}, session)
        assert "another visitor" not in frames[-1]["status"]
        assert session.runner.comparison is not a.runner.comparison
        assert session.runner.kind == "own"


@pytest.mark.parametrize(
    ("lang", "words"), [("en", "2nd** in line"), ("es", "2.º** en la fila"), ("pt", "2º** na fila")]
)
def test_a_waiting_visitor_reads_their_place_and_wait_in_their_language(lang, words) -> None:
    busy, waiting = Session(), Session()
    long_run = {**SETTINGS, "steps": 2000}
    frames = train(long_run, lang, busy)
    for _frame in frames:  # until it steps: it holds the line
        if busy.state.progress.get("step"):
            break
    gen = train({**SETTINGS, "steps": 5}, lang, waiting)
    first = next(gen)
    text = first["status"]
    assert words in text, text
    # The wait is the running comparison's remaining time (its steps are fitted to nothing
    # here, so about 2000 steps at the measured pace): a duration is said.
    assert any(unit in text for unit in (" s", "min")), text
    frames.close()  # its tab closed: the run it trained alone stops, the line moves
    rest = list(gen)
    assert "Done: 1 run (1 completed)" in status_text(waiting, "en", finished=True)
    assert rest


def test_a_full_line_refuses_with_what_to_do(fresh_hub) -> None:
    fresh_hub.max_queue = 0
    session = Session()
    gen = train(SETTINGS, "es", session)
    first = next(gen)
    assert "la fila de este servidor está llena" in first["status"]
    assert "Entrenar" in first["status"]  # what to do: watch the one running, or wait
    with pytest.raises(Exception, match="llena"):
        next(gen)


def test_a_viewers_stop_leaves_the_producer_running() -> None:
    producer, viewer = Session(), Session()
    long_run = {**SETTINGS, "steps": 40}
    out: dict = {}
    th = in_thread(long_run, producer, out, "producer")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not producer.state.progress.get("step"):
        time.sleep(0.05)
    gen = train(long_run, "en", viewer)
    for _ in gen:
        if viewer.state.progress.get("step"):
            break
    reply = stop(viewer, "en")
    assert "Stopped" in reply
    rest = list(gen)
    assert "You stopped watching" in rest[-1]["status"]
    th.join(180)
    assert "Done: 1 run (1 completed)" in out["producer"][-1]["status"]
    assert producer.runs[0]["summary"]["steps"] == 40


def test_the_board_follows_the_teachers_comparison() -> None:
    teacher, student = Session(), Session()
    note = classroom.publish(teacher, "en")
    code = note.split("**")[1]
    assert len(code) == 4 and code in classroom.board_note(teacher, "es")
    out: dict = {}
    got: list[dict] = []

    def follow() -> None:
        for frame in classroom.follow(train, code.lower(), "en", student, {}, "127.0.0.1"):
            got.append(frame)
            if student.runs:  # the teacher's run has finished here too: the tab closes
                break

    follower = threading.Thread(target=follow)
    follower.start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(
        "waiting for" in f.get("status", "") for f in got
    ):
        time.sleep(0.05)
    th = in_thread({**SETTINGS, "seed": 12, "steps": 80}, teacher, out, "teacher")
    th.join(180)
    follower.join(180)
    assert not follower.is_alive()
    assert student.runner.kind == "board"
    statuses = [f.get("status", "") for f in got]
    assert any(f"Board **{code}**" in s and "streamed live" in s for s in statuses), statuses
    assert [r["summary"]["steps"] for r in student.runs] == [80]
    assert len(student.series["torch · fp32"].step) == 80  # its plots drew the teacher's run
    teacher_steps = [s["loss"] for s in teacher.runs[0]["steps"]]
    assert [s["loss"] for s in student.runs[0]["steps"]] == teacher_steps
    assert json_runs(student)[0]["shared_from"]["board"] == code
    with pytest.raises(Exception, match="no board has this code"):
        list(classroom.follow(train, "QQQQ", "en", Session(), {}, "127.0.0.1"))
