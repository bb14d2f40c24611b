"""One `mpdemo` logger (a NullHandler, as libraries should); the app and the CLI call `setup()`."""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("mpdemo")
logger.addHandler(logging.NullHandler())


def run_logger(run_id: str) -> logging.LoggerAdapter:
    """A logger whose every line starts with the run id, e.g. '[0:torch · bf16] ...'."""
    return logging.LoggerAdapter(logger, {"run_id": run_id})


class _Format(logging.Formatter):
    """'mpdemo WARNING [0:torch · fp16] text'; tracebacks only at DEBUG level."""

    def __init__(self, tracebacks: bool) -> None:
        super().__init__("%(name)s %(levelname)s %(message)s")
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        run_id = getattr(record, "run_id", None)
        saved = record.msg
        if run_id:
            record.msg = f"[{run_id}] {record.msg}"
        exc = record.exc_info, record.exc_text
        if not self.tracebacks:
            record.exc_info, record.exc_text = None, None
        try:
            return super().format(record)
        finally:
            record.msg = saved
            record.exc_info, record.exc_text = exc


def setup(default_level: str = "WARNING") -> None:
    """Send mpdemo's records to stderr at MPDEMO_LOG_LEVEL (default: default_level); idempotent."""
    level_name = os.environ.get("MPDEMO_LOG_LEVEL", default_level).upper()
    level = logging.getLevelName(level_name)
    if not isinstance(level, int):
        level = logging.WARNING
    if not any(isinstance(h.formatter, _Format) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(_Format(tracebacks=level <= logging.DEBUG))
        logger.addHandler(handler)
    logger.setLevel(level)
