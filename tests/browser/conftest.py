"""The app on a free port for the browser tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browsing import free_port


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The app on a free port, in this process (as app.py launches it)."""
    from mpdemo.config import Limits
    from mpdemo.ui import build_app

    demo = build_app().queue(default_concurrency_limit=1, max_size=Limits.from_env().max_queue)
    port = free_port()
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()
