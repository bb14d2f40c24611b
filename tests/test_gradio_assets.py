"""gradio's chunks served mended: an idle page asks for no frames, and a status message hands
on only the statuses that changed."""

from __future__ import annotations

import httpx
import pytest

from mpdemo.ui import gradio_assets
from mpdemo.ui.gradio_assets import mend_statuses, mend_timer, mended_chunk


def _chunk_names() -> dict[str, str]:
    """The installed gradio's chunk to mend, by kind ("statustracker", "Blocks")."""
    assets = gradio_assets.assets_dir()
    found: dict[str, list[str]] = {}
    for p in assets.iterdir():
        if gradio_assets.CHUNK_PATH.search("/assets/" + p.name):
            found.setdefault(p.name.split("-", 1)[0], []).append(p.name)
    assert all(len(v) == 1 for v in found.values()), found
    return {k: v[0] for k, v in found.items()}


LOOP = "function ze(){me(()=>{F(Pe,(performance.now()-w(de))/1e3),W&&ze()})}"
START = "O(()=>{o.status===`pending`?Ve():ee(()=>{He()})})"
PUSH = (
    "async update_loading_stati_state(){await Promise.all(Object.entries("
    "this.loading_stati.current).map(([e,t])=>this.update_state_cb(Number(e),"
    "{loading_status:t},!1)))}"
)
RELOAD = "s.reload(e,n,r,i,t)}reload(e,t,n,r,i){let{by_id:a}=this.create(e);"


def test_the_timer_loop_continues_only_while_pending():
    fixed = mend_timer(f"let a=1;{LOOP}{START};")
    assert fixed is not None
    assert "W&&o.status===`pending`&&ze()})}" in fixed
    assert fixed.startswith("let a=1;function ze(){me(()=>{F(Pe,") and fixed.endswith(START + ";")


def test_a_status_is_handed_on_only_when_it_changed_and_all_again_after_a_reload():
    fixed = mend_statuses(RELOAD + PUSH)
    assert fixed is not None
    assert "reload(e,t,n,r,i){this.mpdemoSent=null;let{by_id:a}" in fixed
    assert ".filter(([id,s])=>{let k=JSON.stringify(s);" in fixed
    assert fixed.endswith(".map(([e,t])=>this.update_state_cb(Number(e),{loading_status:t},!1)))}")


@pytest.mark.parametrize(
    ("mend", "source"),
    [
        (mend_timer, START),  # no loop
        (mend_timer, LOOP),  # no status to bound it by
        (mend_timer, LOOP + LOOP + START),  # two loops: which one is the timer is unknown
        (mend_statuses, PUSH),  # no reload to forget the statuses at
        (mend_statuses, RELOAD + RELOAD + PUSH),
        (mend_statuses, RELOAD + PUSH.replace("this.loading_stati", "this.stati")),
    ],
)
def test_a_chunk_that_reads_otherwise_is_left_to_gradio(mend, source):
    assert mend(source) is None


def test_the_installed_gradio_s_chunks_are_mended():
    """When this fails, gradio changed a chunk: check whether it still needs the mend (the
    module says how each was measured) and mend the new one, or drop the mend."""
    names = _chunk_names()
    assert set(names) == set(gradio_assets.MENDS)
    assert b"status===`pending`&&" in (mended_chunk(names["statustracker"]) or b"")
    assert b"this.mpdemoSent=null;" in (mended_chunk(names["Blocks"]) or b"")


def test_the_app_serves_the_mended_chunks_and_revalidates(app_url: str):
    for name in _chunk_names().values():
        got = httpx.get(app_url + "assets/" + name)
        assert got.status_code == 200 and got.content == mended_chunk(name)
        assert got.headers["content-type"].startswith("application/javascript")
        again = httpx.get(
            app_url + "assets/" + name, headers={"if-none-match": got.headers["etag"]}
        )
        assert again.status_code == 304
