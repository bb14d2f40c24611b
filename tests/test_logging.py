"""A failed run: one clear line for the person, the traceback in the log and the JSON."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

from conftest import ROOT

from mpdemo import RunConfig
from mpdemo.engine.core import execute, failed_summary, prepare


def test_failed_run_keeps_traceback_in_log_and_summary(small_cfg: RunConfig, caplog) -> None:
    prep = prepare(small_cfg)

    def broken_forward(**_batch):
        raise RuntimeError("kernel exploded")

    prep.model.forward = broken_forward
    with caplog.at_level(logging.INFO, logger="mpdemo"):
        summary = execute(prep, lambda _event: None)
    assert summary["status"] == "failed"
    assert summary["warnings"] == ["the run failed: RuntimeError: kernel exploded"]
    assert "Traceback" in summary["error_detail"] and "broken_forward" in summary["error_detail"]
    failures = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert failures and failures[0].run_id == "0:torch · fp32"
    assert failures[0].exc_info is not None


def test_bad_input_is_one_line_without_traceback() -> None:
    from mpdemo.messages import ConfigError

    summary = failed_summary(RunConfig(), ConfigError("no_cuda"))
    assert "error_detail" not in summary
    assert summary["error"].startswith("--device cuda was asked for")


def test_cli_json_carries_error_detail_and_stderr_stays_short(tmp_path) -> None:
    # A bug in a run (not bad input): a model the registry knows but whose data cannot tokenise.
    script = (
        "import sys, mpdemo.engine.models as m\n"
        "def bad(*a, **k):\n    raise RuntimeError('model factory broke')\n"
        "m.builtin_model = bad\nimport mpdemo.engine.core as e\ne.builtin_model = bad\n"
        "from mpdemo.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    out = tmp_path / "runs.json"
    proc = subprocess.run(
        [sys.executable, "-c", script, "run", "--steps", "2", "--train-slice", "train[:32]",
         "--eval-slice", "validation[:8]", "--batch-size", "8", "--json", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "model factory broke" in proc.stderr
    (run,) = json.loads(out.read_text())["runs"]
    assert "model factory broke" in run["summary"]["error_detail"]
