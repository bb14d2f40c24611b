"""Each lesson's point, as its check reads it (mpdemo/teach/lesson_checks.py): every lesson run
whole on a seed nobody tuned to, and checks that fail where runs do not show the point. A file of
its own so that the suite's workers (pytest-xdist, --dist loadfile) run it beside the others."""

from __future__ import annotations

import os

import pytest

from mpdemo.teach import lessons as L

# Not one of the seeds the settings were chosen on (bench/lessons.py prints seeds 0-4): the point
# must hold on any seed a teacher types.
UNTUNED_SEED = 11


def _sixteen_bit_is_slow_here() -> bool:
    """Kernels of the AVX2 kind: a 16-bit step costs ~7 fp32 steps, the five lessons ~2 min of the
    suite's 5 (158 s of 760 worker-seconds with ATEN_CPU_CAPABILITY=avx2 on a 2-core Xeon)."""
    from mpdemo.engine.machine import cpu_capability

    return cpu_capability() in ("AVX2", "DEFAULT") and not os.environ.get("MPDEMO_LESSON_POINTS")


@pytest.mark.slow
@pytest.mark.skipif(
    _sixteen_bit_is_slow_here(),
    reason="16-bit kernels are slow on this CPU: the lessons' numerics run in "
    "`python bench/lessons.py --seeds 11` (MPDEMO_LESSON_POINTS=1 runs them here)",
)
@pytest.mark.parametrize("name", [n for n, x in L.LESSONS.items() if x.check])
def test_each_lesson_makes_its_point_on_a_seed_nobody_tuned_to(name: str, monkeypatch) -> None:
    import threading

    from mpdemo.runs.fold import RunFold
    from mpdemo.runs.runner import run_grid
    from mpdemo.teach.lesson_checks import traces_of

    monkeypatch.delenv("MPDEMO_LESSON_STEPS", raising=False)  # the whole lesson, as a class sees it
    lesson = L.get(name)
    configs = [c.replace(seed=UNTUNED_SEED) for c in lesson.configs()]
    fold = RunFold(configs)  # the runs' records, as the CLI keeps them
    run_grid(configs, fold.apply, threading.Event())
    readings = lesson.check(traces_of(fold.finished))
    assert readings and all(r.ok for r in readings), "\n".join(map(str, readings))


def test_a_check_fails_where_the_runs_do_not_show_the_point() -> None:
    from mpdemo.teach import lesson_checks as C

    def trace(cfg, losses, **kw):
        return C.Trace(cfg, losses=list(losses), scales=[None] * len(losses), **kw)

    fp32, fp16 = L.get("still-trains").configs()
    flat = [0.69] * 60  # tiny-bert's classifier at ln 2: nothing seen to learn
    readings = C.still_trains({"a": trace(fp32, flat), "b": trace(fp16, flat)})
    assert [r.ok for r in readings] == [False, False, True]
    apart = C.still_trains(
        {"a": trace(fp32, [6.5 - 0.04 * i for i in range(60)]),
         "b": trace(fp16, [6.5 - 0.03 * i for i in range(60)])}
    )  # fmt: skip
    assert [r.ok for r in apart] == [True, True, False]  # both fall, but not on one curve
    f32, scaled, bare = L.get("underflow").configs()
    hidden = {"a": trace(f32, flat), "b": trace(scaled, flat, below_normal=[0.001, 0.002]),
              "c": trace(bare, flat, below_normal=[0.95, 0.2])}  # fmt: skip
    assert [r.ok for r in C.underflow(hidden)] == [False, True, True]  # a step under a quarter
    close = {"a": trace(f32, flat), "b": trace(scaled, flat, below_normal=[0.04]),
             "c": trace(bare, flat, below_normal=[0.3])}  # fmt: skip
    assert [r.ok for r in C.underflow(close)] == [True, True, False]  # not 10x the scaled share
    master, pure, sr = L.get("master-weights").configs()
    level = {"a": trace(master, [4.17] * 60), "b": trace(pure, [4.20] * 60),
             "c": trace(sr, [4.18] * 60)}  # fmt: skip
    assert [r.ok for r in C.master_weights(level)] == [False, True]  # a 0.03 gap is no lag
    (scaling,) = L.get("loss-scaling").configs()
    steady = C.Trace(scaling, losses=flat, scales=[2.0**16] * 60, skipped=0)
    assert not any(r.ok for r in C.loss_scaling({"a": steady}))
