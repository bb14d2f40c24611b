"""What the browser tests share: chromium, its flags, and the app on a free port (`url`).

Not a conftest.py: tests/conftest.py is imported as `conftest` by the other tests, and a second
conftest module here would shadow it (seen in CI)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from chromium_launch import CHROMIUM  # noqa: F401 - re-exported
from chromium_launch import CHROMIUM_ARGS as ARGS  # noqa: F401
from conftest import free_port  # noqa: F401 - re-exported

# The browser locale that asks for each page language (Accept-Language, navigator.language): the
# session's page pool keeps one page a locale, so the tests share these.
LOCALES = {"en": "en-US", "es": "es-ES", "pt": "pt-BR"}

BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian's chromium is not installed"),
]


@pytest.fixture(scope="session")
def url(app_url: str) -> str:
    """The shared app (tests/conftest.py: one server for the session)."""
    return app_url


# Screenshots only where $MPDEMO_SHOTS names a folder (a person looking at them): a full page
# is a second or two of chromium's time each, and no test asserts on the pictures.
SHOTS = Path(os.environ["MPDEMO_SHOTS"]) if os.environ.get("MPDEMO_SHOTS") else None


def shoot(target: Any, name: str, **kw: Any) -> None:
    """A screenshot of a page or a locator into $MPDEMO_SHOTS, when it is set."""
    if SHOTS is not None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        target.screenshot(path=str(SHOTS / name), **kw)


def set_number(page: Any, elem_id: str, value: str) -> None:
    """Type into a Number's (or a Slider's) input and commit it, as a person does."""
    box = page.locator(f"#{elem_id} input[type=number]").first
    box.fill(value)
    box.press("Enter")
