"""What a hostile runs file and watched gradients leave in a process's memory (issue 52).

    python bench/door_memory.py file [--files 12] [--mb 20]
    python bench/door_memory.py grads [--steps 300] [--runs 4] [--watch 1]

file: the shipped default recording with ~1.5 M keys of junk in its fp8_audit (and in its
machine's CPU flags), --mb MiB on disk, read --files times and every Recording kept, as one tab
holding twelve files keeps them. grads: the classroom's line runs --runs tiny-bert runs side by
side for --steps steps with --watch-grads 1 and one viewer reads every event to the end; the
comparison and its records stay, as the server keeps a finished one for late joiners.
Prints the RSS before, at its peak (sampled every 50 ms) and after, in MiB. Run it in a fresh
process for each figure; from the repository's root.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402


def _rss() -> float:
    return psutil.Process().memory_info().rss / 2**20


class Peak:
    """The highest RSS seen while it runs, sampled every 50 ms in a thread."""

    def __enter__(self) -> Peak:
        self.peak, self.done = _rss(), threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        return self

    def _watch(self) -> None:
        while not self.done.wait(0.05):
            self.peak = max(self.peak, _rss())

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()
        self.peak = max(self.peak, _rss())


def hostile_file(mb: float) -> bytes:
    """The default recording with junk keys filling its fp8_audit up to `mb` MiB."""
    from mpdemo.files.recorded import REFERENCE_DIR

    doc = json.loads((REFERENCE_DIR / "default-cpu.json").read_text(encoding="utf-8"))
    base = len(json.dumps(doc))
    n = int((mb * 2**20 - base) / 14)  # '"k1234567": 0, ' is about 14 bytes
    doc["runs"][0]["summary"]["fp8_audit"] = {f"k{i}": 0 for i in range(n)}
    doc["machine"]["cpu"]["flags"].update({f"f{i}": True for i in range(1000)})
    return json.dumps(doc).encode()


def files(count: int, mb: float) -> None:
    from mpdemo.files.recorded import read_runs

    raw = hostile_file(mb)
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(count):  # variants: the same bytes would be one digest
            p = Path(tmp) / f"v{i}.json"
            p.write_bytes(raw.replace(b'"k0"', f'"v{i}"'.encode(), 1))
            paths.append(p)
        gc.collect()
        before = _rss()
        with Peak() as peak:
            kept = [read_runs(p) for p in paths]
        gc.collect()
        print(f"{count} files of {len(raw) / 2**20:.1f} MiB, every one kept: RSS {before:.0f} MiB "
              f"before, {peak.peak:.0f} at peak, {_rss():.0f} while kept")  # fmt: skip
        del kept


def grads(steps: int, runs: int, watch: int = 1) -> None:
    from mpdemo.classroom.line import Hub
    from mpdemo.config import RunConfig

    precisions = ["fp32", "bf16", "fp16", "fp32"][:runs]
    configs = [RunConfig(precision=p, steps=steps, watch_grads=watch, seed=i) for i, p in
               enumerate(precisions)]  # fmt: skip
    hub = Hub(max_comparison_s=0)
    import mpdemo.engine.core  # noqa: F401 - torch and the models loaded before the baseline

    gc.collect()
    before = _rss()
    with Peak() as peak:
        view = hub.watch(configs)
        n = sum(1 for e in view.events(timeout=1.0) if e is not None)
    gc.collect()
    c = view.comparison
    kept = sum(1 for e in c.entries if e.event.kind == "grads")
    snaps = sum(len(r.get("grad_histograms") or []) for r in c.derived.fold.finished)
    print(f"{runs} runs x {steps} steps, --watch-grads {watch}: {n} events read; RSS {before:.0f} MiB "
          f"before, {peak.peak:.0f} at peak, {_rss():.0f} after (the comparison kept: "
          f"{kept} grads events, {snaps} snapshots in its runs)")  # fmt: skip


def main() -> None:
    """Parse the arguments and print one figure."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("file", "grads"))
    ap.add_argument("--files", type=int, default=12)
    ap.add_argument("--mb", type=float, default=20.0)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--watch", type=int, default=1, help="--watch-grads (0: the baseline)")
    a = ap.parse_args()
    if a.what == "file":
        files(a.files, a.mb)
    else:
        grads(a.steps, a.runs, a.watch)


if __name__ == "__main__":
    main()
