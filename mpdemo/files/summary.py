"""One run's result as a type that still reads as the mapping it was (`s["final_loss"]`), so
scripts keep working; `to_dict()` is its JSON form."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from ..colours import trial_of
from ..runs.timing import SpeedCheck


def _when_set() -> Any:
    """A key left out of to_dict() while None (a completed run's JSON has no "error")."""
    return field(default=None, metadata={"when_set": True})


@dataclass(frozen=True, kw_only=True)
class Summary(Mapping[str, Any]):
    """What one run measured: the end event carries it, the table shows it, the files hold it."""

    label: str
    backend: str
    precision: str
    device: str | None = None
    model: str | None = None
    dataset: str | None = None  # "random" for the regression recipe's tensors
    requested_dtype: str | None = None
    effective_dtype: str | None = None  # what the weights' gradients and matmuls really ran in
    params: int | None = None
    steps: int = 0
    skipped_steps: int = 0
    final_loss: float | None = None
    mean_step_s: float | None = None  # warm-up steps left out
    # The typical step: a stall of another process moved the mean by up to 2x, the median a few %.
    median_step_s: float | None = None
    samples_per_s: float | None = None  # batch / median step (/ mean step in older files)
    tokens_per_s: float | None = None
    step_time_cv: float | None = None  # stdev / mean of the timed steps (stalls included)
    step_time_mad: float | None = None  # median absolute deviation / median: the steps' spread
    saved_activation_bytes: int | None = None  # kept for backward in one step, any device
    peak_mem_bytes: int | None = None  # CUDA only: torch.cuda.max_memory_allocated
    peak_mem_kind: str | None = None
    final_loss_scale: float | None = None
    status: str = "completed"  # completed | stopped | diverged | failed
    train_rows: int | None = None
    eval_rows: int | None = None
    processes: int = 1
    elapsed_s: float | None = None
    warnings: list[str] = field(default_factory=list)  # English sentences
    warning_keys: list[dict[str, object]] = field(default_factory=list)  # any language's
    eval_loss: float | None = None
    eval_accuracy: float | None = _when_set()  # classifiers that were evaluated
    error: str | None = _when_set()  # a run that could not start: why, in one line
    error_detail: str | None = _when_set()  # a traceback, for a bug (never for bad input)
    fp8_audit: dict[str, object] | None = _when_set()  # which Linear layers ran as Float8Linear
    # with_speedups, from the interleaved measurement against fp32 (SpeedCheck).
    speedup_vs_fp32: float | None = _when_set()
    speedup_interval: list[float] | None = _when_set()
    speed_verdict: str | None = _when_set()
    speed_reason: str | None = _when_set()  # too_few | busy | wide | not_interleaved | ran_fp32
    speed_check: dict[str, object] | None = _when_set()  # the SpeedCheck, for its sentence
    speedup_same_maths: bool | None = _when_set()  # asked for fp16/bf16, computed in fp32
    machine: str | None = _when_set()  # a recorded run's machine tag ("H200")
    extra: dict[str, object] = field(default_factory=dict)  # a file's keys this version lacks

    # --- the mapping it reads as ------------------------------------------------------------
    def to_dict(self) -> dict[str, object]:
        """The JSON form: every key, in the order of the declaration, then a file's extra keys."""
        out: dict[str, object] = {}
        for f in fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if value is None and f.metadata.get("when_set"):
                continue
            out[f.name] = list(value) if isinstance(value, list) else value
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    @cached_property
    def _view(self) -> dict[str, object]:
        # Built once: a table reads ~25 keys of every summary (frozen allows cached_property).
        return self.to_dict()

    def __getitem__(self, key: str) -> Any:
        return self._view[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._view)

    def __len__(self) -> int:
        return len(self._view)

    def replace(self, **changes: object) -> Summary:
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    # --- builders -----------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Summary:
        """A summary from its JSON form (a runs file, the browser's store); unknown keys kept."""
        if isinstance(data, Summary):
            return data
        names = {f.name for f in fields(cls)} - {"extra"}
        known = {k: v for k, v in data.items() if k in names}
        backend, precision = str(data.get("backend") or ""), str(data.get("precision") or "")
        known.setdefault("label", f"{backend} · {precision}")
        known.update(backend=backend, precision=precision)
        for key in ("warnings", "warning_keys"):
            known[key] = list(known.get(key) or [])
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**known, extra=extra)

    @classmethod
    def failed(
        cls, *, label: str, backend: str, precision: str, note: object, detail: str | None = None
    ) -> Summary:
        """A run that could not even start (bad model, unreachable Hub...): why, and no figures."""
        return cls(
            label=label,
            backend=backend,
            precision=precision,
            status="failed",
            warnings=[note.text],
            warning_keys=[note.to_dict()],
            error=note.text,
            error_detail=detail,
        )


# --- speed-ups: a run against its backend's fp32 run ---------------------------------------------


def peers(s: Mapping[str, object]) -> tuple[Any, ...]:
    """What a run is compared within: a file's bf16 run against that file's fp32 run."""
    return (s.get("backend"), s.get("model"), s.get("machine"), s.get("source"))


def typical_step_s(s: Mapping[str, object]) -> float | None:
    """A run's typical step in seconds: the median of its timed steps (the mean in older files)."""
    return s.get("median_step_s") or s.get("mean_step_s")


def fp32_runs(summaries: Iterable[Mapping[str, Any]]) -> dict[tuple[Any, ...], Any]:
    """Each peer group's fp32 run that timed its steps: what its other runs are measured against."""
    return {
        peers(s): s
        for s in summaries
        if s.get("precision") == "fp32" and s.get("status") != "failed" and typical_step_s(s)
    }


def _speed_fields(s: Summary, ref: Summary | None) -> dict[str, object]:
    """A run's speed-up fields, by the one rule (mpdemo.runs.timing.verdict) from one measurement."""
    if s.precision == "fp32":
        return {"speedup_vs_fp32": 1.0 if typical_step_s(s) else None}
    if s.status == "failed" or not typical_step_s(s):
        return {}
    if s.effective_dtype == "fp32":  # fp16 through Accelerate or the Trainer on a CPU
        return {
            "speedup_vs_fp32": None,
            "speedup_interval": None,
            "speed_verdict": "same",
            "speed_reason": "ran_fp32",
            "speed_check": None,
            "speedup_same_maths": True,
        }
    if s.speed_check and s.speed_verdict is None:  # its runner's interleaved measurement
        check = SpeedCheck.from_dict(s.speed_check)
        return {
            "speedup_vs_fp32": check.speedup,
            "speedup_interval": check.interval,
            "speed_verdict": check.verdict,
            "speed_reason": check.reason,
            "speed_check": check.to_dict(),
        }
    if s.speed_verdict is not None:  # measured when it ran (a runs file): it stands
        return {}
    ref_step = typical_step_s(ref) if ref is not None else None
    if not ref_step:
        return {}
    # Not interleaved (an older file): the ratio of the medians is shown, no verdict drawn from it.
    return {
        "speedup_vs_fp32": ref_step / typical_step_s(s),
        "speed_verdict": "unsure",
        "speed_reason": "not_interleaved",
    }


def with_speedups(summaries: Iterable[Mapping[str, object]]) -> list[Summary]:
    """The summaries with their speed-up against fp32, verdict and interval: from their runner's
    check, else as recorded, else its peer fp32 run's median step over its own, "unsure"."""
    runs = [Summary.from_dict(s) for s in summaries]
    base = fp32_runs(runs)
    return [s.replace(**_speed_fields(s, base.get(peers(s)))) for s in runs]


def oriented(
    speedup: float, interval: Sequence[float] | None = None
) -> tuple[float, tuple[float, float] | None, bool]:
    """(N >= 1, its interval, slower?): a speed-up of 0.54 reads "1.85× slower" everywhere."""
    slower = speedup < 1
    ratio = 1 / speedup if slower and speedup > 0 else speedup
    if not (interval and all(interval)):
        return ratio, None, slower
    lo, hi = sorted(1 / x if slower else x for x in interval)
    return ratio, (lo, hi), slower


def ratio_text(
    speedup: float, interval: Sequence[float] | None = None, verdict: str | None = None
) -> str:
    """'1.52x [1.41-1.60] faster', '1.85x slower (unsure)': every ratio the CLI prints."""
    ratio, iv, slower = oriented(speedup, interval)
    span = f" [{iv[0]:.2f}-{iv[1]:.2f}]" if iv else ""
    # same or unsure: the interval did not decide, said beside the figure
    undecided = f" ({verdict})" if verdict in ("same", "unsure") else ""
    return f"{ratio:.2f}x{span} {'slower' if slower else 'faster'}{undecided}"


def speedup_text(s: Mapping[str, object]) -> str:
    """A run's 'vs fp32' cell: its ratio_text, 'ran in fp32', '1.00x' (fp32 itself) or '-'."""
    if s.get("speed_reason") == "ran_fp32":
        return "ran in fp32"
    v = s.get("speedup_vs_fp32")
    if v is None:
        return "-"
    if s.get("precision") == "fp32" or not v:
        return f"{v:.2f}x"  # the baseline against itself
    return ratio_text(v, s.get("speedup_interval"), s.get("speed_verdict"))


def repeat_groups(summaries: Iterable[Summary]) -> list[list[Summary]]:
    """The runs of a repeated comparison grouped by what was repeated."""
    groups: dict[str, list[Summary]] = {}
    for s in summaries:
        groups.setdefault(trial_of(s.label)[0], []).append(s)
    return list(groups.values())


def scale_text(v: float | None) -> str:
    """A loss scale exactly: 65536, 0.5; powers of two from 2^20 up as 2^k."""
    if v is None:
        return "-"
    if v > 0 and math.isfinite(v):
        exp = math.log2(v)
        if exp == int(exp) and exp >= 20:
            return f"2^{int(exp)}"
        if v == int(v):
            return str(int(v))
    return repr(float(v))


def plain(summary: Mapping[str, object]) -> dict[str, object]:
    """A summary as a plain dict (JSON, the browser's store), whichever form it came in."""
    return summary.to_dict() if isinstance(summary, Summary) else dict(summary)
