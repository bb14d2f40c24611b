"""The course's lessons: one record each, in the course's order; the Train tab and the CLI run them.

A lesson is a comparison chosen for one point of the course's slides (/work/shared/seeds/):
its model, batch, sequence length, learning rate and steps are picked, and measured
(bench/lessons.py), so the point shows within about a minute on a 2-core CPU, never by cutting
steps below what the point needs. Its words are message keys (`lesson_<key>_title`, `_slide`,
`_look`, `_cpu`), English in mpdemo.messages, the page's languages in mpdemo/ui/locales.

A new lesson is one record in LESSONS (or `register(...)` from another module: the numerics
branch's `master-weights` lesson comes from mpdemo/teach/master_weights.py). Torch-free.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..config import RunConfig
from ..engine.slices import SLICE_RE
from ..messages import ConfigError
from ..runs.runner import grid
from . import master_weights as mw
from .device_sizes import device_fields

SHORT_EVAL_ROWS = 64  # a shortened lesson's evaluation (MPDEMO_LESSON_STEPS)


def _at_most(spec: str, rows: int) -> str:
    """'validation[:500]' as 'validation[:64]'; any other slice as it is (read with the
    engine's own grammar, mpdemo.engine.slices)."""
    m = SLICE_RE.match(spec.strip())
    if m is None or m["from"] or m["to_pct"] or not m["to"] or int(m["to"]) < 0:
        return spec
    return f"{m['split']}[:{min(int(m['to']), rows)}]"


@dataclass(frozen=True)
class Lesson:
    """One lesson: the runs it trains (or the sweep it starts) and what a class looks for."""

    name: str  # the CLI's name: `python -m mpdemo lesson NAME`
    key: str  # message keys: lesson_<key>_title, _slide, _look, and _cpu where it has one
    fields: dict[str, Any] = field(default_factory=dict)  # RunConfig fields it sets
    backends: tuple[str, ...] = ("torch",)
    precisions: tuple[str, ...] = ("fp32",)
    compare_scaling: bool = False  # each fp16 run also without loss scaling (the underflow one)
    # Where the weights live, one run each (RunConfig.weights: the master-weights lesson's
    # fp32 master copy against pure bf16, with and without stochastic rounding).
    weights: tuple[str, ...] = ("fp32",)
    sweep: bool = False  # the size sweep (Where it pays), not a comparison of runs
    # Where a CPU cannot show the point (no fast 16-bit path; fp16 through Accelerate or the
    # Trainer runs fp32 there), lesson_<key>_cpu says so in one sentence, on a CPU only.
    cpu_note: bool = False
    # Whether the Train tab's lesson picker offers it (False: the command line's only).
    on_page: bool = True

    def settings(self, device: str | None = None) -> dict[str, Any]:
        """The RunConfig fields it sets on `device` (a resolved device, e.g. 'cuda'; None or a
        CPU: its own fields; a GPU: teach/device_sizes.py's size over them). MPDEMO_LESSON_STEPS
        shortens every lesson (tests only: the browser tests run each lesson in seconds, not a
        minute): its steps, its evaluation (at most SHORT_EVAL_ROWS rows), and a watched lesson
        then watches at its middle step and its last, as the full lesson watches twice."""
        fields = {**self.fields, **device_fields(self.name, device)}
        short = os.environ.get("MPDEMO_LESSON_STEPS", "").strip()
        if not short.isdigit():
            return fields
        steps = int(short)
        # A few steps' run spent as long again evaluating 500 rows (fp16 on an AVX2-only CPU:
        # 2.0 s for 5 steps, 2.1 s for the evaluation): a shortened lesson tests the wiring.
        eval_slice = fields.get("eval_slice", RunConfig.eval_slice)
        out = {**fields, "steps": steps, "eval_slice": _at_most(eval_slice, SHORT_EVAL_ROWS)}
        if fields.get("watch_grads"):
            out["watch_grads"] = max(1, steps // 2)
        return out

    def configs(self, device: str | None = None) -> list[RunConfig]:
        """Every run of the lesson on `device` (see settings), in the Train tab's order (its grid)."""
        base = RunConfig(**self.settings(device))
        return grid(base, self.backends, self.precisions, self.compare_scaling, self.weights)

    def values(self, device: str | None = None) -> dict[str, Any]:
        """The Train tab's control values this lesson sets on `device` (RunConfig fields + the grid's)."""
        return {
            **self.settings(device),
            "backends": list(self.backends),
            "precisions": list(self.precisions),
            "compare_scaling": self.compare_scaling,
            "weights": list(self.weights),
        }


# Steps and sizes, measured with bench/lessons.py (loss-fall ratio: a run's mean loss over its
# last 5 steps over its first 5) on a 2-core EPYC, loaded by other work (so no wall time here;
# DESIGN.md's "Facts" has the AVX2-only CPU's step times: tiny-bert batch 32 x 64, fp32 40-54 ms,
# fp16 ~390 ms, bf16 ~340 ms a step; 32 tokens about halve the 16-bit ones).
LESSONS: dict[str, Lesson] = {
    lesson.name: lesson
    for lesson in [
        # The first click: fp32 against fp16 with its GradScaler (the course's listing), so the
        # loss-scale plot has a line. tiny-bert's loss starts to fall after ~55 steps at lr 1e-3;
        # at 100 steps both runs end near 0.3 from 0.69 (ratio < 0.7, the bar is 0.85).
        Lesson("still-trains", "still_trains", precisions=("fp32", "fp16")),
        # fp16 without loss scaling against fp16 with it, and fp32. Measured at 32 tokens, lr
        # 1e-3, 80 steps: fp32 0.70 and scaled fp16 0.70, unscaled fp16 0.875 (last 5 steps
        # 0.61 against 0.48). At lr 3e-3 and 64 tokens the unscaled run stalled (1.00) but the
        # others fell only to 0.91-0.92 in 60 steps: a faint lesson. 32 tokens: the point is the
        # gradients' magnitudes, not the length, and three runs fit the minute.
        Lesson(
            "underflow",
            "underflow",
            # Every 20 steps each layer's gradients as the scaler sees them (--watch-grads): the
            # JSON's grad_histograms show the unscaled run's share flushed to zero.
            fields={"max_length": 32, "steps": 80, "watch_grads": 20},
            precisions=("fp32", "fp16"),
            compare_scaling=True,
        ),
        # The scale grows every 5 clean steps from 2^20 until a step overflows: that step is
        # skipped and the scale halves. Measured at 32 tokens, 80 steps: 13 skipped steps, the
        # scale between 2^18 and 2^21, loss ratio 0.85 (the preset's 2^16 / 10 steps: 6 skips).
        Lesson(
            "loss-scaling",
            "loss_scaling",
            fields={"max_length": 32, "steps": 80, "init_scale": 2.0**20, "growth_interval": 5},
            precisions=("fp16",),
        ),
        # One flag through the three backends. On a CPU fp16 through Accelerate or the Trainer
        # runs fp32 (no autocast, no scaler): bf16 is the flag all three apply there.
        Lesson(
            "backends",
            "backends",
            fields={"max_length": 32, "steps": 80},
            backends=("torch", "accelerate", "trainer"),
            precisions=("bf16",),
            cpu_note=True,
        ),
        # The size sweep beside the published figures (the Where it pays tab). A CPU without
        # bf16 instructions shows no speed-up at any size; the shipped CPU recording does not
        # either (bf16 1.01x fp32 on an AVX512-BF16 EPYC), so the published GPU figures beside
        # the sweep are what shows it, and the sentence says so.
        Lesson("where-it-pays", "where_it_pays", sweep=True, cpu_note=True),
    ]
}
# The fp32 master copy against pure bf16 weights, with and without stochastic rounding of the
# update: teach/master_weights.py chose and measured its settings (tiny-gpt2, lr 1e-4, 60 steps).
LESSONS_AFTER_SCALING = "loss-scaling"
DEFAULT_LESSON = "still-trains"  # the page's opening comparison is the first lesson


FAST_16BIT_FLAGS = ("avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16")


def cpu_note_here(lesson: Lesson, on_cpu: bool) -> bool:
    """Whether the lesson's "this machine cannot show it" sentence is true here: it trains on a
    CPU and, for the sweep, that CPU has no bf16 or fp16 instructions (torch's probes)."""
    if not (lesson.cpu_note and on_cpu):
        return False
    if lesson.sweep:
        from ..engine.machine import cpu_flags  # torch: asked only when the sentence may show

        flags = cpu_flags()
        return not any(flags.get(f) for f in FAST_16BIT_FLAGS)
    return True


def register(lesson: Lesson, after: str | None = None) -> None:
    """Add a lesson (another module's: teach/master_weights.py), after `after` or last."""
    items = list(LESSONS.items())
    at = next((i + 1 for i, (n, _) in enumerate(items) if n == after), len(items))
    items.insert(at, (lesson.name, lesson))
    LESSONS.clear()
    LESSONS.update(items)


def get(name: str) -> Lesson:
    """The lesson called `name`, or ConfigError naming the lessons there are."""
    if name not in LESSONS:
        raise ConfigError("unknown_choice", field="lesson", allowed=", ".join(LESSONS), value=name)
    return LESSONS[name]


def _master_weights() -> Lesson:
    return Lesson(
        mw.NAME,
        "master_weights",
        fields={"model": mw.MODEL, "lr": mw.LR, "steps": mw.STEPS, "batch_size": mw.BATCH,
                "lost_updates": True},
        precisions=("bf16",),
        weights=mw.RECIPES,
    )  # fmt: skip


register(_master_weights(), after=LESSONS_AFTER_SCALING)
