"""Files written whole or not at all, and output paths checked before the work that fills them."""

from __future__ import annotations

import contextlib
import csv
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO

from ..messages import ConfigError


def _umask() -> int:
    # os.umask() can only be read by setting it, which races with other threads' files.
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def write_atomic(
    path: str | Path, write: Callable[[IO[str]], None], newline: str | None = None
) -> None:
    """Call `write(f)` on a temporary file beside `path`, renamed onto it (never onto /dev/null)."""
    target = Path(path)
    _replaceable(target, "path")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())  # the data is on disk before the name points at it
        # mkstemp makes the file 0600; a file written with open() gets 0666 less the umask.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_csv_atomic(
    path: str | Path, columns: Sequence[str], rows: Iterable[Mapping[str, object]]
) -> None:
    """A CSV with a header row of `columns`, whole or not at all; other keys are left out."""

    def write(f: IO[str]) -> None:
        w = csv.DictWriter(f, fieldnames=list(columns), extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)

    write_atomic(path, write, newline="")


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write `text` to `path` whole or not at all."""
    write_atomic(path, lambda f: f.write(text))


def _replaceable(target: Path, flag: str) -> None:
    """Refuse a path whose file is not a regular one this command may replace."""
    if not str(target) or str(target) == ".":
        raise ConfigError("output_empty", flag=flag)
    try:
        info = target.lstat()
    except (FileNotFoundError, NotADirectoryError):
        return  # nothing there to replace (a missing folder is said by check_output_path)
    except OSError as err:
        raise _not_writable(flag, target, err) from None
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError("output_is_folder", flag=flag, path=str(target))
    if stat.S_ISLNK(info.st_mode):
        raise ConfigError("output_symlink", flag=flag, path=str(target))
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError("output_not_regular", flag=flag, path=str(target))


def check_output_path(path: str | Path, flag: str) -> Path:
    """Raise a keyed ConfigError unless a file can be written at `path` (named by its `flag`)."""
    if not str(path).strip():
        raise ConfigError("output_empty", flag=flag)
    target = Path(path)
    folder = target.parent
    if not target.is_symlink() and not folder.is_dir():
        raise ConfigError("output_no_folder", flag=flag, path=str(target), folder=str(folder))
    _replaceable(target, flag)
    try:
        # Permission, a read-only mount and a full quota all answer a real file (os.access may not).
        with tempfile.NamedTemporaryFile(prefix=f".{target.name}.", dir=folder):
            pass
    except OSError as err:
        raise _not_writable(flag, target, err) from None
    return target


def _not_writable(flag: str, target: Path, err: OSError) -> ConfigError:
    detail = err.strerror or type(err).__name__
    folder = str(target.parent)
    return ConfigError(
        "output_not_writable", flag=flag, path=str(target), folder=folder, detail=detail
    )


def check_output_paths(paths: list[tuple[str, str | Path | None]]) -> None:
    """check_output_path for each (flag, path) given (None: not asked), and no path twice."""
    seen: dict[str, str] = {}
    for flag, path in paths:
        if path is None:
            continue
        target = check_output_path(path, flag)
        real = os.path.realpath(target)
        if real in seen:
            raise ConfigError("output_same_path", flag=flag, other=seen[real], path=str(target))
        seen[real] = flag
