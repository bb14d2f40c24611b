"""The package's shape: no import cycle among mpdemo's modules, lazy imports included.

The graph is built from the source (ast, bench/shape.py), so an import inside a function counts the
same as one at the top; the run-time graph leaves out imports under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mpdemo"
_spec = importlib.util.spec_from_file_location("shape_bench", ROOT / "bench" / "shape.py")
shape = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shape)


def _modules() -> dict[str, Path]:
    return shape.modules(PACKAGE)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    """A throwaway package `pkg` with these modules."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / f"{name}.py").write_text(text)
    return pkg


def test_the_graph_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    pkg = _package(
        tmp_path,
        {
            "a": "def f():\n    from . import b\n",
            "b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
            "c": "import pkg.b\n",
        },
    )
    run_time = shape.import_graph(type_checking=False, package=pkg)
    assert run_time["pkg.a"] == {"pkg.b"} and run_time["pkg.b"] == set()
    assert run_time["pkg.c"] == {"pkg.b"}
    assert shape.cycles(run_time) == []
    assert shape.cycles(shape.import_graph(type_checking=True, package=pkg)) == [["pkg.a", "pkg.b"]]


def test_a_cycle_is_found_when_there_is_one():
    assert shape.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_among_mpdemo_modules():
    assert shape.cycles(shape.import_graph(type_checking=False)) == []


def test_no_circle_hides_behind_type_checking_imports():
    # A circle of modules that name each other's types only under TYPE_CHECKING: a seam that
    # fails at run time (a handler's annotation gradio cannot resolve). Protocols break them:
    # the classroom's comparison names the line it asks of (Hub), a viewer what it reads (Watched).
    assert shape.cycles(shape.import_graph(type_checking=True)) == []


def test_only_the_ui_imports_gradio():
    offenders = []
    for name, path in _modules().items():
        if name.startswith("mpdemo.ui"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(
                a.name.split(".")[0] == "gradio" for a in node.names
            ):
                offenders.append(name)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gradio":
                offenders.append(name)
    assert offenders == []


def test_one_reset_empties_the_process_wide_state(monkeypatch) -> None:
    # Each module that keeps state beyond a request registers how to empty it; mpdemo.reset()
    # calls them all (tests, a server's restart). Restored afterwards by monkeypatch.
    import mpdemo
    from mpdemo.classroom import broadcast
    from mpdemo.config import RunConfig
    from mpdemo.engine import core, data, hfhub
    from mpdemo.files import recorded
    from mpdemo.teach import listing
    from mpdemo.ui import pages, system, zerogpu
    from mpdemo.ui.train import classroom, session_life

    monkeypatch.setattr(broadcast, "_HUB", broadcast.hub())
    monkeypatch.setattr(zerogpu, "_gpu_fn", zerogpu.gpu_function())
    monkeypatch.setattr(hfhub, "_reachable", True)
    listing.listing(RunConfig(device="cpu"))
    monkeypatch.setattr(data, "_TOKENIZED", {("fingerprint",): object()})
    monkeypatch.setattr(system, "_hub_result", [True])
    monkeypatch.setattr(system, "_started", dict(system._started))  # put back afterwards
    monkeypatch.setattr(classroom, "_OWNERS", {1: "token"})
    monkeypatch.setattr(core, "_collect_s", 0.5)
    monkeypatch.setattr(session_life, "_OPEN", session_life.weakref.WeakValueDictionary())
    monkeypatch.setattr(pages, "_OPEN", {"page": 1})
    monkeypatch.setattr(pages, "_CLOSED_AT", {"gone": 0.0})
    monkeypatch.setattr(recorded, "_SKIPPED", {("fifo.json", "not a regular file")})
    names = mpdemo.reset()
    assert {
        "mpdemo.classroom.broadcast.forget_hub",
        "mpdemo.ui.zerogpu.forget_gpu_function",
        "mpdemo.engine.hfhub.reset_cache",
        "mpdemo.teach.listing.forget_listings",
        "mpdemo.engine.data.forget_tokenized",
        "mpdemo.ui.system.forget_hub_check",
        "mpdemo.ui.train.classroom.forget_owners",
        "mpdemo.engine.core.forget_collect_time",
        "mpdemo.ui.train.session_life.forget_open_sessions",
        "mpdemo.ui.pages.forget_pages",
        "mpdemo.files.recorded.forget_skipped",
    } <= set(names), names
    assert pages._OPEN == {} and pages._CLOSED_AT == {} and set() == recorded._SKIPPED
    assert data._TOKENIZED == {}
    assert broadcast._HUB is None and zerogpu._gpu_fn is None and hfhub._reachable is None
    assert listing._listing.cache_info().currsize == 0
    assert system._hub_result == [] and classroom._OWNERS == {} and core._collect_s is None


def test_own_modules_are_imported_at_the_top_but_for_a_few_lazy_ones():
    # A function-level import hides an edge from a reader (and once hid a circle); the engine's
    # torch-side entry points load through mpdemo.engine's table instead (issue 49: at most 20).
    mods = shape.modules(PACKAGE)
    found = sum(
        shape._function_imports(mods, name, ast.parse(path.read_text(encoding="utf-8")))
        for name, path in mods.items()
    )
    assert found <= 20, found


def test_the_engines_lazy_table_names_only_what_its_modules_define():
    import mpdemo.engine as engine

    for name in engine.__all__:
        assert callable(getattr(engine, name)), name


def test_a_hub_check_whose_thread_could_not_start_is_asked_again(monkeypatch) -> None:
    # A thread that failed to start (no resources left) was kept, and every page load's
    # hub_status() then raised "cannot join thread before it is started".
    import threading

    from mpdemo.ui import system

    monkeypatch.setattr(system, "_started", {})
    monkeypatch.setattr(system, "_hub_result", [])
    monkeypatch.setattr(system, "hub_reachable", lambda: False)
    start = threading.Thread.start

    def refuse(self):  # noqa: ANN001, ANN202
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    with pytest.raises(RuntimeError, match="can't start"):
        system.hub_status()
    monkeypatch.setattr(threading.Thread, "start", start)
    assert system.hub_status(5.0) is False
