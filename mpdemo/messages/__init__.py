"""Every message the engine shows a person, by key: the UI renders it in the page's language."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..wording import ENGLISH, NumberStyle
from .inputs import INPUTS
from .runs import RUNS
from .sweep import SWEEP
from .teaching import TEACHING

# English templates. `{name}` fields are filled from the arguments.
EN: dict[str, str] = {**INPUTS, **RUNS, **SWEEP, **TEACHING}


@dataclass(frozen=True)
class Note:
    """A warning or message: a key into the message tables plus its arguments."""

    key: str
    args: dict[str, object] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The English text."""
        return render(self.key, self.args)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"key": self.key, "args": dict(self.args), "text": self.text}


def render(
    key: str,
    args: dict[str, object],
    table: dict[str, str] | None = None,
    style: NumberStyle = ENGLISH,
) -> str:
    """Fill a message template (`table`, `style`: a language's), else English's, else the key."""
    template = (table or {}).get(key) or EN.get(key) or key
    # A nested message ({"key", "args"}) is rendered first, in the same language.
    args = {
        k: render(v["key"], v.get("args") or {}, table, style)
        if isinstance(v, dict) and "key" in v
        else v
        for k, v in args.items()
    }
    try:
        return style.format(template, args)
    except (KeyError, IndexError, ValueError, TypeError, OverflowError):
        # A wrong argument (None under a number format) must not take the page down with it.
        return f"{template} {args}"


class MpdemoError(Exception):
    """An error a person can act on: bad input, an unreachable hub, a missing GPU."""

    def __init__(self, key: str, **args: object) -> None:
        self.note = Note(key, args)
        super().__init__(self.note.text)

    @property
    def key(self) -> str:
        """The message key."""
        return self.note.key


class ConfigError(MpdemoError, ValueError):
    """A value in RunConfig (or typed in the UI/CLI) that cannot run."""
