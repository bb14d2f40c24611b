"""Is the Hugging Face Hub reachable? Asked once per process, answered in under 2 s."""

from __future__ import annotations

import os
import socket
import threading
from urllib.parse import urlparse

from .messages import ConfigError

_lock = threading.Lock()
_reachable: bool | None = None


def _endpoint() -> tuple[str, int]:
    url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    return url.hostname or "huggingface.co", url.port or (443 if url.scheme == "https" else 80)


def hub_reachable(timeout: float = 1.5) -> bool:
    """One TCP connect to the Hub endpoint, cached; HF_HUB_OFFLINE=1 answers False at once."""
    global _reachable
    with _lock:
        if _reachable is None:
            if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
                _reachable = False
            else:
                host, port = _endpoint()
                try:
                    # Resolution and connect both bounded: without a network, DNS is what hangs.
                    with socket.create_connection((host, port), timeout=timeout):
                        _reachable = True
                except OSError:
                    _reachable = False
            if not _reachable:
                # Stop huggingface_hub's own retries for anything imported after this point.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
        return _reachable


def reset_cache() -> None:
    """Forget the cached answer (tests)."""
    global _reachable
    with _lock:
        _reachable = None


def check_hub_id(value: str) -> None:
    """Raise ConfigError unless value has the Hub's repo id syntax (checked before any request)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(value)
    except HFValidationError as err:
        raise ConfigError("bad_hub_id", value=value, detail=str(err).split("\n")[0][:200]) from None


def require_hub(value: str) -> None:
    """Fail fast with a clear message when a Hub id is asked for and the Hub is unreachable."""
    check_hub_id(value)
    if not hub_reachable():
        raise ConfigError("hub_unreachable", value=value)
