"""The reproduce script the Train tab downloads runs where it was downloaded (issue 20).

On a machine set up with the README's command (`pip install ... -e .`), the script runs from an
empty folder, not only from mpdemo's own, and prints the losses of the app's run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from mpdemo.config import RunConfig
from mpdemo.ui.train.session import Session

STEP_LINE = re.compile(r"^step (\d+)\b.*\bloss (\S+)", re.M)
CFG = RunConfig(
    steps=6, batch_size=8, train_slice="train[:48]", eval_slice="validation[:16]", device="cpu"
)
# No PYTHONPATH (the script must find mpdemo the way a downloads folder would), and one
# thread in both processes so their float sums run in the same order.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"OMP_NUM_THREADS": "1"}


def _run(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=ENV, timeout=240
    )


def test_the_downloaded_script_runs_from_an_empty_folder(tmp_path) -> None:
    where = tmp_path / "downloads"
    where.mkdir()
    probe = _run(["-c", "import mpdemo"], str(where))
    if probe.returncode != 0:
        pytest.fail(
            "mpdemo does not import outside its folder: set the machine up with the README's "
            "command (pip install torch==2.13.0 -r requirements-dev.txt -e .)\n" + probe.stderr
        )
    session = Session()
    session.begin([CFG])
    path = session.script_file(CFG.label)  # the file the Train tab's download button serves
    assert path is not None
    script = where / os.path.basename(path)
    shutil.copy(path, script)
    session.close()
    head = script.read_text(encoding="utf-8").split('"""')[1]
    assert (
        "pip install" in head and "requirements.txt ." in head and f"python {script.name}" in head
    )
    assert [p.name for p in where.iterdir()] == [script.name]  # nothing else beside it

    ran = _run([script.name], str(where))
    assert ran.returncode == 0, ran.stderr[-2000:]
    steps = STEP_LINE.findall(ran.stdout)
    assert [int(n) for n, _ in steps] == list(range(1, 7)), ran.stdout
    # The app's run of the same settings, by the engine, on one thread as the script had (the
    # same float sums); in this process: its process is tests/test_listing.py's point.
    import torch

    from mpdemo import train

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        engine = [e.loss for e in train(CFG) if e.kind == "step"]
    finally:
        torch.set_num_threads(threads)
    assert [float(v) for _, v in steps] == pytest.approx(engine, rel=1e-5)


def test_a_visitor_of_a_space_is_told_to_install_mpdemo_from_the_spaces_repository(
    monkeypatch,
) -> None:
    """On a Space the visitor has no mpdemo folder: the script names the Space's repository
    (its files are the package; its torch pin goes first, as the README's command does)."""
    import ast

    from mpdemo.teach.listing import script_for

    monkeypatch.setenv("SPACE_ID", "teacher/mpdemo")
    head = ast.get_docstring(ast.parse(script_for(CFG)))
    url = "https://huggingface.co/spaces/teacher/mpdemo"
    assert f"installed once from this Space's repository ({url}):\n" in head
    assert f"\npip install torch==2.13.0 -r {url}/resolve/main/requirements.txt git+{url}\n" in head
    assert "requirements.txt ." not in head  # no folder of mpdemo's on the visitor's machine
    # An odd Space id stays text: shell-quoted in the command, and the script's code unchanged.
    odd = 'me/x"""\nimport os; os.system("id")  #'
    monkeypatch.setenv("SPACE_ID", odd)
    script = script_for(CFG)
    tree = ast.parse(script)
    assert ast.get_docstring(tree).count(odd.split("\n")[0]) == 3  # the URL, -r and git+
    assert not any(
        isinstance(n, ast.Import) and any(a.name == "os" for a in n.names) for n in tree.body
    )
    monkeypatch.delenv("SPACE_ID")
    assert "requirements.txt ." in ast.get_docstring(ast.parse(script_for(CFG)))
