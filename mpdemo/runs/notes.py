"""The sentences rendered from the runs' measurements, as keyed Notes for the CLI and the page."""

from __future__ import annotations

from typing import Any

from ..engine.machine import hardware_reason, machine_info
from ..files.summary import fp32_runs, oriented, peers, typical_step_s
from ..messages import Note
from .timing import SpeedCheck, runs_interval


def check_note(check: SpeedCheck, machine: dict[str, Any], device: str) -> Note:
    """The sentence of one SpeedCheck (every speed sentence is this one) and the hardware's why."""
    args: dict[str, Any] = {
        "precision": check.precision,
        "ms": (check.step_s or 0.0) * 1000,
        "fp32_ms": (check.baseline_step_s or 0.0) * 1000,
        "rounds": check.rounds,
        "why": hardware_reason(machine, check.precision, device),
    }
    if check.speedup is not None and check.low is not None and check.high is not None:
        args.update(speedup=check.speedup, low=check.low, high=check.high)
    if check.verdict in ("faster", "same"):
        return Note(f"speed_{check.verdict}", args)
    if check.verdict == "slower":  # "1.9x slower (1.7-2.2x)": the speed-up turned round
        ratio, (low, high), _ = oriented(check.speedup, check.interval)
        return Note("speed_slower", {**args, "ratio": ratio, "ratio_low": low, "ratio_high": high})
    why = check.reason or "wide"
    reason: dict[str, Any] = {"key": f"unsure_{why}", "args": {"rounds": check.rounds}}
    if why == "busy":
        reason["args"]["pct"] = (check.others_cpu or 0.0) * 100
    key = "speed_unsure" if "speedup" in args else "speed_unsure_no_interval"
    return Note(key, {**args, "reason": reason})


def duration_text(seconds: float) -> str:
    """'45 s', '3 min 20 s': short, unit symbols only (the same in every language)."""
    s = max(0, round(seconds))
    if s < 90:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def run_speed_notes(
    summaries: list[dict[str, Any]], machine: dict[str, Any] | None = None
) -> list[Note]:
    """The speed sentences after a grid, one per check; and that the load changed, where a run's
    own median steps against its fp32 run land outside the check's interval."""
    m = machine or machine_info()
    base = fp32_runs(summaries)
    out: list[Note] = []
    seen: set[tuple[Any, ...]] = set()
    for s in summaries:
        raw = s.get("speed_check")
        if s.get("precision") == "fp32" or not raw or s.get("status") == "failed":
            continue
        check = SpeedCheck.from_dict(raw)
        device = str(s.get("device") or "cpu").split(":")[0]
        key = (s.get("machine"), s.get("model"), check.precision, check.speedup, check.low)
        if key not in seen:
            seen.add(key)
            out.append(check_note(check, m, device))
        ref = base.get(peers(s))
        if ref is None or not typical_step_s(s) or not check.interval:
            continue
        if check.step_s == typical_step_s(s) and check.baseline_step_s == typical_step_s(ref):
            continue  # measured on the runs' own steps (they took turns): one figure, no other
        # Only when the runs' own interval and the check's do not meet did the load change.
        timed = max(1, (s.get("steps") or 1) - s.get("warmup_steps", 3))
        ref_timed = max(1, (ref.get("steps") or 1) - ref.get("warmup_steps", 3))
        iv = runs_interval(
            typical_step_s(ref), ref.get("step_time_mad"), ref_timed,
            typical_step_s(s), s.get("step_time_mad"), timed,
        )  # fmt: skip
        if iv is not None and (iv[1] < check.low or iv[0] > check.high):
            ratio = typical_step_s(ref) / typical_step_s(s)
            args = {"label": s.get("label"), "base": ref.get("label"), "ratio": ratio,
                    "low": check.low, "high": check.high}  # fmt: skip
            out.append(Note("load_changed", args))
    return out


def memory_notes(summaries: list[dict[str, Any]]) -> list[Note]:
    """Activation memory of each non-fp32 run vs its backend's fp32 run, from the measured bytes."""
    base = {
        peers(s): s.get("saved_activation_bytes")
        for s in summaries
        if s.get("precision") == "fp32" and s.get("saved_activation_bytes")
    }
    out: list[Note] = []
    for s in summaries:
        b, v = base.get(peers(s)), s.get("saved_activation_bytes")
        if s.get("precision") == "fp32" or not b or not v:
            continue
        ratio = v / b
        args = {"label": s.get("label"), "mb": v / 2**20, "fp32_mb": b / 2**20}
        if ratio < 0.95:
            out.append(Note("mem_less", {**args, "pct": (1 - ratio) * 100}))
        elif ratio > 1.05:
            out.append(Note("mem_more", {**args, "pct": (ratio - 1) * 100}))
        else:
            out.append(Note("mem_same", args))
    return out
