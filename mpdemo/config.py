"""RunConfig: one frozen record of a run's settings, built by the UI or CLI, stored with the run."""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Collection
from dataclasses import dataclass, field, fields
from typing import Any

from . import registry
from .catalog import DEFAULT_DATASET, DEFAULT_MODEL, DEVICES, MODELS
from .messages import ConfigError
from .registry import BACKEND_NAMES, PRECISION_NAMES

MAX_TEXT = 512  # longest model id / path / slice string accepted from a person


def env_int(name: str, default: int, low: int = 1) -> int:
    """Environment variable `name` as an integer: `default` where unset, not one, or below `low`
    (a cap of -1, "from 1 to -1", is no cap anyone meant)."""
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw) if raw else default
    except ValueError:
        return default
    return value if value >= low else default


def on_hf_space() -> bool:
    """True when running inside a Hugging Face Space (it sets SPACE_ID)."""
    return bool(os.environ.get("SPACE_ID"))


@dataclass(frozen=True)
class Limits:
    """Caps on what one run may ask for; tighter in hosted mode (a public Space)."""

    max_steps: int = 20_000
    max_batch_size: int = 1024
    max_params: int = 2_000_000_000
    max_queue: int = 64
    allow_local_paths: bool = True
    hosted: bool = False

    @classmethod
    def from_env(cls) -> Limits:
        """Read MPDEMO_* variables; MPDEMO_HOSTED=1 (default on a Space) tightens every cap."""
        hosted_raw = os.environ.get("MPDEMO_HOSTED", "")
        hosted = hosted_raw.strip() not in ("", "0", "false") if hosted_raw else on_hf_space()
        # hosted: a free CPU Space has 2 vCPUs and 16 GB
        base = cls(2_000, 128, 150_000_000, 20, False, True) if hosted else cls()
        paths = os.environ.get("MPDEMO_ALLOW_LOCAL_PATHS")
        local = base.allow_local_paths if paths is None else paths not in ("0", "false")
        return cls(
            max_steps=env_int("MPDEMO_MAX_STEPS", base.max_steps),
            max_batch_size=env_int("MPDEMO_MAX_BATCH_SIZE", base.max_batch_size),
            max_params=env_int("MPDEMO_MAX_PARAMS", base.max_params),
            max_queue=env_int("MPDEMO_MAX_QUEUE", base.max_queue),
            allow_local_paths=local,
            hosted=hosted,
        )


WEIGHTS = ("fp32", "bf16", "bf16-sr")  # where the weights live: the one list (engine/master.py)


def flag(help: str = "", cli: bool = True, choices: tuple[str, ...] = ()) -> dict[str, Any]:
    """A RunConfig field's metadata: its command line's help (cli=False: no flag), its choices."""
    return {"help": help, "cli": cli, "choices": choices}


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines one run; a field's flag() makes its command-line flag and control."""

    model: str = field(default=DEFAULT_MODEL, metadata=flag("a built-in, a Hub id or a folder"))
    dataset: str = field(default=DEFAULT_DATASET, metadata=flag("a built-in, a Hub id or a folder"))
    train_slice: str = field(default="train[:2000]", metadata=flag("rows to train on"))
    eval_slice: str = field(default="validation[:500]", metadata=flag("rows to evaluate on"))
    backend: str = field(default="torch", metadata=flag("torch, accelerate, trainer (a list)"))
    precision: str = field(default="fp32", metadata=flag("fp32, fp16, bf16, ... (a list)"))
    device: str = field(default="auto", metadata=flag("auto, cpu or cuda"))
    steps: int = field(default=100, metadata=flag("optimizer steps per run"))
    batch_size: int = field(default=32, metadata=flag("rows per step"))
    lr: float = field(default=1e-3, metadata=flag("AdamW's learning rate"))
    seed: int = field(default=0, metadata=flag("same seed: same weights and batch order"))
    loss_scaling: bool = field(default=True, metadata=flag("on or off (fp16's GradScaler)"))
    init_scale: float = field(default=2.0**16, metadata=flag("the GradScaler's first scale"))
    growth_interval: int = field(
        default=2000, metadata=flag("clean steps before the scale doubles")
    )
    max_length: int = field(default=64, metadata=flag("tokens per row"))
    # steps left out of timing averages
    warmup_steps: int = field(default=3, metadata=flag(cli=False))
    # Which repetition of a comparison run `--repeat N` times this is (1..N); 0: not repeated.
    trial: int = field(default=0, metadata=flag(cli=False))
    watch_grads: int = field(
        default=0,
        metadata=flag(
            "every N steps, each layer's gradient histogram against the format's range "
            "(JSON grad_histograms; 0: off)"
        ),
    )
    weights: str = field(
        default="fp32",
        metadata=flag(
            "fp32 (mixed precision's master weights), bf16 (pure bf16 weights and AdamW state) "
            "or bf16-sr (pure bf16, update rounded stochastically); bf16 ones need --precision bf16",
            choices=WEIGHTS,
        ),
    )
    # Costs a copy of the weights a step, outside the timed step.
    lost_updates: bool = field(
        default=False,
        metadata=flag(
            "on: each step's share of weight updates that rounded away (on for bf16 weights)"
        ),
    )

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunConfig:
        """Build from a dict, ignoring unknown keys."""
        floats = {f.name for f in fields(cls) if isinstance(f.default, float)}
        names = {f.name for f in fields(cls)}
        out = {k: v for k, v in data.items() if k in names}
        for k in floats & out.keys():
            # JSON writes 65536.0 back as 65536: a restored script must say 65536.0 like the run's.
            if isinstance(out[k], int) and not isinstance(out[k], bool):
                out[k] = float(out[k])
        return cls(**out)

    @property
    def scales_loss(self) -> bool:
        """Whether a GradScaler guards this run (fp16 with loss scaling on)."""
        p = registry.PRECISIONS.get(self.precision)
        return bool(p is not None and p.needs_scaler and self.loss_scaling)

    @property
    def unscaled(self) -> bool:
        """fp16 with loss scaling off: a scale of one, the underflow lesson's run."""
        p = registry.PRECISIONS.get(self.precision)
        return bool(p is not None and p.needs_scaler and not self.loss_scaling)

    @property
    def label(self) -> str:
        """How the run is named in plots and tables: 'torch · bf16', 'torch · fp16 · S=1'."""
        label = f"{self.backend} · {self.precision}" + (" · S=1" if self.unscaled else "")
        label += {"bf16": " · bf16 weights", "bf16-sr": " · bf16 weights+SR"}.get(self.weights, "")
        return label + (f" · #{self.trial}" if self.trial else "")

    def validate(self, limits: Limits | None = None) -> RunConfig:
        """Check every field that can be checked without loading anything; raise ConfigError."""
        lim = limits or Limits.from_env()
        for name in ("model", "dataset", "train_slice", "eval_slice"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ConfigError("bad_number", field=name, rule=_rule("rule_text"), value=value)
            if len(value) > MAX_TEXT:
                raise ConfigError("text_too_long", field=name, length=len(value), limit=MAX_TEXT)
        check_choice("backend", self.backend, BACKEND_NAMES)
        check_choice("precision", self.precision, PRECISION_NAMES)
        check_choice("device", self.device, DEVICES)
        check_choice("weights", self.weights, WEIGHTS)
        if self.weights != "fp32" and (self.precision != "bf16" or self.backend != "torch"):
            mix = {"weights": self.weights, "precision": self.precision, "backend": self.backend}
            raise ConfigError("weights_need_bf16", **mix)
        for name in (*WHOLE_FIELDS, *FLOAT_FIELDS):
            check_number(name, getattr(self, name), lim, self.model)
        for name in ON_OFF_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ConfigError("bad_number", field=name, rule=_rule("rule_on_off"), value=value)
        return self

    @property
    def tracks_updates(self) -> bool:
        """Whether each step reports lost_update_share (asked for, or pure bf16 weights)."""
        return self.lost_updates or self.weights != "fp32"


# RunConfig's on/off fields (a bool default): "on"/"off" from the CLI, a checkbox on the page.
ON_OFF_FIELDS: tuple[str, ...] = tuple(
    f.name for f in fields(RunConfig) if isinstance(f.default, bool)
)


def cli_fields() -> list[dataclasses.Field]:
    """RunConfig's fields that are command-line flags, in declaration order."""
    return [f for f in fields(RunConfig) if f.metadata.get("cli", False)]


def check_choice(name: str, value: Any, allowed: Collection[str]) -> None:
    """Raise the keyed ConfigError naming `allowed` unless `value` is one of them."""
    try:
        known = value in allowed
    except TypeError:  # an API caller's list is no key of a dict of choices: unknown, said so
        known = False
    if not known:
        raise ConfigError("unknown_choice", field=name, allowed=", ".join(allowed), value=value)


def _rule(key: str, **args: Any) -> dict[str, Any]:
    # A message nested in bad_number, so a page says the rule in its own language.
    return {"key": key, "args": args}


# A comparison may be run at most this many times over (--repeat, the page's Repeat ×N).
MAX_REPEAT = 10

# RunConfig's number fields: (lowest, highest), highest a Limits attribute where a server sets it.
WHOLE_FIELDS: dict[str, tuple[int, int | str]] = {
    "steps": (1, "max_steps"),
    "batch_size": (1, "max_batch_size"),
    "seed": (0, 2**32 - 1),
    "growth_interval": (1, 1_000_000),
    "max_length": (8, "max_length"),  # the model's positions for a built-in (max_length_for)
    "warmup_steps": (0, 1000),
    "trial": (0, MAX_REPEAT),  # 1..N: which repetition of a --repeat N comparison
    "watch_grads": (0, 1_000_000),  # every N steps; 0: off
}
FLOAT_FIELDS: dict[str, tuple[float, float, str | None]] = {
    "lr": (0, 100, None),  # (above lo, at most hi, hi as shown)
    "init_scale": (0, 2.0**64, "2^64"),
}
# The built-in text models' position embeddings (engine/models.py): longer fails after loading.
BUILTIN_POSITIONS = 512
MAX_LENGTH = 4096  # any other model: its positions are known only once its config loads
_WHOLE_TEXT = re.compile(r"[+-]?[0-9]{1,30}")  # '12', ' -3 ': a whole number as typed
_MAX_NUMBER_TEXT = 64  # longer text in a number field is not a number anyone typed


def max_length_for(model: str | None) -> int:
    """The longest max_length `model` can take: its positions for a built-in, else the cap."""
    entry = MODELS.get(model or "")
    if entry is not None and entry.builtin and entry.task != "regression":
        return BUILTIN_POSITIONS
    return MAX_LENGTH


def number_range(
    name: str, limits: Limits | None = None, model: str | None = None
) -> tuple[float, float]:
    """(lo, hi) a number field accepts on this server (max_length: for this model)."""
    if name == "max_length":
        return WHOLE_FIELDS[name][0], max_length_for(model)
    if name in WHOLE_FIELDS:
        lo, hi = WHOLE_FIELDS[name]
        return lo, getattr(limits or Limits.from_env(), hi) if isinstance(hi, str) else hi
    lo, hi, _ = FLOAT_FIELDS[name]
    return lo, hi


def _refusal(
    name: str, value: Any, lim: Limits, model: str | None, empty: bool = False
) -> ConfigError:
    lo, hi = number_range(name, lim, model)
    if name in WHOLE_FIELDS:
        rule = _rule("rule_whole", lo=lo, hi=hi)
    else:
        shown = FLOAT_FIELDS[name][2]
        rule = _rule("rule_above", lo=lo, hi=hi if shown is None else shown)
    if empty:
        return ConfigError("missing_number", field=name, rule=rule)
    return ConfigError("bad_number", field=name, rule=rule, value=_shown(value))


def _shown(value: Any) -> Any:
    # A refused value is quoted in one line: never 400 digits or a pasted page.
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**15:
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    if isinstance(value, str) and len(value) > _MAX_NUMBER_TEXT:
        return value[:_MAX_NUMBER_TEXT] + "…"
    return value


def check_number(
    name: str, value: Any, limits: Limits | None = None, model: str | None = None
) -> None:
    """Raise the keyed ConfigError unless `value` is what RunConfig's field `name` accepts."""
    lim = limits or Limits.from_env()
    lo, hi = number_range(name, lim, model)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if name in WHOLE_FIELDS:
        ok = number and isinstance(value, int) and lo <= value <= hi
    else:
        ok = number and math.isfinite(value) and lo < value <= hi
    if not ok:
        raise _refusal(name, value, lim, model)


def coerce_field(
    name: str, raw: Any, limits: Limits | None = None, model: str | None = None
) -> Any:
    """A raw value (the page's box, an API call, a flag) as RunConfig's field `name` holds it,
    range-checked, or a keyed ConfigError naming the field and its range."""
    lim = limits or Limits.from_env()
    if name in WHOLE_FIELDS or name in FLOAT_FIELDS:
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            raise _refusal(name, raw, lim, model, empty=True)
        value = _parse_number(name, raw)
        if value is None:
            raise _refusal(name, raw, lim, model)
        check_number(name, value, lim, model)
        return value
    if name in ON_OFF_FIELDS:
        return _parse_on_off(raw, name)
    if isinstance(raw, str):
        return raw.strip()
    return raw  # a choice or a text field of another type: validate() names it


def _parse_number(name: str, raw: Any) -> int | float | None:
    """`raw` as the number field's type; None where it is none (2.5 steps are not 2 steps)."""
    whole = name in WHOLE_FIELDS
    if isinstance(raw, str):
        text = raw.strip()
        if len(text) > _MAX_NUMBER_TEXT or (whole and not _WHOLE_TEXT.fullmatch(text)):
            return None
        try:
            number = int(text) if whole else float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None  # float() reads 'nan' and 'inf' too
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    if isinstance(raw, float):
        if not math.isfinite(raw) or (whole and not raw.is_integer()):
            return None
        return int(raw) if whole else raw
    try:
        return raw if whole else float(raw)
    except OverflowError:
        return None


def _parse_on_off(raw: Any, name: str = "loss_scaling") -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower() if isinstance(raw, str) else None
    if text in ("on", "true", "1", "yes"):
        return True
    if text in ("off", "false", "0", "no"):
        return False
    raise ConfigError("bad_number", field=name, rule=_rule("rule_on_off"), value=raw)
