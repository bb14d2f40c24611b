"""Two processes on the CPU through `accelerate launch` (gloo): the curve is the global one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

ARGS = ["run", "--steps", "3", "--train-slice", "train[:128]", "--eval-slice",
        "validation[:32]", "--batch-size", "16", "--quiet"]  # fmt: skip


BACKENDS = ["accelerate", "trainer"]


@pytest.fixture(scope="module")
def launched(tmp_path_factory) -> dict[str, dict]:
    """Both backends' runs from one `accelerate launch` of two processes, and from one process.

    One launch for both: each of its processes imports torch, transformers and accelerate, which
    costs more than the few steps trained (a launch a backend took 17 s each on 2 cores).
    """
    from mpdemo.cli.main import main

    tmp = tmp_path_factory.mktemp("distributed")
    accelerate = shutil.which("accelerate", path=os.path.dirname(sys.executable))
    # --multi_gpu with no GPU gives torchrun + gloo on the CPU (accelerate 1.15's --cpu flag
    # launches a single process whatever --num_processes says).
    proc = subprocess.run(
        [accelerate, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
         "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "mpdemo", *ARGS,
         "--backend", ",".join(BACKENDS), "--json", str(tmp / "runs.json")],
        capture_output=True, text=True, cwd=ROOT, timeout=240,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Only the main process prints the table (one header line).
    assert proc.stdout.count("backend ") == 1, proc.stdout
    assert main([*ARGS, "--backend", ",".join(BACKENDS), "--json", str(tmp / "one.json")]) == 0

    def by_backend(path) -> dict[str, dict]:
        runs = json.loads(path.read_text())["runs"]
        return {r["summary"]["backend"]: r for r in runs}

    return {"two": by_backend(tmp / "runs.json"), "one": by_backend(tmp / "one.json")}


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_processes_match_one(launched, backend):
    run, one = launched["two"][backend], launched["one"][backend]
    assert run["summary"]["processes"] == 2
    assert any(w["key"] == "distributed" for w in run["summary"]["warning_keys"])
    two_losses = [s["loss"] for s in run["steps"]]
    one_losses = [s["loss"] for s in one["steps"]]
    assert len(two_losses) == 3
    # The global batch split in two halves, gradients averaged: the same training as one process.
    assert two_losses == pytest.approx(one_losses, abs=1e-5)


def test_torch_backend_refuses_many_processes(monkeypatch):
    from mpdemo.cli.main import main

    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main([*ARGS, "--backend", "torch"]) == 2
