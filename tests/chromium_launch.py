"""Which chromium the browser tests and bench/page.py launch, and with which flags (no fixtures,
no environment set: importing it changes nothing).

Debian's headless shell (package chromium-headless-shell, the old headless mode Playwright itself
uses for headless runs) where it is installed, else the full browser in headless mode. Same Blink
156; on a quiet 2-core Xeon (AVX512-FP16), `python app.py` and one Playwright script, two each:
a page in a new context ready for 4.35-4.40 CPU-s of the browser against 6.75-7.49, a language
switch 2.49-2.52 against 2.70-3.00, a streamed run 0.34 CPU-s a second against 0.37-0.42,
the launch 0.10 against 0.43.
"""

from __future__ import annotations

import os

_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM = _SHELL if os.path.exists(_SHELL) else "/usr/bin/chromium"
# Without the background-networking flags chromium keeps dialling out of this closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
