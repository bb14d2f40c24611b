"""What one page of the app costs the browser on this machine: chromium's CPU seconds to load
the page, to switch its language twice, and while it streams a comparison.

    python bench/page.py                 # 3 rounds, 20 steps a run: each phase's figures
    python bench/page.py --rounds 5 --steps 40

On a 2-core machine the browser shares the cores with the training, so what the page costs is
time the runs do not get. `python app.py` is started on a free port; each round opens a fresh
chromium (Debian's, as the tests use it: `apt-get install -y chromium chromium-headless-shell`)
and reads every chromium process's CPU time from /proc (Linux only). A round trains with a step
count of its own, so the app never answers with another visitor's recording of the same
comparison. Nothing is asserted: the figures are printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT / "tests"))
from chromium_launch import CHROMIUM, CHROMIUM_ARGS  # noqa: E402 - the browser tests' chromium
from startup import serving  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
READY = "() => (document.querySelector('#slice-preview')?.innerText || '').trim().length > 0"


_SEEN: dict[tuple[str, str], float] = {}  # (pid, start time) -> its CPU-s when last read


def chromium_cpu() -> float:
    """CPU seconds (user + system) of every chromium process seen so far: one that has ended
    counts with its last reading (a sum of those alive only went down when one ended)."""
    for pid in (p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name = stat[stat.find("(") + 1 : stat.rfind(")")]
        if "chrom" in name or "headless" in name:
            rest = stat[stat.rfind(")") + 2 :].split()
            _SEEN[pid, rest[19]] = (int(rest[11]) + int(rest[12])) / TICK
    return sum(_SEEN.values())


def one_round(pw, url: str, steps: int) -> dict[str, float]:  # noqa: ANN001 - Playwright's
    """One fresh browser: load, two switches, a streamed comparison; chromium CPU-s of each."""
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    try:
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        out: dict[str, float] = {}
        cpu = chromium_cpu()
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_function(READY, timeout=120_000, polling=100)
        page.wait_for_timeout(1500)  # what the page does once its load hooks answered
        out["load"], cpu = chromium_cpu() - cpu, chromium_cpu()
        for name, word in (("Español", "Entrenar"), ("English", "Train")):
            page.locator("#lang").get_by_label(name).check()
            page.wait_for_function(
                f"() => (document.querySelector('#start-btn')?.innerText || '').includes('{word}')",
                timeout=30_000,
                polling=100,
            )
            page.wait_for_timeout(1200)
        out["switch"], cpu = (chromium_cpu() - cpu) / 2, chromium_cpu()
        box = page.locator("#steps input[type=number]").first
        box.fill(str(steps))
        box.press("Enter")
        page.wait_for_timeout(500)
        cpu, t0 = chromium_cpu(), time.monotonic()
        page.click("#start-btn")
        page.wait_for_function(
            "() => (document.querySelector('#status')?.innerText || '').startsWith('Done')",
            timeout=600_000,
            polling=100,
        )
        out["run_s"] = time.monotonic() - t0
        out["run"] = chromium_cpu() - cpu
        return out
    finally:
        browser.close()


def main() -> None:
    """Start the app, measure the rounds, print each phase's median and range."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20, help="steps a run (each round adds one)")
    args = ap.parse_args()
    if not os.path.exists(CHROMIUM):
        sys.exit(f"no chromium at {CHROMIUM}: apt-get install -y chromium chromium-headless-shell")
    from playwright.sync_api import sync_playwright

    rounds = []
    with serving("app") as (url, _), sync_playwright() as pw:
        for i in range(args.rounds):
            r = one_round(pw, url, args.steps + i)
            rounds.append(r)
            print(f"round {i + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in r.items()))
    print(f"chromium CPU-s on this machine ({os.cpu_count()} cores), median (min-max):")
    for key, what in (("load", "page load"), ("switch", "one language switch"),
                      ("run", f"a streamed comparison (2 runs of ~{args.steps} steps)")):  # fmt: skip
        xs = [r[key] for r in rounds]
        print(f"  {what}: {statistics.median(xs):.2f} ({min(xs):.2f}-{max(xs):.2f})")
    per_s = [r["run"] / r["run_s"] for r in rounds]
    print(f"  while streaming: {statistics.median(per_s):.2f} CPU-s a second of the run")


if __name__ == "__main__":
    main()
