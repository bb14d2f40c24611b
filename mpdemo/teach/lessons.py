"""The course's lessons: one record each, in the course's order, with settings measured
(bench/lessons.py) to show the point within a minute on a 2-core CPU. Torch-free.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..config import WEIGHTS, RunConfig, check_choice
from ..engine.machine import FAST_16BIT, cpu_flags
from ..engine.slices import SLICE_RE
from ..runs.runner import grid
from . import lesson_checks as checks
from .device_sizes import device_fields
from .lesson_checks import Reading, Trace

SHORT_EVAL_ROWS = 64  # a shortened lesson's evaluation (MPDEMO_LESSON_STEPS)


def _at_most(spec: str, rows: int) -> str:
    """'validation[:500]' as 'validation[:64]'; any other slice as it is (the engine's grammar)."""
    m = SLICE_RE.match(spec.strip())
    if m is None or m["from"] or m["to_pct"] or not m["to"] or int(m["to"]) < 0:
        return spec
    return f"{m['split']}[:{min(int(m['to']), rows)}]"


@dataclass(frozen=True)
class Lesson:
    """One lesson: the runs it trains (or the sweep it starts) and what a class looks for."""

    name: str  # the CLI's name: `python -m mpdemo lesson NAME`
    key: str  # message keys: lesson_<key>_title, _slide, _look, and _cpu where it has one
    fields: dict[str, object] = field(default_factory=dict)  # RunConfig fields it sets
    backends: tuple[str, ...] = ("torch",)
    precisions: tuple[str, ...] = ("fp32",)
    compare_scaling: bool = False  # each fp16 run also without loss scaling (the underflow one)
    weights: tuple[str, ...] = ("fp32",)  # where the weights live, one run each
    sweep: bool = False  # the size sweep (Where it pays), not a comparison of runs
    cpu_note: bool = False  # a CPU cannot show the point: lesson_<key>_cpu says so, there only
    on_page: bool = True  # whether the Train tab's picker offers it (False: the CLI's only)
    # What its runs must show, as figures (lesson_checks.py); None for the sweep.
    check: Callable[[Mapping[str, Trace]], list[Reading]] | None = None

    def settings(self, device: str | None = None) -> dict[str, object]:
        """The RunConfig fields it sets on `device` (a GPU: device_sizes.py's size over its own);
        MPDEMO_LESSON_STEPS (tests only) shortens its steps, evaluation and watch interval."""
        fields = {**self.fields, **device_fields(self.name, device)}
        short = os.environ.get("MPDEMO_LESSON_STEPS", "").strip()
        if not short.isdigit():
            return fields
        steps = int(short)
        # Evaluating 500 rows took as long as 5 steps: a shortened lesson only tests the wiring.
        eval_slice = fields.get("eval_slice", RunConfig.eval_slice)
        out = {**fields, "steps": steps, "eval_slice": _at_most(eval_slice, SHORT_EVAL_ROWS)}
        if fields.get("watch_grads"):
            out["watch_grads"] = max(1, steps // 2)
        return out

    def configs(self, device: str | None = None) -> list[RunConfig]:
        """Every run of the lesson on `device` (see settings), in the Train tab's order (its grid)."""
        base = RunConfig(**self.settings(device))
        return grid(base, self.backends, self.precisions, self.compare_scaling, self.weights)

    def values(self, device: str | None = None) -> dict[str, object]:
        """The Train tab's control values this lesson sets on `device` (RunConfig fields + the grid's)."""
        return {
            **self.settings(device),
            "backends": list(self.backends),
            "precisions": list(self.precisions),
            "compare_scaling": self.compare_scaling,
            "weights": list(self.weights),
        }


# Settings chosen so each lesson's check holds on any seed (bench/lessons.py; 2-10 s each on a
# 2-core Xeon with AVX512-FP16, 13-38 s with AVX2-only kernels).
LESSONS: dict[str, Lesson] = {
    lesson.name: lesson
    for lesson in [
        # A language model: its loss falls from the first step on every seed (last 10 / first 5
        # 0.62-0.64); tiny-bert's classifier sat at ln 2 for ~55 of 100 steps.
        Lesson(
            "still-trains",
            "still_trains",
            fields={"model": "tiny-gpt2", "steps": 60, "batch_size": 16},
            precisions=("fp32", "fp16"),
            check=checks.still_trains,
        ),
        # Unscaled, 40-97 % of tiny-bert's gradients sit below fp16's normal range; scaled,
        # 0.2-0.6 %. The loss lines need not show it (AdamW divides by the gradient's size).
        Lesson(
            "underflow",
            "underflow",
            fields={"max_length": 32, "steps": 60, "watch_grads": 20},
            precisions=("fp32", "fp16"),
            compare_scaling=True,
            check=checks.underflow,
        ),
        # The scale grows every 5 clean steps until a step overflows: 11-13 skipped steps.
        Lesson(
            "loss-scaling",
            "loss_scaling",
            fields={"max_length": 32, "steps": 80, "init_scale": 2.0**20, "growth_interval": 5},
            precisions=("fp16",),
            check=checks.loss_scaling,
        ),
        # AdamW moves each weight by about lr, under half a bf16 ulp above ~2^-1: pure bf16 ends
        # 0.085-0.093 above the fp32 master, stochastic rounding within 0.01 (lr 1e-4: gap 0.03).
        Lesson(
            "master-weights",
            "master_weights",
            fields={
                "model": "tiny-gpt2",
                "lr": 1e-3,
                "steps": 60,
                "batch_size": 16,
                "lost_updates": True,
            },
            precisions=("bf16",),
            weights=WEIGHTS,
            check=checks.master_weights,
        ),
        # On a CPU fp16 through Accelerate or the Trainer runs fp32: bf16 is applied by all three.
        Lesson(
            "backends",
            "backends",
            fields={"max_length": 32, "steps": 80},
            backends=("torch", "accelerate", "trainer"),
            precisions=("bf16",),
            cpu_note=True,
            check=checks.backends,
        ),
        # A CPU without fast 16-bit instructions shows no speed-up at any size.
        Lesson("where-it-pays", "where_it_pays", sweep=True, cpu_note=True),
    ]
}
DEFAULT_LESSON = "still-trains"  # the page's opening comparison is the first lesson


def cpu_note_here(lesson: Lesson, on_cpu: bool) -> bool:
    """Whether "this machine cannot show it" holds: a CPU (the sweep: one without fast 16-bit)."""
    if not (lesson.cpu_note and on_cpu):
        return False
    if lesson.sweep:
        flags = cpu_flags()  # torch's probes: asked only when the sentence may show
        return not any(flags.get(f) for f in FAST_16BIT)
    return True


def get(name: str, among: list[str] | None = None) -> Lesson:
    """The lesson called `name` (among `among`, default all), or ConfigError naming them."""
    check_choice("lesson", name, LESSONS if among is None else among)
    return LESSONS[name]


def trained_names() -> list[str]:
    """The lessons that train runs, in the course's order (the size sweep is the page's)."""
    return [n for n, x in LESSONS.items() if not x.sweep]


def once(configs: list[RunConfig]) -> list[RunConfig]:
    """One repetition of a grid (a repeated comparison's runs carry their trial)."""
    return [c.replace(trial=0) for c in configs if c.trial <= 1]


def lesson_of(configs: list[RunConfig], any_device: bool = False) -> Lesson | None:
    """The lesson whose runs these are (one repetition of them, at a CPU's or a GPU's size), if
    any; `any_device`: whatever device each run asked for (a notebook picks its own)."""
    runs = lambda cs: [c.replace(device="auto") if any_device else c for c in once(cs)]  # noqa: E731
    want = runs(configs)
    trained = (x for x in LESSONS.values() if not x.sweep)
    return next((x for x in trained for k in ("cpu", "cuda") if runs(x.configs(k)) == want), None)
