"""What the browser tests share: chromium, its flags, and the app on a free port (`url`).

Not a conftest.py: tests/conftest.py is imported as `conftest` by the other tests, and a second
conftest module here would shadow it (seen in CI)."""

from __future__ import annotations

import os

import pytest
from conftest import CHROMIUM, free_port, own_contexts  # noqa: F401 - re-exported
from conftest import CHROMIUM_ARGS as ARGS  # noqa: F401

BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
]


@pytest.fixture(scope="session")
def url(app_url: str) -> str:
    """The shared app (tests/conftest.py: one server for the session)."""
    return app_url
