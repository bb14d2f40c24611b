"""gradio's status tracker served mended: an idle page asks for no animation frames."""

from __future__ import annotations

import importlib.resources

import httpx

from mpdemo.ui import gradio_assets
from mpdemo.ui.gradio_assets import mend, mended_chunk


def _chunk_names() -> list[str]:
    assets = importlib.resources.files("gradio").joinpath("templates/frontend/assets")
    return [
        p.name for p in assets.iterdir() if gradio_assets.CHUNK_PATH.search("/assets/" + p.name)
    ]


LOOP = "function ze(){me(()=>{F(Pe,(performance.now()-w(de))/1e3),W&&ze()})}"
START = "O(()=>{o.status===`pending`?Ve():ee(()=>{He()})})"


def test_the_timer_loop_continues_only_while_pending():
    fixed = mend(f"let a=1;{LOOP}{START};")
    assert fixed is not None
    assert "W&&o.status===`pending`&&ze()})}" in fixed
    assert fixed.startswith("let a=1;function ze(){me(()=>{F(Pe,") and fixed.endswith(START + ";")


def test_a_chunk_that_reads_otherwise_is_left_to_gradio():
    assert mend(START) is None  # no loop
    assert mend(LOOP) is None  # no status to bound it by
    assert mend(LOOP + LOOP + START) is None  # two loops: which one is the timer is unknown


def test_the_installed_gradio_s_tracker_is_mended():
    """When this fails, gradio changed the chunk: check whether it still leaks (the module says
    how to see it) and mend the new one, or drop the mend if gradio fixed it."""
    names = _chunk_names()
    assert len(names) == 1, names
    fixed = mended_chunk(names[0])
    assert fixed is not None and b"status===`pending`&&" in fixed


def test_the_app_serves_the_mended_chunk_and_revalidates(app_url: str):
    name = _chunk_names()[0]
    got = httpx.get(app_url + "assets/" + name)
    assert got.status_code == 200 and got.content == mended_chunk(name)
    assert got.headers["content-type"].startswith("application/javascript")
    again = httpx.get(app_url + "assets/" + name, headers={"if-none-match": got.headers["etag"]})
    assert again.status_code == 304
