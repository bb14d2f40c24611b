"""The lessons in a notebook: `mpdemo notebook` writes one that nbformat accepts, in the page's
language; executed with nbclient in a kernel of this venv (the lessons shortened as the browser
tests shorten them) it shows the table and the plots and saves a recording the page opens; the
kernel's interrupt keeps what was trained; the Train tab's notebook is its comparison's.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from mpdemo.cli.main import main
from mpdemo.config import RunConfig
from mpdemo.languages import LANGS, engine_text, t
from mpdemo.notebook import api
from mpdemo.notebook.writer import comparison_call, comparison_notebook, lessons_notebook
from mpdemo.runs.runner import grid
from mpdemo.teach.lessons import get

ROOT = Path(__file__).resolve().parents[1]
SHORT_STEPS = "4"  # MPDEMO_LESSON_STEPS, as tests/browser shortens the lessons


def _sources(doc: dict) -> list[str]:
    return [c["source"] for c in doc["cells"]]


@pytest.mark.parametrize("lang", LANGS)
def test_the_notebook_is_nbformat_and_speaks_the_pages_language(tmp_path, lang) -> None:
    path = tmp_path / "lessons.ipynb"
    assert main(["notebook", "still-trains", "underflow", "--out", str(path), "--lang", lang]) == 0
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for key in ("still_trains", "underflow"):
        assert engine_text(f"lesson_{key}_slide", {}, lang) in text
        assert engine_text(f"lesson_{key}_look", {}, lang) in text
    assert t("recorded_label", lang) in text and t("open_runs_btn", lang) in text
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert "pip" in code[0] and "MPDEMO_SPEC" in code[0]  # installs where mpdemo is missing
    assert f"lesson('underflow', lang={lang!r})" in "\n".join(code)
    for source in code:
        ast.parse(source)  # every code cell is Python


def test_a_lesson_that_is_not_a_comparison_is_refused(tmp_path, capsys) -> None:
    out = tmp_path / "x.ipynb"
    assert main(["notebook", "where-it-pays", "--out", str(out)]) == 2
    assert "still-trains" in capsys.readouterr().err and not out.exists()


def test_the_train_tabs_comparison_comes_back_as_the_same_grid() -> None:
    base = RunConfig(steps=30, lr=3e-4, max_length=32)
    configs = grid(base, ["torch", "accelerate"], ["fp32", "fp16"], compare_scaling=True)
    call = comparison_call(configs)
    assert call.startswith("compare(")
    node = ast.parse(call, mode="eval").body
    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    lang = kwargs.pop("lang")
    assert lang == "en"
    again = grid(
        RunConfig(**{k: v for k, v in kwargs.items() if k in RunConfig.__dataclass_fields__}),
        kwargs["backends"],
        kwargs["precisions"],
        kwargs.get("compare_scaling", False),
    )
    assert again == configs
    # A lesson's runs are written as the lesson, with its slide.
    doc = comparison_notebook(get("underflow").configs())
    assert any("lesson('underflow'" in s for s in _sources(doc))
    # ... at a GPU's size too (the Train tab's runs on a CUDA server, device named or not).
    gpu = [c.replace(device="cuda") for c in get("underflow").configs("cuda")]
    assert gpu[0].model != get("underflow").configs()[0].model
    assert any("lesson('underflow'" in s for s in _sources(comparison_notebook(gpu)))


def _kernel(tmp_path: Path, monkeypatch) -> str:
    """A kernelspec of the python running pytest, found through JUPYTER_PATH (no install)."""
    spec = tmp_path / "jupyter" / "kernels" / "mpdemo-test"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "mpdemo test", "language": "python"})
    )
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    # The kernel runs in tmp_path: this checkout's mpdemo first, the lessons shortened.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", SHORT_STEPS)
    return "mpdemo-test"


@pytest.mark.slow
def test_the_generated_notebook_runs_and_the_page_opens_its_recording(tmp_path, monkeypatch):
    nb = nbformat.from_dict(lessons_notebook(["still-trains"]))
    client = NotebookClient(
        nb,
        kernel_name=_kernel(tmp_path, monkeypatch),
        timeout=120,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()  # a cell that raises raises here (CellExecutionError)
    cell = next(c for c in nb.cells if "lesson('still-trains'" in c.source)
    kinds = [k for out in cell.outputs for k in out.get("data", {})]
    html = "".join(out["data"].get("text/html", "") for out in cell.outputs if "data" in out)
    assert "<table" in html and "torch · fp16" in html  # the summary DataFrame
    assert kinds.count("image/png") == 3  # loss, loss scale, step time
    saved = sorted(tmp_path.glob("lesson-still-trains-*.json"))
    assert len(saved) == 1
    printed = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert saved[0].name in printed
    # The page's /load_runs opens it beside live runs, each run labelled with its machine.
    from mpdemo.files.recorded import read_runs
    from mpdemo.ui.train.recorded import load_runs
    from mpdemo.ui.train.session import Session

    rec = read_runs(saved[0])
    assert [len(r["steps"]) for r in rec.runs] == [int(SHORT_STEPS)] * 2
    session = Session()
    frames = list(load_runs(str(saved[0]), "en", session))
    assert saved[0].name in frames[-1]["status"]
    assert session.recorded_labels() == [f"torch · fp32 · {rec.tag}", f"torch · fp16 · {rec.tag}"]


@pytest.mark.slow
def test_the_interrupt_stops_the_runs_and_keeps_their_steps(tmp_path, monkeypatch) -> None:
    class Interrupting:
        """tqdm's place: the third step sends the process the kernel's interrupt (SIGINT)."""

        def __init__(self) -> None:
            self.n = 0

        def update(self, k: int) -> None:
            self.n += k
            if self.n == 3:
                os.kill(os.getpid(), signal.SIGINT)

        def set_postfix_str(self, *_a, **_k) -> None: ...
        def reset(self, *_a, **_k) -> None: ...
        def close(self) -> None: ...

    monkeypatch.setattr(api, "_bar", lambda total: Interrupting())
    configs = grid(RunConfig(steps=40, eval_slice="validation[:32]"), ["torch"], ["fp32", "bf16"])
    r = api.run(configs)
    assert r.interrupted
    assert [run["status"] for run in r.runs] == ["stopped", "stopped"]
    steps = r.steps
    assert 2 <= len(steps) < 80 and set(steps["run"]) == {"torch · fp32", "torch · bf16"}
    assert list(r.summary["status"]) == ["stopped", "stopped"]
    assert t("nb_interrupted", "en", runs=2) in r._repr_html_()
    saved = r.save(tmp_path / "stopped.json")
    assert json.loads(saved.read_text())["runs"][0]["status"] == "stopped"


def test_the_train_tab_offers_its_comparison_as_a_notebook_in_the_pages_language() -> None:
    from mpdemo.ui.train.handlers import notebook_update
    from mpdemo.ui.train.session import Session

    session = Session()
    assert notebook_update(session, "en")["interactive"] is False  # no runs: nothing to offer
    session.configs = grid(RunConfig(steps=20), ["torch"], ["fp32", "bf16"])
    for lang in LANGS:
        update = notebook_update(session, lang)
        assert update["interactive"] is True
        nb = nbformat.read(update["value"], as_version=4)
        nbformat.validate(nb)
        assert nb.metadata["mpdemo"]["lang"] == lang
        text = "\n".join(c.source for c in nb.cells)
        assert t("nb_comparison_md", lang, runs="torch · fp32, torch · bf16") in text
        assert "compare(backends=['torch'], precisions=['fp32', 'bf16'], steps=20" in text
    session.close()


def test_a_lesson_in_a_notebook_on_a_gpu_trains_its_gpu_size(monkeypatch) -> None:
    # Where the class has a GPU, the notebook's lesson is the one `mpdemo lesson --device cuda`
    # trains (teach/device_sizes.py), not the CPU size, which is launch-bound there.
    import torch

    from mpdemo.engine import precision
    from mpdemo.notebook import api
    from mpdemo.teach.lessons import get

    asked: list = []
    monkeypatch.setattr(precision, "resolve_device", lambda d: torch.device("cuda"))
    monkeypatch.setattr(api, "run", lambda configs, *a, **k: asked.append(configs) or None)
    api.lesson("still-trains", device="cuda", show=False, progress=False)
    want = [c.replace(device="cuda") for c in get("still-trains").configs("cuda")]
    assert asked == [want] and want[0].model == "base-gpt2"
