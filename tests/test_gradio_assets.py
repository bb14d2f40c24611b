"""gradio's status tracker served mended: an idle page asks for no frames."""

from __future__ import annotations

import httpx
import pytest

from mpdemo.ui import gradio_assets
from mpdemo.ui.gradio_assets import mend_timer, mended


def _chunk_names() -> dict[str, str]:
    """The installed gradio's chunks to mend, by kind ("statustracker")."""
    assets = gradio_assets.assets_dir()
    found: dict[str, list[str]] = {}
    for p in assets.iterdir():
        if gradio_assets.CHUNK_PATH.search("/assets/" + p.name):
            found.setdefault(p.name.split("-", 1)[0], []).append(p.name)
    assert all(len(v) == 1 for v in found.values()), found
    return {k: v[0] for k, v in found.items()}


LOOP = "function ze(){me(()=>{F(Pe,(performance.now()-w(de))/1e3),W&&ze()})}"
START = "O(()=>{o.status===`pending`?Ve():ee(()=>{He()})})"


def test_the_timer_loop_continues_only_while_pending():
    fixed = mend_timer(f"let a=1;{LOOP}{START};")
    assert fixed is not None
    assert "W&&o.status===`pending`&&ze()})}" in fixed
    assert fixed.startswith("let a=1;function ze(){me(()=>{F(Pe,") and fixed.endswith(START + ";")


@pytest.mark.parametrize(
    ("mend", "source"),
    [
        (mend_timer, START),  # no loop
        (mend_timer, LOOP),  # no status to bound it by
        (mend_timer, LOOP + LOOP + START),  # two loops: which one is the timer is unknown
    ],
)
def test_a_chunk_that_reads_otherwise_is_left_to_gradio(mend, source):
    assert mend(source) is None


def test_the_installed_gradio_s_chunk_is_mended():
    """When this fails, gradio changed a chunk: check whether it still leaks (the
    module says how each was measured) and mend the new one, or drop the mend."""
    names = _chunk_names()
    assert set(names) == {"statustracker"}
    assert b"status===`pending`&&" in (mended(names["statustracker"])[0] or b"")


def test_the_app_serves_the_mended_chunks_and_revalidates(app_url: str):
    for name in _chunk_names().values():
        got = httpx.get(app_url + "assets/" + name)
        assert got.status_code == 200 and got.content == mended(name)[0]
        assert got.headers["content-type"].startswith("application/javascript")
        again = httpx.get(
            app_url + "assets/" + name, headers={"if-none-match": got.headers["etag"]}
        )
        assert again.status_code == 304
