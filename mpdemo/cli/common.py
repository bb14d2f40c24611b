"""What the commands share: exit codes, the parser, flags, output files, tables, signals."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..config import RunConfig, cli_fields
from ..files.atomic import check_output_paths

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_SIGNAL = 128  # stopped by a signal: 128 + its number (130 SIGINT, 143 SIGTERM), as shells do


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line on stderr and exit 2, no usage dump."""

    def error(self, message: str) -> None:  # noqa: D102 - argparse's hook
        print(f"mpdemo: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_BAD_INPUT)


def choice_list(allowed: tuple[str, ...], name: str) -> Callable[[str], list[str]]:
    """An argparse type: 'a,b' -> ['a', 'b'], each one of `allowed` (duplicates dropped)."""

    def parse(text: str) -> list[str]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in items if t not in allowed]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"{name} {', '.join(bad) or repr(text)} is not one of {', '.join(allowed)}"
            )
        return list(dict.fromkeys(items))

    return parse


def add_field_flags(
    p: argparse.ArgumentParser,
    names: Sequence[str] | None = None,
    helps: dict[str, str] | None = None,
    lists: dict[str, tuple[str, ...]] | None = None,
) -> None:
    """RunConfig's fields `names` (default: all) as flags; numbers stay text for coerce_field."""
    d, helps, lists = RunConfig(), helps or {}, lists or {}
    for f in cli_fields():
        if names is not None and f.name not in names:
            continue
        flag, default = "--" + f.name.replace("_", "-"), getattr(d, f.name)
        help_ = helps.get(f.name, f.metadata["help"])
        if f.name in lists:  # 'a,b': a list of choices, one run each
            kind = {"type": choice_list(lists[f.name], f.name), "default": [default]}
        else:
            kind = {"choices": f.metadata["choices"] or None, "default": default}
        p.add_argument(flag, help=help_, **kind)


def add_output_flags(
    p: argparse.ArgumentParser,
    json: str = "write every run and step as JSON",
    csv: str = "write every step as CSV",
    quiet: str = "no per-run progress lines",
) -> None:
    """--json PATH, --csv PATH and --quiet, with what each command says of them."""
    p.add_argument("--json", dest="json_path", help=json)
    p.add_argument("--csv", dest="csv_path", help=csv)
    p.add_argument("--quiet", action="store_true", help=quiet)


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse --json/--csv paths no file can be written at, before anything trains (exit 2)."""
    flags = (("--json", "json_path"), ("--csv", "csv_path"))
    check_output_paths([(flag, getattr(args, dest, None)) for flag, dest in flags])


def table(
    rows: list[list[str]], align: Callable[[str, int], str] = str.ljust, rule: bool = False
) -> list[str]:
    """Rows of cells (the first the header) in columns, `rule`: dashes under the header."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(align(c, w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return [lines[0], "  ".join("-" * w for w in widths), *lines[1:]] if rule else lines


@contextmanager
def stop_on_signals(stop: threading.Event, graceful: bool = True) -> Iterator[dict[str, int]]:
    """SIGINT and SIGTERM set `stop`; a second, or any without `graceful`, interrupts at once.
    Yields {"signal": its number} once one came."""
    caught: dict[str, int] = {}

    def handler(signum: int, _frame: Any) -> None:
        first = "signal" not in caught
        caught.setdefault("signal", signum)
        stop.set()
        if not (graceful and first):
            raise KeyboardInterrupt

    previous = {}
    if threading.current_thread() is threading.main_thread():  # not the CLI called from a test
        previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield caught
    except KeyboardInterrupt:  # the second signal, or Ctrl-C where no handler could be set
        caught.setdefault("signal", signal.SIGINT)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
