"""What a sweep's points say: each size's verdict series, the crossover sentence, the runs file and CSV rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..engine.machine import machine_info
from ..messages import Note
from ..registry import PRECISION_NAMES
from ..runs.timing import VERDICTS, SpeedCheck
from .events import SweepMemory, SweepPoint
from .spec import FLOPS_RULE, SWEEP_VERSION, SweepSpec

# One size in a batch's series: (params, size name, verdict, its SpeedCheck against fp32).
Cell = tuple[int, str, str, SpeedCheck]


def _m(params: int) -> float:
    return params / 1e6


def breakdown(s: Sequence[Cell]) -> dict[str, object]:
    """'slower at 64x2, 128x2; the same as fp32 at 256x4' as a nested message, each part holding
    the next as its `rest`."""
    out: dict[str, object] | None = None
    for v in reversed(VERDICTS):
        sizes = ", ".join(n for _, n, x, _ in s if x == v)
        if sizes and out is None:
            out = {"key": f"at_{v}", "args": {"sizes": sizes}}
        elif sizes:
            out = {"key": f"at_{v}_then", "args": {"sizes": sizes, "rest": out}}
    assert out is not None, "a breakdown of no sizes"
    return out


def series(points: Iterable[SweepPoint], precision: str) -> dict[int, list[Cell]]:
    """{batch: [(params, size name, verdict, check), ...] by params} for one precision."""
    out: dict[int, list[Cell]] = {}
    for p in points:
        c = p.check(precision)
        if c is not None:
            cell = (p.params, f"{p.hidden}x{p.layers}", c.verdict, c)
            out.setdefault(p.batch_size, []).append(cell)
    return {b: sorted(v, key=lambda x: x[:2]) for b, v in sorted(out.items())}


def classify(verdicts: Sequence[str]) -> tuple[str, int | None]:
    """(always | never | never_unsure | unsure | from | mixed, where 'from' starts) for one batch's
    verdicts by size."""
    faster = [v == "faster" for v in verdicts]
    if all(faster):
        return "always", 0
    if not any(faster):
        if all(v == "unsure" for v in verdicts):
            return "unsure", None
        return ("never_unsure" if "unsure" in verdicts else "never"), None
    k = faster.index(True)
    if all(faster[k:]):
        return "from", k
    return "mixed", None


def crossover_notes(
    points: Sequence[SweepPoint], device: str, recorded_on: str | None = None
) -> list[Note]:
    """Where each precision paid, from the points' verdicts only; `recorded_on` names the machine
    of a recorded sweep ("H200"), so its sentences say "on the H200", never "here"."""
    precisions = [q for q in PRECISION_NAMES if any(q in p.checks for p in points)]
    kind_name = "GPU" if device == "cuda" else device.upper()
    there = {"key": "sweep_on_recorded", "args": {"machine": recorded_on}} if recorded_on else None
    this = there or {"key": "sweep_on_this", "args": {"device": kind_name}}
    here = there or {"key": "sweep_here", "args": {}}
    out: list[Note] = []
    for precision in precisions:
        by_batch = series(points, precision)
        kinds = {b: classify([v for _, _, v, _ in s]) for b, s in by_batch.items()}
        every = [x for s in by_batch.values() for x in s]
        for kind in ("never", "always"):
            if len(by_batch) > 1 and all(k == kind for k, _ in kinds.values()):
                # By params alone: one size at two batches ties on (params, name, verdict), and
                # a tuple compare would go on to the SpeedChecks, which do not order.
                lo, hi = min(x[0] for x in every), max(x[0] for x in every)
                args = {"precision": precision, "where": this, "points": len(every),
                        "lo_m": _m(lo), "hi_m": _m(hi)}  # fmt: skip
                one = args["lo_m"] == args["hi_m"]  # one size: "(0.19 to 0.19 M)" read oddly
                out.append(Note(f"pays_{kind}_anywhere" + ("_one" if one else ""), args))
                break
        else:
            for batch, s in by_batch.items():
                out.append(_series_note(precision, batch, s, kinds[batch], here))
    # fp8 is not a sweep precision: one line says why, where it could run (this GPU's sweep).
    if device == "cuda" and recorded_on is None:
        out.append(Note("sweep_fp8_compile_off", {}))
    return out


def _series_note(
    precision: str,
    batch: int,
    s: Sequence[Cell],
    kind: tuple[str, int | None],
    where: dict[str, object],
) -> Note:
    name, k = kind
    args: dict[str, object] = {
        "precision": precision,
        "where": where,
        "batch": batch,
        "sizes": ", ".join(n for _, n, _, _ in s),
        "hi_m": _m(s[-1][0]),
        "breakdown": breakdown(s),
    }
    if name == "from":
        assert k is not None
        params, size, _, check = s[k]
        args.update(from_m=_m(params), size=size, speedup=check.speedup, low=check.low,
                    high=check.high, breakdown=breakdown(s[:k]))  # fmt: skip
    return Note(f"pays_{name}", args)


def sweep_document(
    points: Sequence[SweepPoint],
    memory: SweepMemory | None,
    machine: Mapping[str, object] | None = None,
    spec: SweepSpec | None = None,
    status: str | None = None,
    notes: Sequence[Mapping[str, object]] | None = None,
) -> dict[str, object]:
    """The --json document: version, machine, one row per point and precision, memory."""
    doc: dict[str, object] = {
        "version": SWEEP_VERSION,
        "machine": dict(machine or machine_info()),
        "flops_rule": FLOPS_RULE,
        "points": [row for p in points for row in p.rows()],
        "memory": {},
    }
    if spec is not None:
        doc["spec"] = spec.to_dict()
    if status is not None:
        doc["status"] = status
    if notes is not None:
        doc["crossover"] = [dict(n) for n in notes]
    if memory is not None:
        doc["memory"] = {
            p: {
                "weights_bytes": a["weights_bytes"],
                "grads_bytes": a["grads_bytes"],
                "optimizer_bytes": a["optimizer_bytes"],
                "saved_activation_bytes": a["saved_activation_bytes"],
                "peak_mem_bytes": a["peak_mem_bytes"],
                "accelerate_estimate_bytes": (memory.estimate.get(p) or {}).get("training"),
            }
            for p, a in memory.parts.items()
        }
        doc["memory_of"] = memory.shape()
    return doc


CSV_COLUMNS = (
    "model", "params", "hidden", "layers", "batch_size", "seq", "precision", "step_s",
    "speedup_vs_fp32", "speedup_low", "speedup_high", "speed_verdict", "speed_reason", "rounds",
    "samples_per_s", "tflops", "mfu", "device",
)  # fmt: skip


def csv_rows(points: Sequence[SweepPoint]) -> list[dict[str, object]]:
    """The points as flat CSV rows (the interval split into low and high)."""
    out = []
    for p in points:
        for row in p.rows():
            iv = row.pop("speedup_interval") or [None, None]
            row["speedup_low"], row["speedup_high"] = iv
            out.append({k: row.get(k) for k in CSV_COLUMNS})
    return out


def params_label(params: int) -> str:
    """'3.6 M', '191 k': a size for a table cell."""
    if params >= 1e6:
        return f"{params / 1e6:.3g} M"
    return f"{params / 1e3:.3g} k"
