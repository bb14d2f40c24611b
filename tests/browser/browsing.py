"""What the browser tests share: chromium, its flags, and the app on a free port (`url`).

Not a conftest.py: tests/conftest.py is imported as `conftest` by the other tests, and a second
conftest module here would shadow it (seen in CI)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator

import pytest

CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags chromium keeps dialling out of this closed network.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
]


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The app on a free port, in this process (as app.py launches it)."""
    from mpdemo.config import Limits
    from mpdemo.ui import build_app, launch_options

    demo = build_app().queue(default_concurrency_limit=1, max_size=Limits.from_env().max_queue)
    port = free_port()
    demo.launch(
        prevent_thread_lock=True,
        server_name="127.0.0.1",
        server_port=port,
        quiet=True,
        **launch_options(),
    )
    yield f"http://127.0.0.1:{port}/"
    demo.close()
