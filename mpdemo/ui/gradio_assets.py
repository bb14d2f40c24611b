"""gradio's front-end files, served mended where gradio 6.31 makes an idle page cost CPU.

One mend, a condition added to one minified chunk, measured in headless chromium on a
2-core EPYC (quiet; /tmp scripts reading chromium's CPU from /proc around each action):

- **The leaked timer** (`statustracker-*.js`). The status tracker counts its timer on every
  animation frame while its status is "pending" and stops when the status changes. The tracker
  that covers the page while the app loads is removed in the moment its status turns
  "complete", so its stop never runs and its loop asks for a frame 60 times a second for as
  long as the page stays open: 0.42 CPU-s of renderer and 0.14 of the rest every 5 s idle (a
  bare gradio Blocks page too), 0.0 mended. Mended: the loop asks for its next frame only while
  its status is still "pending", which is all its stop did.

Tried and withdrawn: handing a component its loading status only when it changed (gradio
re-hands every status on every status message, each one snapshotting the component's value;
lesson 1's renderer CPU fell from 3.6-3.9 to 2.2-2.4 CPU-s). The updates are applied
asynchronously and can land out of order; re-handing all of them is what puts the last one on
top, and without it a plot's status stayed "pending" and a language switch did not relabel it
(3 browser tests of a whole-suite run failed once). What the app does instead leaves gradio's
re-handing as it is and shrinks what is re-handed: events that show no progress report it to a
State, which is never drawn (`_progress_nowhere` in app.py), so the statuses re-handed on each
message are those of a few small components, not of every tab's components.

`MendedAssets` (an ASGI middleware, in the app through `launch_options()`) serves that chunk
mended; a chunk that does not read as expected (another gradio) is served as gradio ships it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.middleware import Middleware
    from starlette.types import Receive, Scope, Send

# gradio's built chunks, e.g. /assets/statustracker-DQF-KcRT.js (hashed, minified names).
CHUNK_PATH = re.compile(r"/assets/(statustracker-[A-Za-z0-9_-]+\.js)$")
# function ze(){me(()=>{F(Pe,(performance.now()-w(de))/1e3),W&&ze()})}: the timer's loop.
_LOOP = re.compile(
    r"function (?P<loop>[\w$]+)\(\)\{(?P<raf>[\w$]+)\(\(\)=>\{(?P<tick>[^{}]*performance\.now\(\)"
    r"[^{}]*),(?P<on>[\w$]+)&&(?P=loop)\(\)\}\)\}"
)
# o.status===`pending`?Ve():...: the props whose status starts the loop.
_START = re.compile(r"(?P<props>[\w$]+)\.status===`pending`\?[\w$]+\(\):")


def mend_timer(source: str) -> str | None:
    """The status tracker's chunk with its timer loop bounded by "pending"; None if not found."""
    loops, starts = list(_LOOP.finditer(source)), list(_START.finditer(source))
    if len(loops) != 1 or len({m["props"] for m in starts}) != 1:
        return None
    m, props = loops[0], starts[0]["props"]
    fixed = (
        f"function {m['loop']}(){{{m['raf']}(()=>{{{m['tick']},"
        f"{m['on']}&&{props}.status===`pending`&&{m['loop']}()}})}}"
    )
    return source[: m.start()] + fixed + source[m.end() :]


MENDS: dict[str, Callable[[str], str | None]] = {
    "statustracker": mend_timer,
}


def assets_dir() -> Any:
    """Where the installed gradio keeps its built front-end chunks."""
    return importlib.resources.files("gradio").joinpath("templates/frontend/assets")


def mended_chunk(name: str) -> bytes | None:
    """gradio's chunk `name`, mended (read once); None when it is absent or reads otherwise."""
    return _served(name)[0]


@functools.lru_cache(maxsize=8)
def _served(name: str) -> tuple[bytes | None, str]:
    """The mended chunk and its ETag, made once per chunk rather than once per request."""
    mend = MENDS.get(name.split("-", 1)[0])
    if mend is None:
        return None, ""
    try:
        source = assets_dir().joinpath(name).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None, ""
    fixed = mend(source)
    if fixed is None:
        return None, ""
    body = fixed.encode("utf-8")
    return body, '"mended-' + hashlib.sha256(body).hexdigest()[:32] + '"'


class MendedAssets:
    """ASGI middleware: the mended chunks served mended; every other request passes on."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer a GET of a mended chunk with the mended file, or pass the request on."""
        found = (
            CHUNK_PATH.search(scope.get("path", ""))
            if scope.get("type") == "http" and scope.get("method") in ("GET", "HEAD")
            else None
        )
        body, etag = _served(found[1]) if found else (None, "")
        if body is None:
            await self.app(scope, receive, send)
            return
        from starlette.datastructures import Headers
        from starlette.responses import Response

        headers = {"ETag": etag, "Cache-Control": "no-cache"}  # revalidated, as gradio's are
        if Headers(scope=scope).get("if-none-match") == etag:
            response = Response(status_code=304, headers=headers)
        else:
            content = b"" if scope["method"] == "HEAD" else body
            response = Response(content, media_type="application/javascript", headers=headers)
            if scope["method"] == "HEAD":
                response.headers["content-length"] = str(len(body))
        await response(scope, receive, send)


def middleware() -> list[Middleware]:
    """What `launch(app_kwargs={"middleware": ...})` takes: gradio's chunks, mended."""
    from starlette.middleware import Middleware

    return [Middleware(MendedAssets)]
