"""`import gradio` without re-writing gradio's type stubs: two seconds off every start.

gradio 6.31 (`gradio/component_meta.py`) calls `create_or_modify_pyi` for every component class
it defines while `import gradio` runs: it reads the class's source file, parses it (`ast`), renders
a Jinja template of its event methods and compares, then rewrites, the `.pyi` stub beside it. The
stubs are for type checkers on a developer's machine and ship in gradio's wheel already; a server
never reads them. On a 2-core AMD EPYC (AVX512-BF16), `python -c "import gradio"` took 4.30-4.61 s
with it and 2.34-2.93 s without (three each, quiet). This module imports nothing of gradio's: it
must run before gradio is first imported (mpdemo/ui/__init__.py calls it first).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

_TARGET = "gradio.component_meta"


def _no_stub(*_args: object, **_kwargs: object) -> None:
    """Stands in for gradio's stub writer: the wheel's stubs stay as they were shipped."""


class _StubWriterOff(importlib.abc.MetaPathFinder):
    """Finds gradio.component_meta the usual way and, once it has run, swaps its stub writer
    for one that does nothing: before `import gradio` defines its first component."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        # Stays in sys.meta_path (one comparison an import): removing itself here, while the
        # import system walks that list, would make it skip the finder after this one.
        if name != _TARGET or _TARGET in sys.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None  # not a plain file on sys.path: the other finders load it as it is
        run = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            if hasattr(module, "create_or_modify_pyi"):
                module.create_or_modify_pyi = _no_stub  # type: ignore[attr-defined]

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def skip_stub_writing() -> None:
    """Arrange for gradio's import to leave its stubs alone (nothing if gradio is imported)."""
    if _TARGET in sys.modules or any(isinstance(f, _StubWriterOff) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _StubWriterOff())
