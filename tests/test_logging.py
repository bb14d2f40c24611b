"""A failed run: one clear line for the person, the traceback in the log and the JSON."""

from __future__ import annotations

import json
import logging

from mpdemo import RunConfig
from mpdemo.engine.core import execute, failed_event, prepare


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

    summary = failed_event(RunConfig(), ConfigError("no_cuda")).summary
    assert "error_detail" not in summary
    assert summary["error"].startswith("--device cuda was asked for")


def test_cli_json_carries_error_detail_and_stderr_stays_short(
    tmp_path, monkeypatch, capsys
) -> None:
    # A bug in a run (not bad input): the model factory breaks. The CLI's main() in this process
    # (tests/test_cli_and_sources.py runs it as a process for its exit code and stderr).
    import mpdemo.engine.core as core
    import mpdemo.engine.models as models
    from mpdemo.cli.main import main

    def bad(*_a, **_k):
        raise RuntimeError("model factory broke")

    monkeypatch.setattr(models, "builtin_model", bad)
    monkeypatch.setattr(core, "builtin_model", bad)
    # log.setup() keeps the first handler it made, bound to the stderr of its day (another
    # test's capture): without it, main() makes one that writes where this test reads.
    from mpdemo import log

    kept = [h for h in log.logger.handlers if not isinstance(h.formatter, log._Format)]
    monkeypatch.setattr(log.logger, "handlers", kept)
    out = tmp_path / "runs.json"
    code = main(["run", "--steps", "2", "--train-slice", "train[:32]", "--eval-slice",
                 "validation[:8]", "--batch-size", "8", "--json", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert "Traceback" not in err
    assert "model factory broke" in err
    (run,) = json.loads(out.read_text())["runs"]
    assert "model factory broke" in run["summary"]["error_detail"]
