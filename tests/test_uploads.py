"""Raw uploads bounded per visitor (issue 28): a stranger's uploads with no event keep at most
N files and M bytes of gradio's cache, the oldest deleted first; another visitor's stay."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest


@pytest.fixture
def server(monkeypatch, tmp_path):
    """An upload button launched as app.py launches the app (launch_options), behind one proxy
    hop (the last X-Forwarded-For entry is the address), with its cache in tmp_path."""
    import gradio as gr

    from mpdemo.ui import launch_options, uploads

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MPDEMO_PROXY_HOPS", "1")
    ledger = uploads.Ledger(max_files=3, max_bytes=10_000)
    monkeypatch.setattr(uploads, "LEDGER", ledger)
    with gr.Blocks() as demo:
        gr.UploadButton("Open", type="filepath")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    demo.launch(
        prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True,
        **launch_options(),
    )  # fmt: skip
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
        yield http, ledger
    demo.close()


def upload(http: httpx.Client, address: str, name: str, size: int) -> str:
    """One raw upload from `address` (the proxy appends it), no event: its stored path."""
    content = name.encode() * (size // len(name) + 1)
    r = http.post(
        "/gradio_api/upload",
        files={"files": (f"{name}.json", content[:size], "application/json")},
        headers={"X-Forwarded-For": f"1.2.3.4, {address}"},  # the client wrote the first
    )
    assert r.status_code == 200, r.text
    [path] = r.json()
    return path


def files_of(ledger, client: str) -> int:
    """Files this address has in the cache, as the ledger noted them."""
    return sum(len(u.paths) for u in ledger.by_client.get(client, ()))


def test_a_strangers_raw_uploads_are_bounded_and_another_visitors_stay(server) -> None:
    http, ledger = server
    student = upload(http, "10.0.0.7", "student", 1000)
    flood = [upload(http, "6.6.6.6", f"junk{i}", 1000) for i in range(10)]
    # The stranger keeps its three newest; the oldest went first, folders and all.
    assert [Path(p).exists() for p in flood] == [False] * 7 + [True] * 3
    assert not Path(flood[0]).parent.exists() and files_of(ledger, "6.6.6.6") == 3
    # What the client wrote in the header did not make it someone else: the student's file stays.
    assert Path(student).exists() and files_of(ledger, "10.0.0.7") == 1
    assert files_of(ledger, "1.2.3.4") == 0
    # Bytes too: three uploads of 4 kB are over 10 kB, so only the newest two stay.
    big = [upload(http, "6.6.6.6", f"big{i}", 4000) for i in range(3)]
    assert [Path(p).exists() for p in big] == [False, True, True]
    assert not any(Path(p).exists() for p in flood)
    assert Path(student).exists()
