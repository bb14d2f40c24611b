"""Shared fixtures: small, fast configs on the bundled data; the Hub is never contacted."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Tests must behave as on a machine without internet, wherever they run.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# gradio notices that a page or an API client went at its next heartbeat, every 15 s by default;
# gradio 6.31 reads this variable (its own end-to-end tests beat every 0.25 s). The suite waited
# those 15 s for a session to be freed, and gradio_client's close() up to a second a client for
# its heartbeat stream's next beat (24 tests). Subprocess servers inherit it.
os.environ.setdefault("GRADIO_HEARTBEAT_INTERVAL", "0.25")
# No analytics: each launch's version check and telemetry threads dialled out of this closed
# network (gradio 6.31 reads the variable at launch; subprocess servers inherit it).
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
# One torch thread a process: the suite runs two workers (and chromium) on two cores, so a
# second OpenMP thread in each only waits for a core (the whole suite: 6 min 32 s with one,
# 6 min 46 s with torch's two, quiet 2-core EPYC). Set before torch loads; tests that need more
# threads set them.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# Each pytest-xdist worker its own gradio cache (uploads, served files): tests count the files
# there, and gradio's default (/tmp/gradio) is shared by every process on the machine.
if "PYTEST_XDIST_WORKER" in os.environ and "GRADIO_TEMP_DIR" not in os.environ:
    import tempfile

    os.environ["GRADIO_TEMP_DIR"] = _GRADIO_TMP = tempfile.mkdtemp(prefix="gradio-")

    def pytest_unconfigure(config) -> None:  # noqa: ANN001 - pytest's hook
        """The worker's gradio cache goes with the worker."""
        import shutil

        shutil.rmtree(_GRADIO_TMP, ignore_errors=True)


# mpdemo.ui first, before a test module imports gradio itself: importing it turns gradio's stub
# writer off before gradio loads (mpdemo/ui/quick_import.py, two seconds of every process).
import mpdemo.ui  # noqa: E402, F401
from mpdemo.config import RunConfig  # noqa: E402


@pytest.fixture
def small_cfg() -> RunConfig:
    """The tiny model on a small slice: a few steps take well under a second each."""
    return RunConfig(
        train_slice="train[:256]",
        eval_slice="validation[:64]",
        steps=4,
        batch_size=16,
        device="cpu",
    )


@pytest.fixture(scope="session")
def magnitudes_of():
    """Folds any tensors into a Magnitudes, as the Underflow lab folds each gradient."""
    from mpdemo.teach.underflow import _Folder

    def fold(*tensors, kind: str = "values"):
        folder = _Folder(kind, ())
        for t in tensors:
            folder.add(t)
        return folder.result()[0]

    return fold


@pytest.fixture(scope="session")
def tiny_lab():
    """The Underflow lab's one backward pass on the default model (its GradientLab)."""
    from mpdemo.teach.underflow import collect

    return collect(RunConfig(train_slice="train[:64]", steps=1, batch_size=16, device="cpu"))


def events_of(cfg: RunConfig, stop=None) -> list:
    """Run train() to the end and return every event."""
    from mpdemo import train

    return list(train(cfg, stop))


def summary_of(events: list) -> dict:
    """The end event's summary."""
    (end,) = [e for e in events if e.kind == "end"]
    return end.summary


def lines_in(frame: Any, every_series: bool = False) -> dict[str, int]:
    """Finite points per run in a frame or a LinePlot's value (raw curves and ticks: every_series)."""
    import pandas as pd

    from mpdemo.colours import RAW, SKIPPED

    if frame is None:
        return {}
    if isinstance(frame, pd.DataFrame):
        df = frame
    else:
        df = pd.DataFrame(frame["data"], columns=frame["columns"])
    df = df[pd.to_numeric(df["value"], errors="coerce").notna()]
    counts = {str(k): int(v) for k, v in df.groupby("run").size().items()}
    if every_series:
        return counts
    derived = (f" · {RAW}", f" · {SKIPPED}")
    return {k: v for k, v in counts.items() if not k.endswith(derived)}


# --- one app and one browser for the whole session --------------------------------------------
# Each module used to launch its own server (build_app takes seconds) and its own chromium; the
# suite's time went to starting them. Modules that need a server with other settings (hosted caps,
# a viewer limit) still launch their own.
# Which chromium and its flags: tests/chromium_launch.py (bench/page.py launches the same).
from chromium_launch import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


def _poll_every_100_ms() -> None:
    """Playwright 1.65 polls `wait_for_function` on every animation frame unless told
    otherwise: each wait asked chromium for 60 frames a second, ~0.1 core of a 2-core machine
    for as long as a test waited (a run's whole stream). Every 100 ms is soon enough."""
    from playwright.sync_api import Page

    if getattr(Page.wait_for_function, "_mpdemo", False):
        return
    wait = Page.wait_for_function

    def polled(self: Page, expression: str, *, arg=None, timeout=None, polling=100):
        return wait(self, expression, arg=arg, timeout=timeout, polling=polling)

    polled._mpdemo = True  # type: ignore[attr-defined]
    Page.wait_for_function = polled  # type: ignore[method-assign]


def _one_ssl_context() -> None:
    """httpx 0.29 builds a new SSL context for every client (the certifi bundle parsed: 27 ms
    of CPU on a 2-core EPYC), and gradio_client opens a client for each request and stream:
    ~900 in a suite run, 24 CPU-s of ~880 in a py-spy profile. Every test talks plain HTTP to
    127.0.0.1, so one default context, built once a process, serves them all."""
    import functools

    from httpx._transports import default

    if getattr(default.create_ssl_context, "_mpdemo", False):
        return
    make = default.create_ssl_context
    shared = functools.cache(lambda trust_env: make(verify=True, cert=None, trust_env=trust_env))

    def create(verify=True, cert=None, trust_env=True):  # noqa: ANN001, ANN202 - httpx's own
        if verify is True and cert is None:
            return shared(trust_env)
        return make(verify=verify, cert=cert, trust_env=trust_env)

    create._mpdemo = True  # type: ignore[attr-defined]
    default.create_ssl_context = create


_one_ssl_context()


@pytest.fixture(autouse=True, scope="module")
def _freeze_what_a_module_left():
    """After each test module, what survives it is collected once and frozen (gc.freeze).

    The engine collects after every comparison (mpdemo/engine/core.py, collect_garbage) and
    freezes what the process held at its first collection; a server lives through one class.
    A test worker lives through ~25 modules, and every full collection there scanned all the
    objects the earlier modules left: 23 CPU-s of ~700 in a whole-suite profile (2-core EPYC).
    Garbage is collected before the freeze, so nothing dead is kept."""
    yield
    import gc

    gc.collect()
    gc.freeze()


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_app() -> tuple[str, object]:
    """The app launched in this process on a free port, with app.py's queue and launch options."""
    from mpdemo.ui import build_app, launch_options
    from mpdemo.ui.serve import keep_busy_sessions, queue_options

    keep_busy_sessions()
    demo = build_app().queue(**queue_options())
    port = free_port()
    demo.launch(
        prevent_thread_lock=True,
        server_name="127.0.0.1",
        server_port=port,
        quiet=True,
        **launch_options(),
    )
    return f"http://127.0.0.1:{port}/", demo


@pytest.fixture(scope="session")
def app_server():
    """(url, demo): the app as app.py serves it, shared by every test that needs the default one."""
    url, demo = launch_app()
    yield url, demo
    demo.close()


@pytest.fixture(scope="session")
def app_url(app_server) -> str:
    """The shared app's URL."""
    return app_server[0]


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium through Playwright, one for the session (each test opens contexts)."""
    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    _poll_every_100_ms()
    pw = sync_playwright().start()
    br = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield br
    br.close()
    pw.stop()


class PagePool:
    """One page for each browser locale, kept open from test to test and opened afresh on the
    app each time, as a first visit: the app origin's stored data (the language and the runs
    a browser keeps) is cleared before each open.

    A new browser context compiles gradio's scripts again. On a quiet 2-core Xeon
    (AVX512-FP16) a page in a new context was ready in 2.8-2.9 s for 4.9-5.1 CPU-s of chromium
    and 1.2-1.3 of the server; in a context that had loaded the app before, in 0.9-1.3 s for
    1.8-2.5 CPU-s and 0.6 (three each, 3 s settling included). Tests that add init scripts,
    routes or listeners, or that need a second visitor, open their own context.
    """

    def __init__(self, browser) -> None:  # noqa: ANN001 - Playwright's Browser
        self.browser = browser
        self.pages: dict[str, Any] = {}  # locale -> its page

    def open(self, url: str, *, width: int = 1280, height: int = 900, locale: str = "en-US") -> Any:
        """A page `width` x `height` in `locale` on `url` (navigated, not yet loaded)."""
        from urllib.parse import urlsplit

        size = {"width": width, "height": height}
        pg = self.pages.get(locale)
        if pg is None or pg.is_closed():
            context = self.browser.new_context(viewport=size, locale=locale)
            pg = self.pages[locale] = context.new_page()
        else:
            pg.goto("about:blank")  # the last test's page ends (gradio frees its session)
            origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
            cdp = pg.context.new_cdp_session(pg)
            try:
                cdp.send(
                    "Storage.clearDataForOrigin",
                    {"origin": origin, "storageTypes": "local_storage,indexeddb,cookies"},
                )
            finally:
                cdp.detach()
            pg.set_viewport_size(size)
        pg.goto(url, wait_until="domcontentloaded")
        return pg

    def close(self) -> None:
        """Close every context the pool opened."""
        for pg in self.pages.values():
            pg.context.close()
        self.pages.clear()


@pytest.fixture(scope="session")
def pages(browser):
    """The session's PagePool: `pages.open(url, width=..., locale=...)`."""
    pool = PagePool(browser)
    yield pool
    pool.close()


# --- the inner loop: `python -m pytest -m "not slow"` ------------------------------------------
# Slow: every browser test, and the tests that took 2 s or more in a whole-suite run on a quiet
# 2-core machine (--durations). They stay in the full suite; the marker only lets a developer
# leave them out while iterating.
SLOW_TESTS = (
    "test_bench_scripts.py::",
    "test_distributed.py::",
    "test_serve.py::",
    "test_script_anywhere.py::",
    "test_wheel.py::",
    "test_classroom.py::test_five_visitors_at_once",
    "test_cli_files.py::test_a_signal_during_the_grid",
    "test_cli_files.py::test_sigterm_during_a_sweep",
    "test_lessons.py::test_stop_then_train",
    "test_listing.py::test_scripts_reproduce_the_engines_losses",
    "test_profile.py::test_grid_planned_event_says_before_the_runs",
    "test_space.py::test_an_api_session_that_opened_a_file_is_freed",
    "test_space.py::test_an_opened_file_is_thinned",
    # 2.5 CPU-s or more in a whole-suite profile (a cgroup's CPU time, subprocesses included)
    "test_classroom.py::test_start_stop_cycles_leave_no_threads_behind",
    "test_ui.py::test_building_the_app_imports_no_torch",
    "test_sweep_line.py::test_a_comparison_behind_a_sweep_waits_its_turn",
    "test_together.py::test_interleaved_runs_give_the_losses_of_runs_alone",
    "test_engine.py::test_causal_lm_and_mlp_run",
    "test_broadcast.py::test_the_line_is_fifo_with_places_estimates_and_a_cap",
    "test_broadcast.py::test_a_viewers_stop_never_stops_the_run_its_starters_does",
    "test_broadcast.py::test_memory_is_released_when_nobody_watches",
    "test_classroom_shared.py::test_the_board_follows_the_teachers_comparison",
    "test_classroom_shared.py::test_a_shared_run_streams_to_two_visitors_through_the_api",
    "test_classroom_shared.py::test_a_different_setting_never_joins_a_shared_run",
    "test_cli_and_sources.py::test_cli_bad_input_as_a_process",
    "test_lessons.py::test_a_lesson_opens_its_own_recording_beside_the_live_run",
    # 2 CPU-s or more in a whole-suite profile on an AVX2-only EPYC (2026-12-02), where a 16-bit
    # step costs ~7 fp32 steps: the inner loop took 2 min 37 s there with the lists above.
    "test_profile.py::test_the_calibration_times_the_real_step_for_each_precision",
    "test_profile.py::test_autocast_keeps_fewer_activation_bytes_on_the_built_in_models",
    "test_ui.py::test_a_repeated_comparison_shows_each_figures_spread",
    "test_ui.py::test_stop_keeps_what_was_measured",
    "test_ui.py::test_train_streams_one_line_per_run_and_fills_the_table",
    "test_ui.py::test_train_returns_the_final_status_and_table_to_an_api_caller",
    "test_ui.py::test_one_training_at_a_time_others_wait_in_the_queue",
    "test_ui.py::test_cancel_ends_the_worker_thread",
    "test_ui.py::test_series_ids_do_not_depend_on_the_language",
    "test_lessons.py::test_the_master_weights_lesson_trains_its_three_weight_recipes",
    "test_cli_files.py::test_max_length_is_bounded_by_the_models_positions_before_anything_loads",
    "test_sweep_line.py::test_through_the_api_a_sweep_waits_for_a_training_then_runs",
    "test_cli_and_sources.py::test_runner_runs_a_comparison_side_by_side",
    "test_cli_and_sources.py::test_cli_grid_prints_table_and_writes_json_csv",
    "test_hostile_files.py::test_a_mutated_recording_is_refused_in_one_line_or_renders_everywhere",
    "test_space.py::test_train_s_last_value_carries_the_downloads",
    "test_sweep.py::test_the_tab_streams_points_and_stop_keeps_them",
    "test_sweep.py::test_the_tab_draws_the_memory_anatomy_and_published_figures",
    "test_sweep.py::test_points_stream_and_stop_keeps_the_points_measured",
    "test_broadcast.py::test_a_shared_run_streams_to_two_viewers_and_runs_once",
    "test_broadcast.py::test_a_viewer_that_stops_reading_never_blocks_the_producer_and_is_dropped",
    "test_numerics_runs.py::test_pure_bf16_weights_are_bf16_and_report_lost_updates",
    "test_numerics_runs.py::test_watch_grads_streams_histograms_every_n_steps",
    "test_classroom.py::test_absurd_input_is_refused_fast_and_the_next_run_works",
    "test_recorded.py::test_load_runs_api_draws_a_cli_file_and_a_broken_one_changes_nothing",
    "test_classroom_shared.py::test_a_viewers_stop_leaves_the_producer_running",
)


# Seconds a file (or a split file's test) took in one process with AVX2-only kernels
# (ATEN_CPU_CAPABILITY=avx2) on a 2-core Xeon, 2026-12-05; CPU seconds where the machine was
# loaded. The files go out longest first, so that no long file starts last while the other
# worker idles; files not named here follow, those with the most tests first.
LESSON_POINT = (
    "tests/test_lesson_points.py::test_each_lesson_makes_its_point_on_a_seed_nobody_tuned_to"
)
FILE_SECONDS = {
    "tests/test_doors_served.py": 54,
    LESSON_POINT + "[master-weights]": 34,
    "tests/test_ui.py": 30,
    "tests/browser/test_class.py": 29,
    "tests/browser/test_browser.py": 26,
    LESSON_POINT + "[backends]": 24,
    "tests/browser/test_lessons_each.py": 21,
    "tests/browser/test_lessons_page.py": 21,
    "tests/test_bench_scripts.py": 20,
    LESSON_POINT + "[underflow]": 19,
    LESSON_POINT + "[still-trains]": 18,
    "tests/test_serve.py": 16,
    "tests/browser/test_hostile.py": 14,
    "tests/browser/test_tabs_i18n.py": 14,
    "tests/test_hostile_files.py": 14,
    "tests/browser/test_summary_page.py": 13,
    LESSON_POINT + "[loss-scaling]": 12,
    "tests/test_cli_files.py": 11,
    "tests/test_listing.py": 11,
    "tests/browser/test_board.py": 10,
    "tests/browser/test_reload.py": 10,
    "tests/test_profile.py": 9,
    "tests/browser/test_first_screen.py": 9,
    "tests/test_notebook.py": 9,
    "tests/browser/test_pays.py": 8,
    "tests/test_engine.py": 8,
    "tests/test_sweep.py": 7,
    "tests/test_space.py": 6,
    "tests/test_classroom_shared.py": 6,
    "tests/test_distributed.py": 6,
    "tests/test_sweep_line.py": 6,
    "tests/test_cli_and_sources.py": 6,
    "tests/test_classroom.py": 5,
}
# Files whose tests each run whole lessons: each test is a work unit of its own, so the two
# workers share them (as one file they were the suite's last 107 s on one worker with AVX2).
SPLIT_FILES = ("tests/test_lesson_points.py",)


def _file_of(nodeid: str) -> str:
    return nodeid.replace("\\", "/").split("::", 1)[0]


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001 - pytest's hook
    """Mark the browser tests and the slow ones above `slow`; the longest files first."""
    for item in items:
        node = item.nodeid.replace("\\", "/")
        if node.startswith("tests/browser/") or any(s in node for s in SLOW_TESTS):
            item.add_marker(pytest.mark.slow)
    count: dict[str, int] = {}
    for item in items:
        count[_file_of(item.nodeid)] = count.get(_file_of(item.nodeid), 0) + 1

    def cost(item) -> tuple[float, int]:  # noqa: ANN001
        file = _file_of(item.nodeid)
        return -FILE_SECONDS.get(item.nodeid, FILE_SECONDS.get(file, 0)), -count[file]

    items.sort(key=cost)  # stable: the tests of a file keep their order


def pytest_xdist_make_scheduler(config, log):  # noqa: ANN001, ANN201 - pytest-xdist's hook
    """--dist loadfile, in the collection's order (above), with the split files' tests apart."""
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            file = _file_of(nodeid)
            return nodeid if file in SPLIT_FILES else file

    # xdist 3.8 would reorder the files by their number of tests (--loadscope-reorder).
    config.option.loadscopereorder = False
    return Scheduling(config, log)
