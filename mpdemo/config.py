"""RunConfig: one frozen record of a run's settings, built by the UI or CLI, stored with the run."""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, fields
from typing import Any

from .catalog import BACKENDS, DEFAULT_DATASET, DEFAULT_MODEL, DEVICES, PRECISIONS
from .messages import ConfigError

MAX_TEXT = 512  # longest model id / path / slice string accepted from a person


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    try:
        return int(raw) if raw.strip() else default
    except ValueError:
        return default


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
        base = (
            cls(2_000, 128, 150_000_000, 20, False, True) if hosted else cls()
        )  # hosted: a free CPU Space has 2 vCPUs and 16 GB
        paths_raw = os.environ.get("MPDEMO_ALLOW_LOCAL_PATHS")
        return cls(
            max_steps=_env_int("MPDEMO_MAX_STEPS", base.max_steps),
            max_batch_size=_env_int("MPDEMO_MAX_BATCH_SIZE", base.max_batch_size),
            max_params=_env_int("MPDEMO_MAX_PARAMS", base.max_params),
            max_queue=_env_int("MPDEMO_MAX_QUEUE", base.max_queue),
            allow_local_paths=(
                base.allow_local_paths if paths_raw is None else paths_raw not in ("0", "false")
            ),
            hosted=hosted,
        )


@dataclass(frozen=True)
class RunConfig:
    """Everything that defines one run. Field names are the CLI's flags in snake case."""

    model: str = DEFAULT_MODEL
    dataset: str = DEFAULT_DATASET
    train_slice: str = "train[:2000]"
    eval_slice: str = "validation[:500]"
    backend: str = "torch"
    precision: str = "fp32"
    device: str = "auto"
    steps: int = 100
    batch_size: int = 32
    lr: float = 1e-3
    seed: int = 0
    loss_scaling: bool = True
    init_scale: float = 2.0**16
    growth_interval: int = 2000
    max_length: int = 64
    warmup_steps: int = 3  # steps left out of timing averages
    # Which repetition of a comparison run `--repeat N` times this is (1..N); 0: not repeated.
    trial: int = 0

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
            # JSON writes 65536.0 back as 65536: a float field gets its float again, so a
            # restored run's script says init_scale=65536.0 like the run's own.
            if isinstance(out[k], int) and not isinstance(out[k], bool):
                out[k] = float(out[k])
        return cls(**out)

    @property
    def scales_loss(self) -> bool:
        """Whether a GradScaler guards this run (fp16 with loss scaling on)."""
        from .registry import PRECISIONS

        p = PRECISIONS.get(self.precision)
        return bool(p is not None and p.needs_scaler and self.loss_scaling)

    @property
    def unscaled(self) -> bool:
        """fp16 with loss scaling off: a scale of one, the underflow lesson's run."""
        from .registry import PRECISIONS

        p = PRECISIONS.get(self.precision)
        return bool(p is not None and p.needs_scaler and not self.loss_scaling)

    @property
    def label(self) -> str:
        """How the run is named in plots and tables, e.g. 'torch · bf16'.

        fp16 without loss scaling is 'torch · fp16 · S=1' (a scale of one), so it can stand
        next to the scaled fp16 run of the same backend.
        """
        label = f"{self.backend} · {self.precision}" + (" · S=1" if self.unscaled else "")
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
        _choice("backend", self.backend, BACKENDS)
        _choice("precision", self.precision, PRECISIONS)
        _choice("device", self.device, DEVICES)
        _int_range("steps", self.steps, 1, lim.max_steps)
        _int_range("batch_size", self.batch_size, 1, lim.max_batch_size)
        _int_range("seed", self.seed, 0, 2**32 - 1)
        _int_range("growth_interval", self.growth_interval, 1, 1_000_000)
        _int_range("max_length", self.max_length, 8, 4096)
        _int_range("warmup_steps", self.warmup_steps, 0, 1000)
        _float_range("lr", self.lr, 0, 100)
        _float_range("init_scale", self.init_scale, 0, 2.0**64, shown_hi="2^64")
        if not isinstance(self.loss_scaling, bool):
            raise ConfigError(
                "bad_number",
                field="loss_scaling",
                rule=_rule("rule_on_off"),
                value=self.loss_scaling,
            )
        return self


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError("unknown_choice", field=name, allowed=", ".join(allowed), value=value)


def _rule(key: str, **args: Any) -> dict[str, Any]:
    # A rule is a message of its own (mpdemo/messages.py), nested in bad_number: the English
    # reads "steps must be a whole number from 1 to 20,000", a Spanish page says the rule in
    # Spanish with "20.000".
    return {"key": key, "args": args}


def _int_range(name: str, value: Any, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ConfigError(
            "bad_number", field=name, rule=_rule("rule_whole", lo=lo, hi=hi), value=value
        )


def _float_range(name: str, value: Any, lo: int, hi: float, shown_hi: str | None = None) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not lo < value <= hi:
        rule = _rule("rule_above", lo=lo, hi=hi if shown_hi is None else shown_hi)
        raise ConfigError("bad_number", field=name, rule=rule, value=value)
