"""Who asks (the address the hosting proxy saw, for the per-address limits) and from which page
(gradio's session hash), read from gradio's context for the event: a handler parameter whose
annotation gradio could not resolve got None, and every visitor was one client (issue 52)."""

from __future__ import annotations

from typing import Any

from ..classroom import broadcast
from ..classroom.broadcast import Hub
from ..config import env_int, on_hf_space
from . import pages, zerogpu


def proxy_hops() -> int:
    """Proxies in front of this server that append to X-Forwarded-For (MPDEMO_PROXY_HOPS;
    1 on a Space, whose proxy appends the address it saw; 0 elsewhere: the peer address)."""
    return env_int("MPDEMO_PROXY_HOPS", int(on_hf_space()), low=0)


def the_hub() -> Hub:
    """The process's hub, its boards ending with their pages, its comparisons in a GPU call on
    ZeroGPU (set once, when the hub is new)."""
    hub = broadcast.hub()
    if hub.page_gone is None:
        hub.page_gone = pages.gone
        if zerogpu.enabled():  # elsewhere the line's own Runner: no call back up to the page
            hub.make_runner = zerogpu.make_runner
    return hub


def request_here() -> Any:
    """The request of the event being handled; None outside an event (a direct call). Raises
    inside a served event without one: the per-address limits would see one client."""
    from gradio.context import LocalContext

    request = LocalContext.request.get(None)
    if request is None and LocalContext.in_event_listener.get(False):
        raise RuntimeError("a served event without its request: per-address limits need it")
    return request


def client_here() -> str:
    """Who asks for the event being handled (client_of its request); '' outside an event."""
    request = request_here()
    return client_of(request) if request is not None else ""


def page_here() -> str:
    """The page (gradio's session hash) of the event being handled; '' outside an event."""
    return str(getattr(request_here(), "session_hash", None) or "")


def client_of(request: Any) -> str:
    """Who asks: what the hosting proxy saw, never what the client wrote. Each of N trusted
    proxies appends to X-Forwarded-For: the Nth from the right is the client (else the peer)."""
    try:
        hops = proxy_hops()
        forwarded = [h.strip() for h in (request.headers.get("x-forwarded-for") or "").split(",")]
        forwarded = [h for h in forwarded if h]
        if hops and len(forwarded) >= hops:
            return forwarded[-hops][:64]
        return str(request.client.host)[:64]
    except AttributeError:
        return ""
