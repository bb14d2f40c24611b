"""Why every torch operation of a run stays in one thread: a second thread's OpenMP pool competes.

    python bench/threads.py

Trains the default tiny BERT for 25 steps in a fresh thread (twice), then in the main thread,
then in a thread started after the main thread has used torch's pool, and prints ms per step.
Measured on 2 cores: 17-22 ms, 18-22 ms in the main thread, 31-35 ms in the thread after it.
"""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mpdemo import RunConfig, prepare  # noqa: E402

CFG = RunConfig(steps=25, device="cpu")


def loop(tag: str) -> None:
    """Prepare and train in the calling thread; print the mean step time after warm-up."""
    prep = prepare(CFG)
    stamps = []
    for batch in prep.train_dataloader:
        prep.model(**batch).loss.backward()
        prep.optimizer.step()
        prep.optimizer.zero_grad()
        stamps.append(time.perf_counter())
    print(
        f"{tag:<28}{(stamps[-1] - stamps[3]) / (len(stamps) - 4) * 1000:6.1f} ms/step", flush=True
    )


def in_thread(tag: str) -> None:
    """Run loop() in a fresh thread and wait for it."""
    worker = threading.Thread(target=loop, args=(tag,))
    worker.start()
    worker.join()


if __name__ == "__main__":
    in_thread("thread (main idle)")
    in_thread("another thread (main idle)")
    loop("main thread")
    in_thread("thread after main trained")
