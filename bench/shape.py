"""The codebase's shape in figures (issue 49), read from mpdemo's source alone; imports nothing of it.

    python bench/shape.py [--json] [--hops]

Prints: mpdemo's lines (all, and non-blank), tests' lines; uses of `Any` (every `ast.Name` whose id
is "Any", and how many of those are a whole annotation); import circles among mpdemo's modules
counting the imports under `if TYPE_CHECKING:` and without them; function-level imports of mpdemo's
own modules; three-argument `getattr` calls; modules over 500 lines. Asserts nothing.

--hops also trains one tiny comparison through the Train tab's handler (tiny-gpt2, fp32 and
fp16 side by side, 2 steps, on the CPU) and prints the chain of mpdemo modules from the handler
down to the backend's first step: the frames of each thread, greenlet and caller it went
through, joined where one started the next. A hop is a change of module along that chain;
doubling back is a module the chain returns to after leaving it. It also prints every call
made during that click from below mpdemo.ui (backends, engine, runs, classroom) into it: a
path that climbs back up to the page, as a factory the line asks the page for. (Callbacks
handed down within the engine, an emit or a turn, are the design and are not counted.)
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "mpdemo"
LONG = 500


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Dotted module name -> its file, for every .py under the package."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def targets(mods: dict[str, Path], module: str, node: ast.Import | ast.ImportFrom) -> set[str]:
    """The mpdemo modules an import statement loads (a package's submodule when named)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name in mods}
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


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the nodes under an `if TYPE_CHECKING:` block."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    return skipped


def _lazy_targets(mods: dict[str, Path], name: str, tree: ast.Module) -> set[str]:
    """A package whose __getattr__ loads names from a `_WHERE = {name: submodule}` table (PEP 562,
    mpdemo.engine and mpdemo.sweep) imports those submodules: edges the import statements hide."""
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_WHERE" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            subs = {v.value for v in node.value.values if isinstance(v, ast.Constant)}
            return {f"{name}.{s}" for s in subs if f"{name}.{s}" in mods}
    return set()


def import_graph(*, type_checking: bool, package: Path = PACKAGE) -> dict[str, set[str]]:
    """module -> the mpdemo modules it imports anywhere in its body (TYPE_CHECKING ones if asked)."""
    mods = modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = set() if type_checking else _type_checking_nodes(tree)
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom) and id(node) not in skipped:
                deps |= targets(mods, name, node)
        deps |= _lazy_targets(mods, name, tree)
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


def _function_imports(mods: dict[str, Path], name: str, tree: ast.AST) -> int:
    """Import statements inside a function body that load one of mpdemo's own modules."""
    inside: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            inside.update(id(n) for stmt in fn.body for n in ast.walk(stmt))
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        and id(node) in inside
        and targets(mods, name, node)
    )


def _lines(paths: list[Path]) -> tuple[int, int]:
    """(all lines, non-blank lines) of the files."""
    total = blank = 0
    for p in paths:
        text = p.read_text(encoding="utf-8").splitlines()
        total += len(text)
        blank += sum(1 for line in text if not line.strip())
    return total, total - blank


def figures() -> dict[str, object]:
    """Every figure this script prints, as one dict."""
    mods = modules()
    any_names = any_annotations = getattr3 = fn_imports = 0
    long: dict[str, int] = {}
    for name, path in mods.items():
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
        annotations = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
                annotations.add(id(node.annotation))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
                annotations.add(id(node.returns))
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == "Any":
                any_names += 1
                any_annotations += id(node) in annotations
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and len(node.args) == 3
            ):
                getattr3 += 1
        fn_imports += _function_imports(mods, name, tree)
        n = len(text.splitlines())
        if n > LONG:
            long[str(path.relative_to(ROOT))] = n
    lines, nonblank = _lines(list(mods.values()))
    test_lines, test_nonblank = _lines(sorted((ROOT / "tests").rglob("*.py")))
    return {
        "mpdemo_lines": lines,
        "mpdemo_nonblank_lines": nonblank,
        "tests_lines": test_lines,
        "tests_nonblank_lines": test_nonblank,
        "modules": len(mods),
        "any_names": any_names,
        "any_as_whole_annotation": any_annotations,
        "cycles_with_type_checking": cycles(import_graph(type_checking=True)),
        "cycles_at_run_time": cycles(import_graph(type_checking=False)),
        "function_level_own_imports": fn_imports,
        "getattr_with_default": getattr3,
        f"modules_over_{LONG}_lines": long,
    }


LAYERS = ("mpdemo.backends", "mpdemo.engine", "mpdemo.runs", "mpdemo.classroom", "mpdemo.ui")
up: set[str] = set()  # calls from a lower layer to a higher one during the traced click


def _layer(module: str) -> int:
    """The module's layer (LAYERS' index); -1 outside them."""
    return next((i for i, p in enumerate(LAYERS) if module.startswith(p + ".")), -1)


def click_chain() -> list[tuple[str, str]]:
    """(module, function) from the Train handler down to the backend's first step (see --hops)."""
    import sys
    import threading

    import greenlet

    sys.path.insert(0, str(ROOT))
    from mpdemo.backends import hooks
    from mpdemo.ui.train import handlers

    def frames(f: object) -> list[tuple[str, str]]:
        out = []
        while f is not None:
            out.append((f.f_globals.get("__name__", ""), f.f_code.co_name))  # type: ignore[attr-defined]
            f = f.f_back  # type: ignore[attr-defined]
        return out[::-1]

    def here() -> list[tuple[str, str]]:
        """This thread's chain so far: its creator's, then each greenlet's parents', then ours."""
        lets, g = [], greenlet.getcurrent()
        while g.parent is not None:
            lets.append(g.parent.gr_frame)
            g = g.parent
        chain = list(getattr(threading.current_thread(), "_hops_chain", []))
        for f in reversed(lets):
            chain += frames(f)
        return chain + frames(sys._getframe(2))

    start = threading.Thread.start
    record = hooks.StepHooks.record
    seen: list[list[tuple[str, str]]] = []
    up.clear()

    def traced_start(self: threading.Thread) -> None:
        self._hops_chain = here()  # type: ignore[attr-defined]
        start(self)

    def traced_record(self: hooks.StepHooks, *args: object, **kwargs: object) -> None:
        if not seen:
            seen.append(here())
        record(self, *args, **kwargs)

    def profile(frame: object, event: str, arg: object) -> None:
        if event != "call":
            return
        callee = frame.f_globals.get("__name__", "")  # type: ignore[attr-defined]
        caller_frame = frame.f_back  # type: ignore[attr-defined]
        caller = caller_frame.f_globals.get("__name__", "") if caller_frame else ""
        if 0 <= _layer(caller) < _layer(callee) == len(LAYERS) - 1:
            up.add(f"{caller}:{caller_frame.f_code.co_name} → {callee}:{frame.f_code.co_name}")  # type: ignore[attr-defined]

    threading.Thread.start = traced_start  # type: ignore[method-assign]
    hooks.StepHooks.record = traced_record  # type: ignore[method-assign]
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        values = {"steps": 2, "precisions": ["fp32", "fp16"], "batch_size": 4}
        values |= {"train_slice": "train[:16]", "eval_slice": "validation[:8]"}
        for _ in handlers.train(values, "en", None, "own"):
            pass
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
        threading.Thread.start = start  # type: ignore[method-assign]
        hooks.StepHooks.record = record  # type: ignore[method-assign]
    chain = seen[0] if seen else []
    first = next(i for i, (m, fn) in enumerate(chain) if m == handlers.__name__ and fn == "train")
    return [(m, fn) for m, fn in chain[first:] if m.startswith("mpdemo")]


def hops(chain: list[tuple[str, str]]) -> dict[str, object]:
    """The chain's modules (repeats next to each other merged), its hops and where it doubles back."""
    mods: list[str] = []
    for m, _ in chain:
        if not mods or mods[-1] != m:
            mods.append(m)
    back = sorted({m for i, m in enumerate(mods) if m in mods[:i]})
    return {
        "click_hops_down": len(mods) - 1,
        "click_doubles_back": back,
        "click_modules": mods,
        "click_calls_up": sorted(up),
    }


def main() -> None:
    """Print the figures, one a line (or as JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--hops", action="store_true", help="also trace a Train click (trains)")
    args = parser.parse_args()
    f = figures()
    if args.hops:
        f |= hops(click_chain())
    if args.json:
        print(json.dumps(f, indent=1))
        return
    for key, value in f.items():
        if isinstance(value, list):
            print(f"{key}: {len(value)}")
            if key == "click_modules":
                print("   ", " → ".join(m.removeprefix("mpdemo.") for m in value))
                continue
            for comp in value:
                print("   ", " ↔ ".join(comp) if isinstance(comp, list) else comp)
        elif isinstance(value, dict):
            print(f"{key}: {len(value)}")
            for path, n in sorted(value.items(), key=lambda kv: -kv[1]):
                print(f"    {n:5d} {path}")
        else:
            print(f"{key}: {value:,}")


if __name__ == "__main__":
    main()
