"""What of a checked runs file stays in the server's memory: only the keys its rules name, and
another writer's own figures as a few small scalars (twelve open 20 MiB files with keys no
renderer reads took a server from 229 to 3,801 MiB)."""

from __future__ import annotations

from .checks import (
    _CPU_RULES,
    _GPU_RULES,
    CPU_FLAGS,
    FP8_AUDIT_RULES,
    FP8_TENSORS,
    MACHINE_RULES,
    MAX_KEPT_LAYERS,
    MAX_NAME,
    MAX_NOTE_ARGS,
    SPEED_CHECK_RULES,
    STEP_RULES,
    SUMMARY_RULES,
)

# Another writer's own scalar figures kept in one summary (a summary's `lost_update_share` is
# one the page reads): the first ones in the file's order.
MAX_EXTRA_KEYS = 16
STEP_KEYS = ("step", *STEP_RULES)
MAX_METRICS = 16  # an evaluation's metrics (the engine writes one or two)


def _scalar(v: object) -> bool:
    return (
        v is None
        or isinstance(v, (bool, int, float))
        or (isinstance(v, str) and len(v) <= MAX_NAME)
    )


def known(data: object, keys: object) -> dict[str, object]:
    """`data`'s keys that are in `keys`, in the file's order."""
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if k in keys}


def small(data: object, limit: int = MAX_EXTRA_KEYS) -> dict[str, object]:
    """At most `limit` of a dict's keys that hold a scalar (a name-long string at most)."""
    if not isinstance(data, dict):
        return {}
    out: dict[str, object] = {}
    for k, v in data.items():
        if len(out) >= limit:
            break
        if isinstance(k, str) and len(k) <= MAX_NAME and _scalar(v):
            out[k] = v
    return out


def _note(note: object) -> dict[str, object]:
    """A message as the checker passed it: its key, text and arguments, nothing else."""
    out = known(note, ("key", "args", "text"))
    args = out.get("args")
    if isinstance(args, dict):
        out["args"] = {
            k: _note(a) if isinstance(a, dict) else a for k, a in list(args.items())[:MAX_NOTE_ARGS]
        }
    return out


def fp8_audit(audit: object) -> dict[str, object] | None:
    """The audit's counts and formats; its kept layers' names thinned to MAX_KEPT_LAYERS."""
    if not isinstance(audit, dict):
        return None
    out = known(audit, FP8_AUDIT_RULES)
    out.pop("kept", None)
    out.pop("formats", None)
    kept = audit.get("kept")
    if isinstance(kept, list):
        out["kept"] = [
            n for n in kept[:MAX_KEPT_LAYERS] if isinstance(n, str) and len(n) <= MAX_NAME
        ]
    formats = audit.get("formats")
    if isinstance(formats, dict):
        out["formats"] = {k: v for k, v in formats.items() if k in FP8_TENSORS and _scalar(v)}
    return out


def summary(s: dict[str, object], label: str) -> dict[str, object]:
    """The summary's fields the renderers read, and a few small figures of another writer's."""
    out = known(s, SUMMARY_RULES)
    if "fp8_audit" in out:
        out["fp8_audit"] = fp8_audit(out["fp8_audit"])
    if isinstance(out.get("speed_check"), dict):
        out["speed_check"] = known(out["speed_check"], SPEED_CHECK_RULES)
    if isinstance(out.get("warning_keys"), list):
        out["warning_keys"] = [_note(n) for n in out["warning_keys"]]
    extra = small({k: v for k, v in s.items() if k not in SUMMARY_RULES})
    return {**out, **extra, "label": label}


def step(st: dict[str, object]) -> dict[str, object]:
    """A step's own fields: what the plots and the CSV read."""
    return known(st, STEP_KEYS)


def evaluation(ev: dict[str, object]) -> dict[str, object]:
    """An evaluation's step and its metrics (numbers under short names), nothing else."""
    out = known(ev, ("step",))
    if not isinstance(out.get("step"), (int, float)) or isinstance(out.get("step"), bool):
        out.pop("step", None)
    metrics = ev.get("metrics")
    if isinstance(metrics, dict):
        out["metrics"] = {
            k: v
            for k, v in small(metrics, MAX_METRICS).items()
            if isinstance(v, (int, float)) and not isinstance(v, bool)
        }
    return out


def machine(m: dict[str, object] | None) -> dict[str, object] | None:
    """The machine record's fields the page reads; the CPU's flags only as the engine names them."""
    if not isinstance(m, dict):
        return None
    out = known(m, MACHINE_RULES)
    cpu = out.get("cpu")
    if isinstance(cpu, dict):
        cpu = known(cpu, _CPU_RULES)
        flags = cpu.get("flags")
        if isinstance(flags, dict):
            cpu["flags"] = {
                k: v for k, v in flags.items() if k in CPU_FLAGS and isinstance(v, bool)
            }
        out["cpu"] = cpu
    if isinstance(out.get("gpu"), dict):
        out["gpu"] = known(out["gpu"], _GPU_RULES)
    return out
