"""What a stranger can put on the page stays text; stored runs outlive a restart of the server;
a reload in the middle of a comparison keeps that comparison's finished runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from browsing import BROWSER_MARKS, free_port
from test_reload import IN_STATUS, IN_TABLE, LOADED_JS, STORED_JS, open_page, set_value, wait_for

pytestmark = BROWSER_MARKS

HOSTILE = '<img src="http://127.0.0.1:9/t.png"> **Session expired** [log in](http://127.0.0.1:9/p)'
SECRET = "a-space-secret-for-the-restart-test-0123456789"


class Server:
    """The app on one fixed port, stopped and started again as a Space restarts."""

    def __init__(self) -> None:
        self.port = free_port()
        self.demo = None

    @property
    def url(self) -> str:
        """Where the page is."""
        return f"http://127.0.0.1:{self.port}/"

    def start(self) -> None:
        """Build and launch the app as app.py does, its line empty as a new process's is (the
        hub is this worker's: a comparison an earlier test left would make this one queue)."""
        from mpdemo.classroom import broadcast
        from mpdemo.config import Limits
        from mpdemo.ui import build_app, launch_options

        broadcast.hub().stop_all(wait_s=10.0)

        demo = build_app().queue(default_concurrency_limit=1, max_size=Limits.from_env().max_queue)
        demo.launch(
            prevent_thread_lock=True,
            server_name="127.0.0.1",
            server_port=self.port,
            quiet=True,
            **launch_options(),
        )
        self.demo = demo

    def stop(self) -> None:
        """Close the server (its process's secrets die with it, the configured one stays) and end
        its comparisons, as the app's own exit does: a reloaded page's 2,000-step comparison left
        training in this worker took both cores from the tests after it (77 s, not 13)."""
        from mpdemo.classroom import broadcast

        if self.demo is not None:
            self.demo.close()
            self.demo = None
        broadcast.hub().stop_all(wait_s=10.0)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """The app, with the stored runs' secret set as a Space secret would set it."""
    mp = pytest.MonkeyPatch()
    mp.setenv("MPDEMO_STORAGE_SECRET", SECRET)
    srv = Server()
    srv.start()
    yield srv
    srv.stop()
    mp.undo()


def hostile_file(folder: Path) -> Path:
    """The shipped default recording, its machine named with markup and links."""
    from mpdemo.files.recorded import REFERENCE_DIR

    doc = json.loads((REFERENCE_DIR / "default-cpu.json").read_text(encoding="utf-8"))
    doc["machine"]["device_name"] = HOSTILE
    doc["machine"].pop("cpu", None)  # the tag comes from the device name then
    doc["runs"][0]["summary"]["label"] = "<b>bold</b> [x](http://127.0.0.1:9/q)"
    path = folder / "hostile.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_hostile_runs_file_renders_no_image_and_no_link(
    server: Server, browser, tmp_path: Path
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    asked: list[str] = []
    context.on("request", lambda req: asked.append(req.url))
    try:
        page = open_page(context, server.url)
        with page.expect_file_chooser() as chooser:
            page.click("#open-runs")
        chooser.value.set_files(str(hostile_file(tmp_path)))
        wait_for(page, IN_STATUS, "Session expired", 60, "the file did not open")
        page.wait_for_timeout(1000)  # an image, had one been made, would have been asked for
        for where in ("#status", "#summary", "#run-legend"):
            assert page.locator(f"{where} img").count() == 0, where
            assert page.locator(f"{where} a").count() == 0, where
            assert page.locator(f"{where} b").count() == 0, where
        status = page.inner_text("#status")
        assert "**Session expired**" in status and "[log in](http" in status
        assert "<b>bold</b>" in page.inner_text("#summary")  # the label, as the file wrote it
        assert not [u for u in asked if "127.0.0.1:9/" in u], asked
    finally:
        context.close()


def reload_after_restart(page) -> None:
    """Reload the page; gradio reloads it by itself once its server answers again (it polls
    every 2 s after the connection was lost), and the two reloads can cross: either will do."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        page.reload(wait_until="domcontentloaded")
    except PlaywrightError as err:
        if "ERR_ABORTED" not in str(err):
            raise
        page.wait_for_load_state("domcontentloaded")


def test_stored_runs_survive_a_restart_and_a_reload_mid_comparison_keeps_its_runs(
    server: Server, browser
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    try:
        page = open_page(context, server.url)
        set_value(page, "train-slice", "train[:64]")
        set_value(page, "eval-slice", "validation[:32]")
        set_value(page, "steps", "3")
        for name, on in (("fp32", False), ("fp16", False), ("bf16", True)):
            box = page.locator("#precisions").get_by_label(name, exact=True)
            box.check() if on else box.uncheck()
        page.click("#start-btn")
        wait_for(page, IN_STATUS, "Done", 120, "the tiny run never finished")
        wait_for(page, STORED_JS, "mpdemo-runs", 30, "the runs were not stored")

        server.stop()  # a Space restarts on every push and after sleeping
        server.start()
        reload_after_restart(page)
        page.wait_for_function(LOADED_JS, timeout=60_000)
        wait_for(page, IN_TABLE, "torch · bf16", 30, "the stored run did not outlive the restart")
        assert "are back" in page.inner_text("#status")

        # A reload in the middle of a second comparison (its runs take turns, none has ended):
        # what was stored comes back, and nothing of the unfinished comparison.
        page.locator("#precisions").get_by_label("fp32", exact=True).check()
        set_value(page, "steps", "2000")
        page.click("#start-btn")
        wait_for(page, IN_STATUS, "step", 120, "the second comparison never stepped")
        stored_before = page.evaluate("k => localStorage.getItem(k)", "mpdemo-runs")
        page.reload(wait_until="domcontentloaded")
        page.wait_for_function(LOADED_JS, timeout=60_000)
        wait_for(page, IN_STATUS, "are back", 30, "nothing came back after the reload")
        wait_for(page, IN_TABLE, "torch · bf16", 30, "the stored bf16 run did not come back")
        assert "torch · fp32" not in page.inner_text("#summary")  # it never finished
        assert stored_before
    finally:
        context.close()
