"""The runs of a comparison take turns step by step: same results as alone, steps alternating,
Stop keeps every run's steps, a run that fails leaves the others going."""

from __future__ import annotations

import threading

import pytest
from conftest import events_of

from mpdemo import RunConfig
from mpdemo.runs.fold import RunFold
from mpdemo.runs.runner import Runner, grid, run_grid
from mpdemo.runs.together import take_turns
from mpdemo.runs.turns import Baton


@pytest.fixture
def tiny() -> RunConfig:
    return RunConfig(
        train_slice="train[:128]", eval_slice="validation[:32]", steps=4, batch_size=8, device="cpu"
    )


def _together(configs: list[RunConfig], stop: threading.Event | None = None) -> list:
    events: list = []
    run_grid(configs, events.append, stop or threading.Event())
    return events


def _losses(events: list, label: str) -> list[float]:
    return [e.loss for e in events if e.kind == "step" and e.label == label]


# --- the baton alone (no torch) ---------------------------------------------------------------


@pytest.mark.parametrize("how", ["threads", "greenlets"])
def test_baton_gives_turns_in_abba_order_and_skips_a_run_that_left(how: str):
    baton, order, lock = Baton(3), [], threading.Lock()

    def run(i: int, steps: int) -> None:
        for s in range(steps):
            baton.take(i)
            with lock:
                order.append((s, i))
            baton.give(i)
        baton.finish(i)

    steps = [4, 2, 4]
    if how == "greenlets":  # as mpdemo.runs.together schedules a comparison's runs
        take_turns(baton, [lambda i: run(i, steps[i])] * 3)
    else:
        threads = [threading.Thread(target=run, args=(i, steps[i])) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert not any(t.is_alive() for t in threads)
    # Rounds 0 and 1 in ABBA order; run 1 left after two steps, the others go on without it.
    assert order == [(0, 0), (0, 1), (0, 2), (1, 2), (1, 1), (1, 0), (2, 0), (2, 2), (3, 2), (3, 0)]


# --- the engine -------------------------------------------------------------------------------


def test_interleaved_runs_give_the_losses_of_runs_alone(tiny: RunConfig):
    configs = grid(tiny, ["torch", "accelerate", "trainer"], ["fp32", "bf16"])
    together = _together(configs)
    for cfg in configs:
        alone = [e.loss for e in events_of(cfg) if e.kind == "step"]
        side = _losses(together, cfg.label)
        assert len(side) == cfg.steps == len(alone)
        assert side == pytest.approx(alone, abs=1e-6), cfg.label
    ends = {e.label: e for e in together if e.kind == "end"}
    assert all(e.status == "completed" for e in ends.values())
    # Every run evaluated, after every run had trained: no eval event before the last step.
    kinds = [e.kind for e in together]
    last_step = max(i for i, k in enumerate(kinds) if k == "step")
    assert kinds.count("eval") == len(configs)
    assert min(i for i, k in enumerate(kinds) if k == "eval") > last_step


def test_steps_of_a_comparison_alternate_and_carry_wall_time(tiny: RunConfig):
    configs = grid(tiny, ["torch"], ["fp32", "bf16"])
    events = _together(configs)
    steps = [e for e in events if e.kind == "step"]
    # Step k of every run before step k+1 of any.
    assert [e.step for e in steps] == [1, 1, 2, 2, 3, 3, 4, 4]
    walls = [e.wall_s for e in steps]
    assert walls == sorted(walls) and walls[0] > 0
    # ABBA: the run that stepped second in a round steps first in the next.
    pairs = [(steps[i].label, steps[i + 1].label) for i in range(0, len(steps), 2)]
    assert pairs[1] == pairs[0][::-1] and pairs[2] == pairs[0]
    fold = RunFold(configs)
    for e in events:
        fold.apply(e)
    ends = {s.label: s for s in fold.summaries}
    bf16 = ends["torch · bf16"]
    # The speed-up is the ratio of the two runs' median steps (what the table shows), with the
    # verdict of their own rounds (too few here for an interval).
    assert bf16["speedup_vs_fp32"] == pytest.approx(
        ends["torch · fp32"]["median_step_s"] / bf16["median_step_s"]
    )
    assert bf16["speed_verdict"] == "unsure" and bf16["speed_reason"] == "too_few"
    # The note under the precision boxes reads the same runs: nothing was measured before them.
    from mpdemo.ui.train.inputs import precision_note
    from mpdemo.ui.train.session import Session

    page = Session()
    page.begin(configs)
    for ev in events:
        page.apply(ev)
    note = precision_note("en", ["fp32", "bf16"], "cpu", page)
    assert note.startswith("Measured by your last comparison's own steps (tiny-bert, batch 8)")
    assert "bf16" in note.split("\n\n", 1)[1]
    assert precision_note("en", ["fp32", "fp16"], "cpu", page) == ""  # fp16 did not run


def test_stop_mid_comparison_keeps_every_runs_steps(tiny: RunConfig):
    configs = grid(tiny.replace(steps=40), ["torch"], ["fp32", "bf16"])
    runner = Runner(configs).start()
    seen = 0
    for ev in runner.events(timeout=30):
        assert ev is not None, "no event in 30 s"
        if ev.kind == "step":
            seen += 1
            if seen == 5:
                runner.stop()
    assert runner.join(30)
    runs = runner.state.fold.finished
    assert sorted(r["summary"]["label"] for r in runs) == sorted(c.label for c in configs)
    assert all(r["status"] == "stopped" for r in runs)
    # Each run kept its steps, and they stopped within a round of each other.
    counts = [len(r["steps"]) for r in runs]
    assert all(n >= 2 for n in counts) and max(counts) - min(counts) <= 1
    assert all("wall_s" in s for r in runs for s in r["steps"])


def test_a_run_that_fails_leaves_the_others_going(tiny: RunConfig, monkeypatch):
    from mpdemo.engine import recorder

    real_end = recorder.Recorder.end

    def end(self, *args, **kwargs):  # the bf16 run breaks at its second step
        if self.cfg.precision == "bf16" and self.step == 1:
            raise RuntimeError("broken on purpose")
        return real_end(self, *args, **kwargs)

    monkeypatch.setattr(recorder.Recorder, "end", end)
    configs = grid(tiny, ["torch"], ["fp32", "bf16", "fp16"])
    events = _together(configs)
    ends = {e.label: e for e in events if e.kind == "end"}
    assert ends["torch · bf16"].status == "failed"
    assert ends["torch · fp32"].status == "completed"
    assert ends["torch · fp16"].status == "completed"
    assert len(_losses(events, "torch · fp32")) == tiny.steps


def test_a_run_that_cannot_start_leaves_the_others_going(tiny: RunConfig):
    configs = grid(tiny, ["torch"], ["fp32", "bf16"])
    configs[1] = configs[1].replace(model="no-such-model")
    events = _together(configs)
    ends = {e.label: e for e in events if e.kind == "end"}
    assert ends["torch · bf16"].status == "failed"
    assert ends["torch · fp32"].status == "completed"


def test_a_comparison_too_big_for_memory_is_refused_before_loading(tiny, monkeypatch):
    from mpdemo.messages import ConfigError
    from mpdemo.ui.i18n import message

    monkeypatch.setenv("MPDEMO_MAX_MEMORY_MB", "1000")  # 3 x 50M parameters need ~2.3 GB
    configs = grid(tiny.replace(model="amp-mlp"), ["torch"], ["fp32", "bf16", "fp16"])
    with pytest.raises(ConfigError) as caught:
        Runner(configs)
    err = caught.value
    assert err.note.key == "comparison_too_big" and err.note.args["runs"] == 3
    assert "\n" not in str(err) and "MPDEMO_MAX_MEMORY_MB" in str(err)
    assert "MPDEMO_MAX_MEMORY_MB" in message(err.note.key, err.note.args, "es")
    Runner(configs[:1])  # one run alone fits: the cap is on the runs together


def _step(label: str, step: int, dt: float = 0.5):
    from mpdemo.events import StepEvent

    return StepEvent(f"x:{label}", label, step, 0.7, None, False, dt, 16.0, None, 1e-3, 0.0)


def test_the_estimate_counts_rounds_of_runs_taking_turns(tiny: RunConfig):
    from mpdemo.runs.estimate import GridEstimate

    now = [0.0]
    configs = grid(tiny.replace(steps=30), ["torch"], ["fp32", "bf16"])
    est = GridEstimate(configs, clock=lambda: now[0])
    for step in range(1, 11):  # a round a second
        for cfg in configs:
            now[0] += 0.5
            est.update(_step(cfg.label, step))
    # The estimate counts rounds, not runs one after another: 20 rounds at 1 s, then the evals.
    left = est.remaining_s()
    assert left is not None and 20.0 <= left < 22.0
    from mpdemo.runs.estimate import eta_note

    assert eta_note(est) is None  # the pace has not changed
    # The load doubles: the rounds' pace says so, with a re-estimate and its reason.
    for step in range(11, 20):
        for cfg in configs:
            now[0] += 1.0
            est.update(_step(cfg.label, step))
    note = eta_note(est)
    assert note is not None and note.key == "eta_rounds_slower"
    assert note.args["factor"] == pytest.approx(2.0)


def test_the_estimate_of_the_end_counts_each_run_s_evaluation_at_its_own_precision(
    tiny: RunConfig, monkeypatch: pytest.MonkeyPatch
):
    """After the last round: each run's evaluation one after another, each at its own step
    times its precision's ratio (an fp32 run's measured ratio is not an fp16 run's), then the
    collection after the comparison."""
    import mpdemo.engine.core as core
    from mpdemo.events import EvalEvent, RunFinished, RunStarted
    from mpdemo.runs import estimate as E

    monkeypatch.setattr(core, "next_collect_s", lambda: 0.25)
    now = [0.0]
    configs = grid(tiny.replace(steps=6), ["torch"], ["fp32", "fp16"])  # 32 rows: 4 batches
    est = E.GridEstimate(configs, clock=lambda: now[0])
    step_s = {"fp32": 0.1, "fp16": 1.0}
    for k, cfg in enumerate(configs):
        est.update(RunStarted(f"{k}:{cfg.label}", cfg.label, k, 2, {}, "cpu", 1, "fp32", 6))
    for step in range(1, 7):
        for cfg in configs:
            now[0] += step_s[cfg.precision]
            est.update(_step(cfg.label, step, step_s[cfg.precision]))
    fp32_eval = 4 * 0.1 * E.EVAL_PER_STEP["fp32"]
    fp16_eval = 4 * 1.0 * E.EVAL_PER_STEP_16
    assert est.remaining_s() == pytest.approx(fp32_eval + fp16_eval + 0.25)
    # Half of the fp32 run's evaluation gone: the estimate counts down.
    now[0] += fp32_eval / 2
    assert est.remaining_s() == pytest.approx(fp32_eval / 2 + fp16_eval + 0.25)
    # It took three times the prior: its ratio is measured, and says nothing of fp16's.
    now[0] += 3 * fp32_eval - fp32_eval / 2
    fp32 = configs[0].label
    est.update(EvalEvent(f"0:{fp32}", fp32, 6, {"loss": 0.5}))
    est.update(RunFinished(f"0:{fp32}", fp32, "completed", {}))
    assert est.eval_ratios["fp32"] == [pytest.approx(3 * E.EVAL_PER_STEP["fp32"])]
    assert est.remaining_s() == pytest.approx(fp16_eval + 0.25)
    fp16 = configs[1].label
    now[0] += fp16_eval
    est.update(EvalEvent(f"1:{fp16}", fp16, 6, {"loss": 0.5}))
    est.update(RunFinished(f"1:{fp16}", fp16, "completed", {}))
    assert est.remaining_s() == pytest.approx(0.25)  # the collection
    now[0] += 1.0
    assert est.remaining_s() == 0.0


def test_the_end_is_stretched_as_the_rounds_were(tiny: RunConfig, monkeypatch: pytest.MonkeyPatch):
    """Rounds that took twice their steps' own times (another process's load): the evaluations
    and the process's first collection are guessed twice as long too."""
    import mpdemo.engine.core as core
    from mpdemo.runs import estimate as E

    monkeypatch.setattr(core, "next_collect_s", lambda: None)  # the first collection is ahead
    now = [0.0]
    configs = grid(tiny.replace(steps=6), ["torch"], ["fp32", "bf16"])  # 32 rows: 4 batches
    est = E.GridEstimate(configs, clock=lambda: now[0])
    for step in range(1, 7):
        for cfg in configs:
            now[0] += 1.0  # each step's own timer says 0.5 s
            est.update(_step(cfg.label, step, 0.5))
    assert est.stall() == pytest.approx(2.0)
    evals = 4 * 0.5 * (E.EVAL_PER_STEP["fp32"] + E.EVAL_PER_STEP_16)
    assert est.remaining_s() == pytest.approx(2.0 * (evals + E.FIRST_COLLECT_S))


@pytest.mark.parametrize("backend", ["torch", "accelerate"])
def test_an_fp32_run_beside_a_tf32_run_keeps_fp32_matmuls_at_every_step(tiny, monkeypatch, backend):
    # tf32 sets process-wide torch flags for its run; the runs take turns in one thread, so each
    # turn must put its own run's flags back. On the CPU the flags do nothing, but they are read
    # the same: the tf32 check is waived here so a tf32 run trains beside an fp32 one.
    import torch

    from mpdemo.engine import core
    from mpdemo.engine.recorder import Recorder

    monkeypatch.setattr(core, "check_precision_on", lambda device, precision: None)
    seen: dict[str, list[tuple[str, bool, bool]]] = {}
    end = Recorder.end

    def watched(self, *args, **kwargs):  # the step hook: what this run's step computed under
        flags = (
            torch.get_float32_matmul_precision(),
            torch.backends.cuda.matmul.allow_tf32,
            torch.backends.cudnn.allow_tf32,
        )
        seen.setdefault(self.cfg.precision, []).append(flags)
        return end(self, *args, **kwargs)

    monkeypatch.setattr(Recorder, "end", watched)
    before = (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32)
    configs = grid(tiny, [backend], ["fp32", "tf32"])
    events = _together(configs)
    assert [e.status for e in events if e.kind == "end"] == ["completed", "completed"]
    assert seen["fp32"] == [(before[0], before[1], torch.backends.cudnn.allow_tf32)] * tiny.steps
    assert seen["tf32"] == [("high", True, True)] * tiny.steps
    # And the process is left as it was found.
    assert (torch.get_float32_matmul_precision(), torch.backends.cuda.matmul.allow_tf32) == before
