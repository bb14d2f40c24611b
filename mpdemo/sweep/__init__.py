"""The size sweep: where mixed precision pays on this machine (model size x batch size).

spec (the plan's records and estimates) -> plan (sized models, the grid checked on the device)
-> run (each point's precisions timed interleaved) -> events (what streams) -> notes (the
crossover sentence, files). `sizes`, `spec` and `notes` are torch-free; plan and run import torch,
so this package exposes their names lazily (PEP 562): importing mpdemo.sweep costs nothing until
a name is used.
"""

from __future__ import annotations

import importlib
from typing import Any

from .. import engine

_WHERE = {
    "BATCHES_PER_POINT": "plan",
    "CSV_COLUMNS": "notes",
    "DEFAULT_BUDGET_S": "sizes",
    "DEFAULT_SIZES": "sizes",
    "FLOPS_RULE": "spec",
    "MAX_POINTS": "sizes",
    "MAX_SWEEP_S_HOSTED": "spec",
    "MAX_SWEEP_S_LOCAL": "spec",
    "MEMORY_SHARE": "spec",
    "PEAK_TFLOPS": "plan",
    "POINT_CAP_S": "spec",
    "PROBE_S": "plan",
    "PROBE_TOKENS": "plan",
    "PointPlan": "spec",
    "SWEEP_VERSION": "spec",
    "Size": "sizes",
    "SweepEvent": "events",
    "SweepFinished": "events",
    "SweepMemory": "events",
    "SweepPlan": "spec",
    "SweepPlanned": "events",
    "SweepPoint": "events",
    "SweepRunner": "run",
    "SweepSpec": "spec",
    "VERDICT_ORDER": "notes",
    "activation_bytes": "spec",
    "breakdown": "notes",
    "build_model": "plan",
    "classify": "notes",
    "crossover_notes": "notes",
    "crossover_text": "notes",
    "csv_rows": "notes",
    "default_precisions": "plan",
    "exclusive": "run",
    "fitting_budget": "spec",
    "free_memory_bytes": "plan",
    "log10_params": "notes",
    "max_sweep_s": "spec",
    "memory_estimate": "spec",
    "params_label": "notes",
    "parse_batch_sizes": "sizes",
    "parse_sizes": "sizes",
    "peak_tflops": "plan",
    "plan_sweep": "plan",
    "probe_rates": "plan",
    "run_sweep": "run",
    "series": "notes",
    "size_params": "plan",
    "sized_config": "plan",
    "step_flops": "spec",
    "steppers": "run",
    "sweep": "run",
    "sweep_document": "notes",
}


def __getattr__(name: str) -> Any:
    if name == "Anatomy":
        return engine.Anatomy
    if name in _WHERE:
        return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    raise AttributeError(name)
