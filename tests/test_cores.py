"""While other programs take cores, torch computes on the cores they leave; back to every thread
once they are gone; the run's notes say so; torch gets its own count back at the end."""

from __future__ import annotations

import pytest
import torch

from mpdemo.engine import cores as cores_mod
from mpdemo.engine.cores import Cores


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch):
    """torch on 2 threads on a 2-CPU machine, restored after the test."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    monkeypatch.setattr(cores_mod, "_cores", lambda: 2)
    yield
    torch.set_num_threads(before)


def _cores(readings: list[float | None]) -> tuple[Cores, list[float]]:
    now = [0.0]
    c = Cores("cpu", others=lambda: readings.pop(0), clock=lambda: now[0])
    return c, now


def test_threads_follow_the_cores_other_programs_leave(two_cores) -> None:
    c, now = _cores([0.0, 1.1, 0.4, 0.1])
    c.tick(1)  # under a second since it started: nothing read
    assert torch.get_num_threads() == 2
    for step, want in [(10, 2), (20, 1), (30, 1), (40, 2)]:  # quiet, busy, between, quiet
        now[0] += 1.0
        c.tick(step)
        assert torch.get_num_threads() == want, step
    (note,) = c.notes()
    assert note.key == "cores_shared"
    assert note.args == {"step": 20, "threads": 1, "full": 2, "others": 1.1}


def test_close_gives_torch_its_threads_back_and_a_quiet_run_says_nothing(two_cores) -> None:
    c, now = _cores([2.0])
    now[0] += 1.0
    c.tick(5)
    assert torch.get_num_threads() == 1
    c.close()
    assert torch.get_num_threads() == 2
    quiet, now = _cores([0.0, 0.1])
    for _ in range(2):
        now[0] += 1.0
        quiet.tick(1)
    assert quiet.notes() == [] and torch.get_num_threads() == 2


def test_a_gpu_run_or_a_machine_without_counters_keeps_torch_s_threads(two_cores) -> None:
    gpu = Cores("cuda", others=lambda: 2.0, clock=lambda: 10.0)
    gpu.tick(1)
    blind, now = _cores([None, 2.0])
    now[0] += 1.0
    blind.tick(1)
    now[0] += 1.0
    blind.tick(2)  # no counters once: it stops reading
    assert torch.get_num_threads() == 2 and gpu.notes() == blind.notes() == []


def test_a_run_s_notes_say_when_other_programs_took_cores(two_cores, monkeypatch) -> None:
    from mpdemo import RunConfig
    from mpdemo.engine.core import execute, prepare

    # Other programs take more than a core from the first reading on.
    monkeypatch.setattr(cores_mod, "CHECK_S", 0.0)
    monkeypatch.setattr(Cores, "_measured", lambda self: 1.5)
    cfg = RunConfig(train_slice="train[:64]", eval_slice="validation[:16]", steps=3, batch_size=8)
    events: list = []
    execute(prepare(cfg), events.append)
    (end,) = [e for e in events if e.kind == "end"]
    (note,) = [w for w in end.summary["warning_keys"] if w["key"] == "cores_shared"]
    assert note["args"]["threads"] == 1 and note["args"]["full"] == 2
    assert any("other programs took about 1.5 cores" in w for w in end.summary["warnings"])
    assert torch.get_num_threads() == 2  # given back when the run ended
