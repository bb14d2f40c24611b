"""Inputs that take junk as their own value: every number, slider, choice and tick box of the page.

gradio 6.31 checks what an event sends in each component's `preprocess`, and answers anything
outside it (a number "abc", a slider's 5 above its 0.95, a list for a radio, a string for a
group of tick boxes) with its generic "upstream app raised an exception" or its English "Value
... not in the list of choices", HTTP 500 off the queue (issue 52: 63 of the Code tab's internal
events, 12 of the Underflow lab's, /follow_board). `api_visibility` only hides an event from the
docs: anyone may still call it by its index. The page itself never sends such a value.

So each of those components preprocesses what it can and takes anything else as the value it
holds on the server (the one the page opened with; gradio's empty one for a copy it re-made for
a session), and the handler answers as for that value: a normal answer, or its own one-line
refusal in the page's language (an empty number: "Steps is empty: ..."). The events that check
the values as sent (/train, /sweep: preprocess=False) and the language picker (app.LangRadio)
have their own rule and stay as they are.

`tolerate(demo)` gives the built page's components these classes: the class, not an attribute of
the object, because gradio re-makes a component for a session with `block.__class__(**kwargs)`
on each update (a label in a new language, new choices), and one walk covers every event, the
ones added later too. Each class is a gradio template (`is_template`): the page draws gradio's
own component.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import gradio as gr
from gradio.data_classes import FileData
from pydantic import ConfigDict


def _number(x: object) -> bool:
    """A finite int or float (a bool is an int to gradio's Number too)."""
    return isinstance(x, (int, float)) and math.isfinite(x)


def _tolerant(
    comp: gr.components.Component,
    base: Callable[[Any, Any], Any],
    payload: Any,
    sent_ok: Callable[[object], bool],
    kept_ok: Callable[[object], bool],
) -> Any:
    """base's preprocess of payload when both checks pass, else of the component's own value."""
    if sent_ok(payload):
        try:
            out = base(comp, payload)
        except Exception:  # noqa: BLE001 - gradio's refusal (Error, ValueError, TypeError)
            pass
        else:
            if kept_ok(out):
                return out
    own = comp.value() if callable(comp.value) else comp.value
    try:
        return base(comp, own)
    except Exception:  # noqa: BLE001 - its own value is out of this session's choices now
        return None


def _number_or_none(x: object) -> bool:
    return x is None or _number(x)


def _bool(x: object) -> bool:
    return isinstance(x, bool)


def _scalar(x: object) -> bool:
    return x is None or isinstance(x, (str, int, float))


def _list(x: object) -> bool:
    return isinstance(x, list)


def _any(_: object) -> bool:
    return True


class TolerantNumber(gr.Number):
    """gr.Number: a value that is no finite number is the field's own value (often empty)."""

    is_template = True

    def preprocess(self, payload: Any) -> Any:
        """A finite number (or None), whatever was sent."""
        return _tolerant(self, gr.Number.preprocess, payload, _number_or_none, _number_or_none)


class TolerantSlider(gr.Slider):
    """gr.Slider: a value that is no number within its range is the slider's own value."""

    is_template = True

    def preprocess(self, payload: Any) -> Any:
        """A finite number in the slider's range, whatever was sent."""
        return _tolerant(self, gr.Slider.preprocess, payload, _number, _number)


class TolerantRadio(gr.Radio):
    """gr.Radio: a value outside its choices is the radio's own value."""

    is_template = True

    def preprocess(self, payload: Any) -> Any:
        """One of its choices (or None, as gradio's), whatever was sent."""
        return _tolerant(self, gr.Radio.preprocess, payload, _any, _any)


class TolerantDropdown(gr.Dropdown):
    """gr.Dropdown: a value outside its choices is the dropdown's own value."""

    is_template = True

    def preprocess(self, payload: Any) -> Any:
        """Its choice(s) (or None, as gradio's), whatever was sent; a value typed in (where it
        allows one) is text or a number, never a list or an object."""
        sent_ok = _list if self.multiselect else _scalar
        return _tolerant(self, gr.Dropdown.preprocess, payload, sent_ok, _any)


class TolerantCheckboxGroup(gr.CheckboxGroup):
    """gr.CheckboxGroup: anything but a list of its choices is the group's own ticks (a string
    was read letter by letter; None or a number failed)."""

    is_template = True

    def preprocess(self, payload: Any) -> Any:
        """A list of its choices, whatever was sent."""
        return _tolerant(self, gr.CheckboxGroup.preprocess, payload, _list, _any)


class TolerantCheckbox(gr.Checkbox):
    """gr.Checkbox: anything but true or false is the box's own tick (gradio passed "abc" on)."""

    is_template = True

    def preprocess(self, payload: Any) -> Any:
        """True or False, whatever was sent."""
        return _tolerant(self, gr.Checkbox.preprocess, payload, _bool, _bool)


class _FileOrNothing(FileData):
    """gradio's FileData, but a value that is none (5, "abc", a dict without a path) reads as no
    file: the handler says "No file was given." in the page's language, where gradio's check
    answered an API caller with its generic "upstream app raised an exception"."""

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
    component's data_model before preprocess, and its __init__ sets that model on the object (a
    session's re-made copy too), so the rule is a property of the class that reads what __init__
    set."""

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
    gr.Number: TolerantNumber,
    gr.Slider: TolerantSlider,
    gr.Radio: TolerantRadio,
    gr.Dropdown: TolerantDropdown,
    gr.CheckboxGroup: TolerantCheckboxGroup,
    gr.Checkbox: TolerantCheckbox,
}


def tolerate(demo: gr.Blocks) -> int:
    """Give every plain gradio number, slider, choice, tick box and upload button of `demo` its tolerant class
    (a subclass of gradio's own already has its rule); returns how many."""
    n = 0
    for block in demo.blocks.values():
        tolerant = TOLERANT.get(type(block))
        if tolerant is not None:
            block.__class__ = tolerant  # same layout: a subclass that only adds a method
            n += 1
    return n
