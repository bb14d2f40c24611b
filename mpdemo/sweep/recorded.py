"""Sweeps recorded on other machines that ship (assets/reference/sweeps/sweep-<gpu>.json, the file
`mpdemo sweep --json` writes): read back, checked, as SweepPoints, so Where it pays and
`sweep --published` show what a GPU measured beside this machine's own sweep."""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import checks as ck
from ..files.machines import Machine, describe_machine, machine_tag
from ..files.recorded import read_json, reference_dir, reference_files
from ..messages import Note
from ..registry import PRECISION_NAMES
from ..runs.timing import VERDICTS, SpeedCheck
from ..state import on_reset
from .events import SweepPoint
from .notes import crossover_notes
from .spec import SWEEP_VERSION

FOLDER = "sweeps"  # under the reference folder, where the runs-file loaders never look
MAX_ROWS = 1000  # a row per size x batch x precision: far past any grid the CLI allows
# The fields of SweepPoint.rows() a recorded sweep is read back from.
ROW_RULES: dict[str, ck._Rule] = {
    "model": ck._name(ck.MAX_SOURCE),
    "device": ck._name(),
    "params": ck._whole(1, ck.MAX_PARAMS),
    **dict.fromkeys(("hidden", "layers", "batch_size", "seq"), ck._whole(1, 10**7)),
    "precision": lambda c, p, v: c.choice(p, v, PRECISION_NAMES),
    "step_s": ck._number(1e-9, 10**7),
    "speedup_vs_fp32": ck._RATIO,
    "speedup_interval": ck._interval,
    "speed_verdict": lambda c, p, v: c.choice(p, v, VERDICTS),
    "speed_reason": ck._name(),
    "rounds": ck._whole(0, 10**9),
    **dict.fromkeys(("samples_per_s", "tflops"), ck._number(0, 10**15)),
    "mfu": ck._number(0, 10),
}
_SHAPE = ("model", "hidden", "layers", "params", "batch_size", "seq", "device")


@dataclass
class RecordedSweep:
    """A shipped sweep: its machine and points (each timed interleaved against fp32 there)."""

    name: str
    machine: Machine
    points: list[SweepPoint]

    @property
    def tag(self) -> str:
        """'H200': the name its sentences say it paid on."""
        return machine_tag(self.machine)

    @property
    def date(self) -> str:
        """The day it was measured ('2026-12-04'), or ''."""
        return str(self.machine.get("date") or "")[:10]

    @property
    def about(self) -> str:
        """'NVIDIA H200 · torch 2.11.0 · …', from the file."""
        return describe_machine(self.machine)

    def notes(self) -> list[tuple[int, list[Note]]]:
        """Its crossover sentences per tokens a row, saying "on the H200", never "here"."""
        by_seq: dict[int, list[SweepPoint]] = {}
        for p in self.points:
            by_seq.setdefault(p.seq, []).append(p)
        kind = str(self.machine.get("device_kind") or "cuda")
        return [(seq, crossover_notes(ps, kind, self.tag)) for seq, ps in sorted(by_seq.items())]


def parse_sweep(doc: object, name: str) -> RecordedSweep:
    """Check a decoded sweep document and rebuild its points; raises RecordingError."""
    c = ck._Checker(name)
    top = c.has("", doc, "points")
    c.whole("version", top.get("version", SWEEP_VERSION), 1, SWEEP_VERSION)
    machine = c.fields("machine", top.get("machine") or {}, ck.MACHINE_RULES)
    groups: dict[tuple[object, ...], dict[str, dict[str, Any]]] = {}
    for i, raw in enumerate(c.seq("points", top["points"], MAX_ROWS)):
        c.has(f"points[{i}]", raw, *_SHAPE, "precision", "step_s")
        row = c.fields(f"points[{i}]", raw, ROW_RULES)
        at = groups.setdefault(tuple(row[k] for k in _SHAPE), {})
        if row["precision"] in at:  # two timings of one point: which would the page believe?
            c.fail(f"points[{i}]", "field_too_many", count=2, limit=1)
        at[row["precision"]] = row
    if not groups:
        c.fail("points", "field_missing")
    n = len(groups)
    points = [_point(c, shape, rows, i, n) for i, (shape, rows) in enumerate(groups.items())]
    return RecordedSweep(name=name, machine=machine, points=points)


def _point(
    c: ck._Checker, shape: tuple[object, ...], rows: dict[str, dict[str, Any]], i: int, n: int
) -> SweepPoint:
    """One size x batch's rows as the SweepPoint they were written from."""
    if "fp32" not in rows:
        c.fail(f"points (point {i + 1}).fp32", "field_missing")
    checks: dict[str, dict[str, object]] = {}
    for precision, row in rows.items():
        verdict = row.get("speed_verdict")
        if precision == "fp32" or verdict is None:
            continue  # fp32 is the baseline; a row with no verdict was not compared
        low, high = row.get("speedup_interval") or (None, None)
        if row.get("speedup_vs_fp32") is None or (verdict == "slower" and low is None):
            c.fail(f"points (point {i + 1}).{precision}", "field_missing")
        checks[precision] = SpeedCheck(
            precision, "fp32", row["speedup_vs_fp32"], low, high, row.get("rounds") or 0, 0,
            row["step_s"], rows["fp32"]["step_s"], None, None, None, verdict,
            row.get("speed_reason"),
        ).to_dict()  # fmt: skip
    figures = ("step_s", "samples_per_s", "tflops", "mfu")
    each = {k: {p: r.get(k) for p, r in rows.items()} for k in figures}
    return SweepPoint(
        **dict(zip(_SHAPE, shape, strict=True)),  # type: ignore[arg-type]
        index=i, total=n, checks=checks, peak={}, load=None, wall_s=0.0, **each,
    )  # fmt: skip


def read_sweep(path: Path) -> RecordedSweep:
    """Read and check one sweep file; raises RecordingError."""
    return parse_sweep(read_json(path, path.name)[0], path.name)


@functools.lru_cache(maxsize=16)
def _read(path: str, mtime_ns: int, size: int) -> RecordedSweep | None:
    """One sweep file, read once a version (each page build and language switch asks); a broken
    one is None, said once in the log."""
    try:
        return read_sweep(Path(path))
    except ck.RecordingError as err:
        logging.getLogger("mpdemo.files").warning("recorded sweep skipped: %s", err)
        return None


@on_reset
def forget_sweeps() -> None:
    """Read the shipped sweeps again on next look (mpdemo.reset())."""
    _read.cache_clear()


def shipped_sweeps(folder: Path | None = None) -> list[RecordedSweep]:
    """The recorded sweeps that ship; a broken one is left out."""
    out = []
    for path in reference_files("sweep-*.json", folder or reference_dir() / FOLDER):
        try:
            st = path.stat()
        except OSError:
            continue
        rec = _read(str(path), st.st_mtime_ns, st.st_size)
        if rec is not None:
            out.append(rec)
    return out
