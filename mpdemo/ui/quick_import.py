"""`import gradio` without re-writing gradio's type stubs: gradio 6.31 re-renders the `.pyi` of
every component class it defines (component_meta.create_or_modify_pyi), which a server never reads
(`import gradio`: 4.3-4.6 s -> 2.3-2.9 s on a 2-core EPYC). It runs before gradio is imported."""

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
    for one that does nothing, before gradio defines its first component."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        # Stays in sys.meta_path: removing itself while the import system walks it would skip
        # the next finder.
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
