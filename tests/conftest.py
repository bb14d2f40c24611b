"""Shared fixtures: small, fast configs on the bundled data; the Hub is never contacted."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Tests must behave as on a machine without internet, wherever they run.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from mpdemo.config import RunConfig  # noqa: E402


@pytest.fixture
def small_cfg() -> RunConfig:
    """The tiny model on a small slice: a few steps take well under a second each."""
    return RunConfig(
        train_slice="train[:256]",
        eval_slice="validation[:64]",
        steps=4,
        batch_size=16,
        device="cpu",
    )


def events_of(cfg: RunConfig, stop=None) -> list:
    """Run train() to the end and return every event."""
    from mpdemo import train

    return list(train(cfg, stop))


def summary_of(events: list) -> dict:
    """The end event's summary."""
    (end,) = [e for e in events if e.kind == "end"]
    return end.summary


# --- one app and one browser for the whole session --------------------------------------------
# Each module used to launch its own server (build_app takes seconds) and its own chromium; the
# suite's time went to starting them. Modules that need a server with other settings (hosted caps,
# a viewer limit) still launch their own.
CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags chromium keeps dialling out of this closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_app() -> tuple[str, object]:
    """The app launched in this process on a free port, with app.py's queue and launch options."""
    from mpdemo.ui import build_app, launch_options
    from mpdemo.ui.serve import keep_busy_sessions, queue_options

    keep_busy_sessions()
    demo = build_app().queue(**queue_options())
    port = free_port()
    demo.launch(
        prevent_thread_lock=True,
        server_name="127.0.0.1",
        server_port=port,
        quiet=True,
        **launch_options(),
    )
    return f"http://127.0.0.1:{port}/", demo


@pytest.fixture(scope="session")
def app_server():
    """(url, demo): the app as app.py serves it, shared by every test that needs the default one."""
    url, demo = launch_app()
    yield url, demo
    demo.close()


@pytest.fixture(scope="session")
def app_url(app_server) -> str:
    """The shared app's URL."""
    return app_server[0]


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium through Playwright, one for the session (each test opens contexts)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    br = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield br
    br.close()
    pw.stop()


@contextlib.contextmanager
def own_contexts(browser) -> Iterator[None]:
    """Close the browser contexts (pages, sessions) opened inside this block, pass or fail."""
    before = set(browser.contexts)
    try:
        yield
    finally:
        for ctx in browser.contexts:
            if ctx not in before:
                ctx.close()
