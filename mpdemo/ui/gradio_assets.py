"""gradio's front-end files, served mended where gradio 6.31 makes an idle page cost CPU.

The leaked timer (`statustracker-*.js`): the loading tracker is removed as it completes, so its
stop never runs and it asks for a frame 60 times a second (0.56 CPU-s of chromium every 5 s idle,
2-core EPYC); mended, only while "pending". A chunk that reads otherwise is served as shipped."""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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


def assets_dir() -> Any:
    """Where the installed gradio keeps its built front-end chunks."""
    return importlib.resources.files("gradio").joinpath("templates/frontend/assets")


@functools.lru_cache(maxsize=8)
def mended(name: str) -> tuple[bytes | None, str]:
    """gradio's chunk `name` mended and its ETag, made once; None when absent or unexpected."""
    try:
        source = assets_dir().joinpath(name).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None, ""
    fixed = mend_timer(source)
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
        body, etag = mended(found[1]) if found else (None, "")
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
