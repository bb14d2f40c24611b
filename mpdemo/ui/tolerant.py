"""Inputs that take junk as their own value: gradio 6.31 answers a value its `preprocess` refuses
(a number "abc", a list for a radio) with an HTTP 500, and anyone may call any event (issue 52).
`tolerate(demo)` swaps the class, not an attribute: gradio re-makes a session's copy with
`block.__class__(...)`. /train and /sweep check the values as sent (preprocess=False)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gradio as gr
from gradio.data_classes import FileData
from pydantic import ConfigDict

Check = Callable[[gr.components.Component, object], bool]


def _number(x: object) -> bool:
    """A finite int or float (a bool is an int to gradio's Number too)."""
    return isinstance(x, (int, float)) and math.isfinite(x)


def _tolerant_class(base: type, sent_ok: Check, kept_ok: Check | None = None) -> type:
    """`base` whose preprocess reads a value failing `sent_ok` or `kept_ok` (by default the same
    check) as its own value."""
    kept_ok = kept_ok or sent_ok

    def preprocess(self: Any, payload: Any) -> Any:
        if sent_ok(self, payload):
            try:
                out = base.preprocess(self, payload)
            except Exception:  # noqa: BLE001 - gradio's refusal (Error, ValueError, TypeError)
                pass
            else:
                if kept_ok(self, out):
                    return out
        own = self.value() if callable(self.value) else self.value
        try:
            return base.preprocess(self, own)
        except Exception:  # noqa: BLE001 - its own value is out of this session's choices now
            return None

    # is_template: the page draws it as gradio's own component
    return type(
        f"Tolerant{base.__name__}", (base,), {"is_template": True, "preprocess": preprocess}
    )


def _any(_: object, __: object) -> bool:
    return True


class _FileOrNothing(FileData):
    """gradio's FileData, but a value that is none (5, "abc", a dict without a path) reads as no
    file, so the handler says "No file was given." in the page's language."""

    model_config = ConfigDict(title="FileData")  # the API's schema names it as before

    @classmethod
    def model_validate(cls, obj: object, *args: object, **kwargs: object) -> Any:
        """The upload as gradio reads it, or None."""
        try:
            return FileData.model_validate(obj, *args, **kwargs)
        except ValueError:  # pydantic's ValidationError
            return None


class TolerantUploadButton(gr.UploadButton):
    """gr.UploadButton: a value that is no file is none. gradio checks an upload against the
    data_model its __init__ set on the object (a session's copy too): a property of the class."""

    is_template = True

    @property
    def data_model(self) -> Any:
        """gradio's model for this button, FileData read tolerantly."""
        set_by_gradio = self.__dict__.get("_data_model", self.__dict__.get("data_model"))
        return _FileOrNothing if set_by_gradio in (None, FileData) else set_by_gradio

    @data_model.setter
    def data_model(self, value: Any) -> None:
        self.__dict__["_data_model"] = value


TOLERANT: dict[type, type] = {
    gr.UploadButton: TolerantUploadButton,
    gr.Number: _tolerant_class(gr.Number, lambda _, x: x is None or _number(x)),
    gr.Slider: _tolerant_class(gr.Slider, lambda _, x: _number(x)),
    # none sent is its own value too: the language picker's is the default language
    gr.Radio: _tolerant_class(gr.Radio, lambda _, x: x is not None, _any),
    # a value typed in (where a dropdown allows one) is text or a number, never a list
    gr.Dropdown: _tolerant_class(
        gr.Dropdown,
        lambda d, x: (
            isinstance(x, list) if d.multiselect else x is None or isinstance(x, (str, int, float))
        ),
        _any,
    ),
    # a string was read letter by letter; None or a number failed
    gr.CheckboxGroup: _tolerant_class(gr.CheckboxGroup, lambda _, x: isinstance(x, list), _any),
    gr.Checkbox: _tolerant_class(gr.Checkbox, lambda _, x: isinstance(x, bool)),
}


def tolerate(demo: gr.Blocks) -> int:
    """Give every plain gradio input of `demo` its tolerant class; returns how many."""
    n = 0
    for block in demo.blocks.values():
        tolerant = TOLERANT.get(type(block))
        if tolerant is not None:
            block.__class__ = tolerant  # same layout: a subclass that only adds a method
            n += 1
    return n
