"""The Code tab and the Train tab's "Python script" show a run's own code: its RunConfig,
whether it ran in this page or came back from the browser after a reload."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mpdemo import cli
from mpdemo.config import RunConfig
from mpdemo.recorded import read_runs
from mpdemo.ui import recorded_ui
from mpdemo.ui.session import Session

TINY = ["--train-slice", "train[:64]", "--eval-slice", "validation[:16]", "--batch-size", "8"]
# Settings no form default has, so code drawn from the form instead of the run shows.
RAN = {"steps": 3, "lr": 0.01}


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> dict[str, Any]:
    """What a browser keeps of a page's runs (torch fp32 and bf16, 3 steps at lr 0.01)."""
    path = tmp_path_factory.mktemp("runs") / "runs.json"
    code = cli.main(["run", *TINY, "--steps", "3", "--lr", "0.01", "--precision", "fp32,bf16",
                     "--quiet", "--calibrate", "off", "--json", str(path)])  # fmt: skip
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
