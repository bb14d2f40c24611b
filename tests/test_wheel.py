"""The wheel `pip install .` builds is the whole package: every file of mpdemo/ that git tracks
(code, locales, the bundled dataset, tokenizer and recordings), requirements.txt's dependencies,
and the `mpdemo` command. Built from a copy of the tracked files, so the checkout gets no build/.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

from conftest import ROOT


def test_the_wheel_holds_every_tracked_file_its_dependencies_and_its_command(tmp_path) -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    src = tmp_path / "src"
    for name in tracked:
        if name.startswith(("mpdemo/", "README.md", "pyproject.toml", "requirements.txt")):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist"), str(src)],
        capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("mpdemo-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(z.read(info).decode())
        points = z.read(info.replace("METADATA", "entry_points.txt")).decode()
    package = {n for n in tracked if n.startswith("mpdemo/") and "__pycache__" not in n}
    assert package - names == set(), "tracked files the wheel leaves out (pyproject package-data)"
    assert any(n.startswith("mpdemo/assets/reviews/") for n in names)  # the offline dataset
    wanted = [
        line.strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    # The app's own: the notebook extra's (`mpdemo[notebook]`) are marked and come on request.
    got = [r for r in meta.get_all("Requires-Dist") or [] if "extra ==" not in r]
    assert "notebook" in (meta.get_all("Provides-Extra") or [])
    assert [r.split(">")[0].split("<")[0] for r in got] == [
        w.split(">")[0].split("<")[0] for w in wanted
    ], got
    assert "mpdemo = mpdemo.cli.main:main" in points
    assert Path(wheel).stat().st_size < 5 * 2**20  # data, not a checkout's caches
