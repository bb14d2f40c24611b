"""Is the Hugging Face Hub reachable? Asked once per process, answered in under 2 s."""

from __future__ import annotations

import os
import threading

from ..messages import ConfigError
from ..state import on_reset

_lock = threading.Lock()
_reachable: bool | None = None


def _answers(url: str, timeout: float, into: list[bool]) -> None:
    """Append whether an HTTP(S) server answers at url (any status): a TCP connect alone is not
    proof, since some sandboxes accept every connection and then say nothing."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout):
            into.append(True)
    except urllib.error.HTTPError:
        into.append(True)  # 4xx/5xx: the Hub is there
    except (OSError, ValueError):
        into.append(False)


def hub_reachable(timeout: float = 1.5) -> bool:
    """One HEAD request to the Hub endpoint, cached; HF_HUB_OFFLINE=1 answers False at once."""
    global _reachable
    with _lock:
        if _reachable is None:
            if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
                _reachable = False
            else:
                # A thread bounds the whole check (DNS included, which urllib's timeout doesn't).
                result: list[bool] = []
                url = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
                args = (url + "/api/whoami-v2", timeout, result)
                probe = threading.Thread(target=_answers, args=args, daemon=True)
                probe.start()
                probe.join(timeout + 0.3)
                _reachable = bool(result and result[0])
            if not _reachable:
                # Stop huggingface_hub's own retries for anything imported after this point.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
        return _reachable


@on_reset
def reset_cache() -> None:
    """Forget the cached answer (tests, mpdemo.reset())."""
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
