"""gradio's front-end files, served mended where gradio 6.31 makes an idle page cost CPU.

The leak: gradio's status tracker counts its timer on every animation frame while its status is
"pending", and stops when the status changes. The tracker that covers the page while the app
loads is removed in the same moment its status turns "complete", so its stop never runs and its
loop asks for a frame 60 times a second for as long as the page stays open. Measured in headless
chromium on a 2-core EPYC (quiet, 15 s idle after load): a bare gradio 6.31 Blocks page cost
0.42 CPU-s of renderer and 0.14 of the rest every 5 s, and 0.0 with the loop mended; this app's
page the same. On a student's laptop that is a tenth of a core, and its battery, for nothing.

The mend: the loop asks for its next frame only while its status is still "pending", which is
all its stop did. `MendedAssets` (an ASGI middleware, in the app through `launch_options()`)
serves the status tracker's chunk with that one condition added; where the chunk does not read
as expected (another gradio), it serves gradio's file untouched.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import re
from typing import Any

# gradio's built chunk, e.g. /assets/statustracker-DQF-KcRT.js (hashed, minified names).
CHUNK_PATH = re.compile(r"/assets/(statustracker-[A-Za-z0-9_-]+\.js)$")
# function ze(){me(()=>{F(Pe,(performance.now()-w(de))/1e3),W&&ze()})}: the timer's loop.
_LOOP = re.compile(
    r"function (?P<loop>[\w$]+)\(\)\{(?P<raf>[\w$]+)\(\(\)=>\{(?P<tick>[^{}]*performance\.now\(\)"
    r"[^{}]*),(?P<on>[\w$]+)&&(?P=loop)\(\)\}\)\}"
)
# o.status===`pending`?Ve():...: the props whose status starts the loop.
_START = re.compile(r"(?P<props>[\w$]+)\.status===`pending`\?[\w$]+\(\):")


def mend(source: str) -> str | None:
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


def _assets_dir() -> Any:
    return importlib.resources.files("gradio").joinpath("templates/frontend/assets")


@functools.lru_cache(maxsize=4)
def mended_chunk(name: str) -> bytes | None:
    """gradio's chunk `name`, mended (read once); None when it is absent or reads otherwise."""
    try:
        source = _assets_dir().joinpath(name).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    fixed = mend(source)
    return fixed.encode("utf-8") if fixed is not None else None


class MendedAssets:
    """ASGI middleware: the status tracker's chunk served mended; every other request passes."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Answer a GET of the status tracker's chunk with the mended file, or pass it on."""
        found = (
            CHUNK_PATH.search(scope.get("path", ""))
            if scope.get("type") == "http" and scope.get("method") in ("GET", "HEAD")
            else None
        )
        body = mended_chunk(found[1]) if found else None
        if body is None:
            await self.app(scope, receive, send)
            return
        from starlette.datastructures import Headers
        from starlette.responses import Response

        etag = '"mended-' + hashlib.sha256(body).hexdigest()[:32] + '"'
        headers = {"ETag": etag, "Cache-Control": "no-cache"}  # revalidated, as gradio's are
        if Headers(scope=scope).get("if-none-match") == etag:
            response = Response(status_code=304, headers=headers)
        else:
            content = b"" if scope["method"] == "HEAD" else body
            response = Response(content, media_type="application/javascript", headers=headers)
            if scope["method"] == "HEAD":
                response.headers["content-length"] = str(len(body))
        await response(scope, receive, send)


def middleware() -> list[Any]:
    """What `launch(app_kwargs={"middleware": ...})` takes: the mended status tracker."""
    from starlette.middleware import Middleware

    return [Middleware(MendedAssets)]
