"""The package's shape: no import cycle among mpdemo's modules, lazy imports included.

The graph is built from the source (ast), so an import inside a function counts the same as one
at the top; only imports under `if TYPE_CHECKING:` are left out (they never run).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mpdemo"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _targets(mods: dict[str, Path], module: str, node: ast.AST) -> set[str]:
    """The mpdemo modules an import statement loads (a package's submodule when named)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in mods}
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        pkg = module if mods[module].name == "__init__.py" else module.rpartition(".")[0]
        parts = pkg.split(".")
        base = ".".join(
            parts[: len(parts) - node.level + 1] + ([node.module] if node.module else [])
        )
    else:
        base = node.module or ""
    out = set()
    for alias in node.names:
        if f"{base}.{alias.name}" in mods:
            out.add(f"{base}.{alias.name}")
        elif base in mods:
            out.add(base)
    return out


def import_graph() -> dict[str, set[str]]:
    """module -> the mpdemo modules it imports anywhere in its body (TYPE_CHECKING blocks aside)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skipped.update(id(n) for n in ast.walk(node))
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped:
                deps |= _targets(mods, name, node)
        deps.discard(name)
        # A package's __init__ is imported with any of its submodules: that edge is not a cycle.
        graph[name] = {d for d in deps if not name.startswith(d + ".")}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_lazy_imports():
    graph = import_graph()
    # runner imports the engine at the top, the UI's train tab imports plan inside functions.
    assert "mpdemo.engine.core" in graph["mpdemo.runs.runner"]
    assert "mpdemo.runs.plan" in graph["mpdemo.ui.train.tab"] or any(
        "mpdemo.runs.plan" in deps for mod, deps in graph.items() if mod.startswith("mpdemo.ui")
    )


def test_a_cycle_is_found_when_there_is_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_among_mpdemo_modules():
    assert cycles(import_graph()) == []


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
    from mpdemo.engine import data, hfhub
    from mpdemo.runs import calibration
    from mpdemo.teach import listing
    from mpdemo.ui import zerogpu

    monkeypatch.setattr(broadcast, "_HUB", broadcast.hub())
    monkeypatch.setattr(zerogpu, "_gpu_fn", zerogpu.gpu_function())
    monkeypatch.setattr(hfhub, "_reachable", True)
    monkeypatch.setattr(calibration, "_calibrations", {("tiny-bert",): object()})
    monkeypatch.setattr(listing, "_LISTINGS", {("torch",): object()})
    monkeypatch.setattr(data, "_TOKENIZED", {("fingerprint",): object()})
    names = mpdemo.reset()
    assert {
        "mpdemo.classroom.broadcast.forget_hub",
        "mpdemo.ui.zerogpu.forget_gpu_function",
        "mpdemo.engine.hfhub.reset_cache",
        "mpdemo.runs.calibration.forget_calibrations",
        "mpdemo.teach.listing.forget_listings",
        "mpdemo.engine.data.forget_tokenized",
    } <= set(names), names
    assert data._TOKENIZED == {}
    assert broadcast._HUB is None and zerogpu._gpu_fn is None and hfhub._reachable is None
    assert calibration._calibrations == {} and listing._LISTINGS == {}
