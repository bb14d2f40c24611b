"""The code on screen is the code that runs: the backend's `train_loop` as read from its module,
settings filled in, compared with the course's, and the same text as a runnable script.
"""

from __future__ import annotations

import functools
import os
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import engine
from ..config import RunConfig
from ..registry import BACKENDS
from ..state import on_reset
from .course import COURSE, Line, compare, unique
from .loop_source import (
    PARSE_LOCK,
    drop_dead_branches,
    fill_in,
    in_docstring,
    literal,
    loop_source,
    settings_names,
)

if TYPE_CHECKING:
    import torch

# Settings the loop reads off prepare()'s result: the listing keeps their names (a comment about
# "the model's own device type" must not sit above "cpu"); the script defines them.
FROM_PREPARED: dict[str, str] = {"device_type": "prep.device.type"}


@dataclass(frozen=True)
class Listing:
    """A backend's loop for one run, compared with the course's listing."""

    cfg: RunConfig
    device: str  # the device type the settings were filled in for
    settings: dict[str, object]
    body: str  # the loop, as module-level code with the settings filled in
    lines: list[Line]
    removed: list[str]  # the course's lines that have no counterpart here
    imports: list[str]  # what the filled-in values need (e.g. a metrics function)

    @property
    def course(self) -> str:
        """The course's listing for this backend."""
        return COURSE[self.cfg.backend]

    def changes(self) -> list[str]:
        """Why the loop differs from the course's: one entry per explanation, in order."""
        return unique(ln.why for ln in self.lines if ln.kind in ("changed", "new") and ln.why)

    def shown_changes(self) -> list[str]:
        """The explanations of the lines shown unfolded, in order."""
        return unique(
            ln.why for ln in self.lines if ln.kind in ("changed", "new") and ln.why and not ln.fold
        )

    def folded_changes(self) -> list[str]:
        """The explanations of the folded lines (mpdemo's own arguments) not said above them."""
        shown = set(self.shown_changes())
        return [w for w in self.changes() if w not in shown]

    @property
    def fold_why(self) -> str | None:
        """What the folded arguments are for (the `# mpdemo:` comment), or None: no fold."""
        return next((ln.why for ln in self.lines if ln.fold == "start"), None)

    def mpdemo_lines(self) -> list[str]:
        """What each of mpdemo's own lines does, in order."""
        return unique(ln.why for ln in self.lines if ln.kind == "mpdemo" and ln.why)


@on_reset
def forget_listings() -> None:
    """Build every listing again on next use (mpdemo.reset())."""
    _listing.cache_clear()


def listing(cfg: RunConfig, device: torch.device | None = None, task: str | None = None) -> Listing:
    """The backend's loop for cfg with its settings filled in, compared with the course's."""
    if device is None or task is None:  # the engine's own checks: ConfigError
        src = engine.preflight(cfg)
        device, task = src.device, src.task
    with PARSE_LOCK:  # one build per listing, however many pages ask at once
        return _listing(cfg, device, task)


@functools.lru_cache(maxsize=256)
def _listing(cfg: RunConfig, device: torch.device, task: str) -> Listing:
    module = BACKENDS[cfg.backend].load()
    values = module.settings(cfg, device, task)
    missing = set(settings_names(cfg.backend)) ^ set(values)
    if missing:  # a loop parameter with no setting (or the reverse): the listing would lie
        raise RuntimeError(f"{cfg.backend}: settings() and train_loop disagree on {missing}")
    imports: list[str] = []
    filled = {k: v for k, v in values.items() if k not in FROM_PREPARED}
    body = drop_dead_branches(fill_in(loop_source(cfg.backend), filled, imports))
    lines, removed = compare(body, COURSE[cfg.backend])
    return Listing(cfg, device.type, values, body, lines, removed, unique(imports))


def changed_fields(cfg: RunConfig) -> dict[str, object]:
    """cfg's fields whose value is not RunConfig's default, in field order."""
    default = RunConfig().to_dict()
    return {k: v for k, v in cfg.to_dict().items() if v != default[k]}


def run_command(cfg: RunConfig) -> str:
    """The `python -m mpdemo run ...` line for cfg (only the flags that differ from defaults)."""
    args = ["python", "-m", "mpdemo", "run", "--backend", cfg.backend, "--precision", cfg.precision]
    for name, value in changed_fields(cfg).items():
        if name in ("backend", "precision", "warmup_steps"):
            continue
        if isinstance(value, bool):
            value = "on" if value else "off"
        args += ["--" + name.replace("_", "-"), str(value)]
    return shlex.join(args)


def _config_lines(cfg: RunConfig) -> str:
    keep = ("model", "backend", "precision", "device", "steps", "batch_size")
    shown = changed_fields(cfg).keys() | keep
    return "\n".join(f"    {k}={literal(v)}," for k, v in cfg.to_dict().items() if k in shown)


# The docstring's values go through in_docstring, the config's through literal(): a setting
# is data in the script, never code (a folder named 'm"""+__import__("os")...' stays a name).
SCRIPT_HEAD = '''"""Reproduce the mpdemo run {label}: the loop mpdemo runs, with this run's settings.

Needs: Python 3.11+ with torch and mpdemo, installed once {install}
Then from any folder: python {filename}
The same run in mpdemo: {command}
It prints `step N  loss L  scale S  skipped B` for each step: the losses of the run above.
"""

import torch

from mpdemo import RunConfig, prepare
from mpdemo.backends.hooks import StepPrinter
{imports}
cfg = RunConfig(
{config}
)
prep = prepare(cfg)  # the same weights and batches as mpdemo's run: same seed, same order
{inputs}
rec = StepPrinter(prep)  # mpdemo: prints each step (in the app, a Recorder times and plots it)

'''


LOCAL_INSTALL = (
    "from mpdemo's folder (its README):\n"
    "pip install torch==2.13.0 -r requirements.txt .   (the bundled data ships inside the package)"
)
SPACE_URL = "https://huggingface.co/spaces/{space}"


def install_text() -> str:
    """How to install mpdemo, for the script: on a Space from its repository, else the README's."""
    space = os.environ.get("SPACE_ID", "").strip()
    if not space:
        return LOCAL_INSTALL
    url = SPACE_URL.format(space=space)
    # pyproject lists no dependencies: requirements.txt by its raw URL, the package by git.
    reqs = shlex.quote(f"{url}/resolve/main/requirements.txt")
    return (
        f"from this Space's repository ({url}):\n"
        f"pip install torch==2.13.0 -r {reqs} {shlex.quote('git+' + url)}"
    )


def script_filename(cfg: RunConfig) -> str:
    """The download's file name."""
    unscaled = "_s1" if cfg.unscaled else ""  # 'fp16 · S=1'
    return f"mpdemo_{cfg.backend}_{cfg.precision}{unscaled}.py"


def script_for(cfg: RunConfig, device: torch.device | None = None, task: str | None = None) -> str:
    """The runnable script that reproduces cfg: prepare(), then the backend's loop as it runs."""
    return script_of(listing(cfg, device, task))


def script_of(lst: Listing) -> str:
    """The reproduce script around a listing: its body is the listing's text, unchanged."""
    cfg = lst.cfg
    pinned = cfg.replace(device=lst.device)  # the device the settings were filled in for
    loop_inputs = BACKENDS[cfg.backend].load().INPUTS  # parameter -> attribute of prepare()'s
    inputs = [f"{name} = prep.{attr}" for name, attr in loop_inputs.items()]
    inputs += [  # what the loop reads off prep, with this run's value beside it
        f"{name} = {FROM_PREPARED[name]}  # {literal(value)} for this run"
        for name, value in lst.settings.items()
        if name in FROM_PREPARED
    ]
    head = SCRIPT_HEAD.format(
        label=in_docstring(repr(cfg.label)),
        install="\n".join(in_docstring(line) for line in install_text().split("\n")),
        command=in_docstring(run_command(pinned)),
        filename=in_docstring(script_filename(cfg)),
        imports="".join(line + "\n" for line in lst.imports),
        config=_config_lines(pinned),
        inputs="\n".join(inputs),
    )
    return head + lst.body
