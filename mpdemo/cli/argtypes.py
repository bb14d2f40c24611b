"""The command line's argument types, shared by `run`/`code`/`underflow` (cli.py) and `sweep`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


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
