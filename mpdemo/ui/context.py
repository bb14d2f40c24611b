"""What a tab builder gets (TabContext) and what the Train tab shares with the other tabs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import gradio as gr

from ..config import Limits
from ..languages import DEFAULT_LANG, t

Component = gr.components.Component
# What a handler gives gradio: one value, gr.update(...) or gr.skip() an output (opaque here).
Value = object
# A handler's answer keyed by its output components.
Outputs = dict[Component, Value]
# Outputs (or one component's properties) by name, before they are keyed by component.
Frame = dict[str, Value]
# An event's callback: gradio calls it with the inputs' values.
Handler = Callable[..., Value]
C = TypeVar("C", bound=Component | gr.blocks.BlockContext)
# A small event of the page's own: no waiting in line, no progress shown, not in the API's docs.
QUIET: dict[str, object] = {
    "concurrency_limit": None,
    "api_visibility": "undocumented",
    "show_progress": "hidden",
}

STOP_WAIT_S = 15.0  # how long a Stop click (training, the sweep) waits for the step in progress


@dataclass(frozen=True)
class TrainShared:
    """The Train tab's components another tab reads (app.py, the Code tab)."""

    controls: dict[str, Component]  # RunConfig field name -> its control
    status: gr.Markdown  # the status line
    session: gr.State  # gr.State(Session): this page's runs
    summary: Component  # the runs table: its change means the runs changed
    script_run: gr.Dropdown  # the reproduce script's run picker: ditto
    lesson: gr.Dropdown | None = None  # its sweep lesson starts the sweep (tabs/pays_line.py)


# (component, {prop: i18n key}) - the props gr.update() re-sets when the language changes
Registered = tuple[gr.components.Component | gr.blocks.BlockContext, dict[str, str]]
# (fn, inputs, outputs, alone): a hook as a tab registers it (see TabContext.on_language)
TabHook = tuple[Handler, list[Component], list[Component], bool]


@dataclass
class TabContext:
    """What a tab builder gets: the language control, server limits, i18n registration."""

    lang: gr.Radio
    limits: Limits
    registered: list[Registered] = field(default_factory=list)
    # What one tab exposes to another: the Train tab's components (the Code tab follows its
    # runs, a preset fills its controls), the Why tab's preset menu, the app's tabs.
    train: TrainShared | None = None
    preset: gr.Dropdown | None = None  # once the Why tab is built
    tabs: gr.Tabs | None = None  # the gr.Tabs, so a preset or a lesson can switch tab
    language_hooks: list[TabHook] = field(default_factory=list)
    load_hooks: list[TabHook] = field(default_factory=list)

    def i18n(self, component: C, **props: str) -> C:
        """Label `component` by locale keys (e.g. label='steps_label'), now in the default
        language and again on each language change."""
        for prop, key in props.items():
            text = t(key, DEFAULT_LANG)
            setattr(component, prop, component.postprocess(text) if prop == "value" else text)
        self.registered.append((component, props))
        return component

    def on_language(
        self, fn: Handler, inputs: list[Component], outputs: list[Component], alone: bool = False
    ) -> None:
        """Call fn(lang, *inputs) -> outputs' updates on a language change, in one event with the
        other hooks; `alone`: an event of its own, for a hook that may wait (imports torch)."""
        self.language_hooks.append((fn, inputs, outputs, alone))

    def on_load(
        self, fn: Handler, inputs: list[Component], outputs: list[Component], alone: bool = False
    ) -> None:
        """Call fn(lang, *inputs) once the page has loaded and its language is known (the
        hooks share one event; `alone` as in on_language)."""
        self.load_hooks.append((fn, inputs, outputs, alone))
