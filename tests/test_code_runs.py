"""The Code tab and the Train tab's "Python script" show a run's own code: its RunConfig,
whether it ran in this page or came back from the browser after a reload."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mpdemo.cli import main as cli
from mpdemo.config import RunConfig
from mpdemo.files.recorded import read_runs
from mpdemo.ui.train import recorded as recorded_ui
from mpdemo.ui.train.session import Session

TINY = ["--train-slice", "train[:64]", "--eval-slice", "validation[:16]", "--batch-size", "8"]
# Settings no form default has, so code drawn from the form instead of the run shows.
RAN = {"steps": 3, "lr": 0.01}


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> dict[str, Any]:
    """What a browser keeps of a page's runs (torch fp32 and bf16, 3 steps at lr 0.01)."""
    path = tmp_path_factory.mktemp("runs") / "runs.json"
    code = cli.main(["run", *TINY, "--steps", "3", "--lr", "0.01", "--precision", "fp32,bf16",
                     "--quiet", "--json", str(path)])  # fmt: skip
    assert code == cli.EXIT_OK
    s = Session()
    runs = read_runs(path).runs
    s.configs = [RunConfig.from_dict(r["config"]) for r in runs]
    for r in runs:
        s.apply(SimpleNamespace(kind="end", run_id="x", label=r["summary"]["label"],
                                status="completed", summary=r["summary"]))  # fmt: skip
    return json.loads(json.dumps(s.stored()))


def test_restored_runs_can_be_reproduced(stored: dict[str, Any]) -> None:
    sess = Session()
    out = recorded_ui.restore_runs("en", stored, sess)
    assert out["script_run"]["choices"] == ["torch · fp32", "torch · bf16"]
    assert out["script_run"]["value"] == "torch · fp32"
    assert out["script_btn"]["interactive"] is True
    text = Path(out["script_btn"]["value"]).read_text(encoding="utf-8")
    assert 'precision="fp32",' in text and "steps=3," in text and "lr=0.01," in text
    # Nothing restored: the download stays as it was.
    assert "script_run" not in recorded_ui.restore_runs("en", None, Session())


# --- the Code tab -------------------------------------------------------------------------


def _demo() -> tuple[Any, dict[str, Any]]:
    from mpdemo.ui import app

    demo = app.build_app()
    return demo, {b.elem_id: b for b in demo.blocks.values() if getattr(b, "elem_id", None)}


def _args(fn: Any, by_id: dict[str, Any], values: dict[str, Any], extra: dict[int, Any]) -> list:
    """fn's inputs: the page's language, extra[component id], a Train control's value, else
    the component's own value (a State's default)."""
    from mpdemo.ui.train import controls

    names = {by_id[c.elem_id]._id: c.name for c in controls.CONTROLS}
    out = []
    for comp in fn.inputs:
        if comp is by_id["lang"]:
            out.append("en")
        elif comp._id in extra:
            out.append(extra[comp._id])
        elif comp._id in names:
            out.append(values.get(names[comp._id], comp.value))
        else:
            out.append(comp.value)
    return out


def test_a_burst_of_train_tab_changes_never_sends_a_stale_pick() -> None:
    # A preset sets a dozen Train controls at once: one Code-tab event each, all sent while the
    # radio still showed 'torch · bf16'. The first answer drops bf16 from the choices; gradio
    # then refused every later event ("'torch · bf16' ... is not in the list of choices").
    import asyncio
    import concurrent.futures

    from gradio.state_holder import SessionState

    from mpdemo.ui.train import controls

    demo, by_id = _demo()
    radio = by_id["code-run"]
    train = {by_id[c.elem_id]._id for c in controls.CONTROLS}
    updates = [fn for fn in demo.fns.values() if radio in fn.outputs]
    burst = [fn for fn in updates if any(t[0] in train for t in fn.targets)]
    (pick,) = [fn for fn in updates if any(t[0] == radio._id for t in fn.targets)]
    assert len(burst) >= 10
    state = SessionState(demo)
    before = {"backends": ["torch"], "precisions": ["fp32", "bf16"]}
    after = {"backends": ["torch"], "precisions": ["fp32", "fp16"], "steps": 40}

    async def burst_after_a_pick() -> dict[str, Any]:
        got = await demo.process_api(burst[0], _args(burst[0], by_id, before, {}), state=state)
        choices = got["data"][burst[0].outputs.index(radio)]["choices"]
        (chosen,) = [v for _, v in choices if v.endswith("torch · bf16")]
        await demo.process_api(pick, _args(pick, by_id, before, {radio._id: chosen}), state=state)
        out: dict[str, Any] = {}
        for fn in burst:  # each as the browser sent it: the radio still on bf16
            got = await demo.process_api(fn, _args(fn, by_id, after, {radio._id: chosen}), state)
            out = dict(zip([o._id for o in fn.outputs], got["data"], strict=True))
        return out

    # Its own thread: the session's Playwright (tests/conftest.py) keeps an event loop running
    # in this one, and asyncio.run() refuses to nest.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        out = pool.submit(asyncio.run, burst_after_a_pick()).result()
    assert out[radio._id]["value"] == "form:torch · fp16"  # the same pick's counterpart
    assert "<code>steps=40</code>" in out[by_id["code-settings"]._id]


def test_code_tab_shows_a_runs_own_config(stored: dict[str, Any]) -> None:
    from mpdemo.teach import listing as L
    from mpdemo.ui.i18n import t
    from mpdemo.ui.tabs import code as C

    sess = Session()
    sess.restore(stored)
    runs = C.page_runs(sess)
    assert runs == sess.configs  # the restored runs, as the Train tab's download has them
    form = {"backends": ["torch"], "precisions": ["fp32", "bf16"], "steps": 100, "lr": 0.5}
    # The runs changed (a training, a reload): the run, with its own settings.
    out = C.code_view("en", form, None, None, runs, "run")
    assert out["run"]["value"] == out["picked"] == "torch · bf16"
    assert out["settings"].startswith(t("code_settings_run", "en", run="<code>torch · bf16</code>",
                                         settings=""))  # fmt: skip
    assert "<code>steps=3</code>" in out["settings"] and "<code>lr=0.01</code>" in out["settings"]
    # The very script the Train tab's "Python script" downloads for that run.
    assert out["script"] == Path(sess.script_file("torch · bf16")).read_text(encoding="utf-8")
    assert out["script"] == L.script_for(runs[1])
    # The runs first, then the Train tab's grid (it differs: other steps and lr), as not run.
    values = [v for _, v in out["run"]["choices"]]
    assert values == ["torch · fp32", "torch · bf16", "form:torch · fp32", "form:torch · bf16"]
    # A Train-tab change shows the new settings, titled as not run; picking the run shows it.
    out = C.code_view("en", form, "torch · bf16", None, runs, "form")
    assert out["run"]["value"] == "form:torch · bf16" and "<code>lr=0.5</code>" in out["settings"]
    assert out["settings"].startswith(t("code_settings", "en", run="<code>torch · bf16</code>",
                                         settings=""))  # fmt: skip
    out = C.code_view("en", form, "torch · bf16", None, runs, None)
    assert "<code>lr=0.01</code>" in out["settings"] and "lr=0.01," in out["script"]
    # The Train tab's grid exactly as it ran: one entry per run, no "not run yet" twin.
    assert [e.value for e in C.code_entries(runs, list(runs))] == ["torch · fp32", "torch · bf16"]


def test_the_code_tab_follows_the_runs_of_its_page(stored: dict[str, Any]) -> None:
    # After a reload, the restored table's change (and Train's "Run to reproduce") re-draws the
    # Code tab from the session's runs: their settings, not the form's defaults.
    demo, by_id = _demo()
    listing = by_id["code-settings"]
    for trigger in ("summary", "script-run"):
        fns = [fn for fn in demo.fns.values()
               if listing in fn.outputs and any(t[0] == by_id[trigger]._id for t in fn.targets)]  # fmt: skip
        assert len(fns) == 1, trigger
    (fn,) = fns
    sess = Session()
    sess.restore(stored)
    state = next(c for c in fn.inputs if isinstance(getattr(c, "value", None), Session))
    got = fn.fn(*_args(fn, by_id, {}, {state._id: sess}))
    out = dict(zip([o._id for o in fn.outputs], got, strict=True))
    assert out[by_id["code-run"]._id]["value"] == "torch · bf16"
    assert "<code>steps=3</code>" in out[listing._id] and "<code>lr=0.01</code>" in out[listing._id]


def test_the_code_tab_lists_runs_that_started_not_those_still_waiting() -> None:
    from mpdemo.events import RunStarted
    from mpdemo.ui.tabs import code as C

    sess = Session()
    done, waiting = RunConfig(precision="fp32", lr=0.01), RunConfig(precision="bf16", lr=0.01)
    sess.configs = [done, waiting]  # a grid whose second run has not started
    sess.runs = [{"config": done.to_dict(), "summary": {}, "status": "completed"}]
    assert C.page_runs(sess) == [done]
    # It started, with its own steps: a real start event through the session's real fold.
    started = waiting.replace(steps=7)
    sess.apply(RunStarted(run_id="r2", label=started.label, index=1, total=2,
                          config=started.to_dict(), device="cpu", params=1, requested_dtype="bf16",
                          steps=7))  # fmt: skip
    assert C.page_runs(sess) == [done, started]
    assert C.page_runs(None) == []
