"""A session's lifetime in the process: open tabs' sessions, their folders, the heap given back."""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Sized
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ...state import on_reset


class Closable(Protocol):
    """What the lifetime reads of a page session (ui/train/session.Session)."""

    @property
    def recordings(self) -> Sized: ...

    @property
    def history(self) -> Sized: ...

    def close(self) -> None: ...


S = TypeVar("S", bound=Closable)

# Every session's files (downloads, scripts) under one folder per process, so a start-up can
# delete what a process that died left behind without touching a live one's.
SESSIONS_ROOT = Path(tempfile.gettempdir()) / "mpdemo-sessions"


# gradio session hash → that tab's Session, freed when the tab closes (gradio keeps a closed tab's
# gr.State an hour); weak: the gr.State owns it.
_OPEN: weakref.WeakValueDictionary[str, Closable] = weakref.WeakValueDictionary()
_OPEN_LOCK = threading.Lock()
_PROCESS_DIR: Path | None = None


def attach(session: S, key: str | None) -> S:
    """Remember that the tab `key` (gradio's session hash) holds `session`; returns it."""
    if key:
        with _OPEN_LOCK:
            _OPEN[key] = session
    return session


def release(key: str | None) -> None:
    """The tab `key` closed: stop its training and free its runs, files and folder now."""
    if not key:
        return
    with _OPEN_LOCK:
        session = _OPEN.pop(key, None)
    if session is not None:
        held = bool(session.recordings or session.history)
        session.close()
        if held:
            give_back_memory()


@on_reset
def forget_open_sessions() -> None:
    """Stop tracking open tabs' sessions (their gr.State still owns and closes them)."""
    with _OPEN_LOCK:
        _OPEN.clear()


def give_back_memory() -> None:
    """Collect, and hand freed heap back to the OS (glibc keeps it: a server's RSS only grew)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


def process_dir() -> Path:
    """This process's folder under SESSIONS_ROOT ('<pid>-<random>')."""
    global _PROCESS_DIR
    if _PROCESS_DIR is None:
        _PROCESS_DIR = SESSIONS_ROOT / f"{os.getpid()}-{os.urandom(4).hex()}"
    return _PROCESS_DIR


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by another user
        return True
    return True


def sweep_session_dirs(root: Path | None = None) -> int:
    """At start-up: delete the session folders of processes that are gone (and older versions'
    'mpdemo-session-*' of more than a day); returns how many."""
    root = root or SESSIONS_ROOT
    removed = 0
    if root.is_dir():
        for child in root.iterdir():
            pid_text = child.name.split("-", 1)[0]
            if child == _PROCESS_DIR or (pid_text.isdigit() and _alive(int(pid_text))):
                continue
            shutil.rmtree(child, ignore_errors=True)
            removed += 1
    cutoff = time.time() - 86400
    for old in Path(tempfile.gettempdir()).glob("mpdemo-session-*"):
        try:
            if old.is_dir() and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed
