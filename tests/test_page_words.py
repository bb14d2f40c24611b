"""What the Train tab says and draws, from its pure parts: each speed paragraph names its runs,
the flat loss scale says why, coinciding lines are dashed apart, a follower gets the teacher's
lesson and settings, and the sweep lesson is known by name (issue 48)."""

from __future__ import annotations

from mpdemo import colours as mp_colours
from mpdemo.config import RunConfig
from mpdemo.runs.timing import SpeedCheck
from mpdemo.teach.lessons import LESSONS, lesson_of
from mpdemo.ui.tabs.pays_line import sweep_lesson
from mpdemo.ui.train import colours, lessons
from mpdemo.ui.train.frames import scale_flat_text
from mpdemo.ui.train.inputs import check_inputs
from mpdemo.ui.train.status import speed_paragraphs, why_slower


def _summary(label: str, precision: str, speedup: float | None, verdict: str) -> dict:
    check = None
    if speedup is not None:
        check = SpeedCheck(
            precision, "fp32", speedup, speedup * 0.95, speedup * 1.05, 8, 1, 0.05 / speedup,
            0.05, 0.02, None, None, verdict, None,
        ).to_dict()  # fmt: skip
    return {"label": label, "precision": precision, "backend": "torch", "model": "tiny-bert",
            "device": "cpu", "status": "completed", "speed_check": check, "steps": 20,
            "speed_verdict": verdict}  # fmt: skip


def test_each_speed_paragraph_names_its_runs() -> None:
    # Scaled and unscaled fp16 measured alike: one sentence, naming both (two identical
    # "fp16 stepped 1.73x slower" lines before); a run measured otherwise has its own.
    runs = [
        _summary("torch · fp32", "fp32", None, ""),
        _summary("torch · fp16", "fp16", 1 / 1.73, "slower"),
        _summary("torch · fp16 · S=1", "fp16", 1 / 1.73, "slower"),
        _summary("torch · bf16", "bf16", 1.4, "faster"),
    ]
    paras = speed_paragraphs(runs, "en")
    assert len(paras) == 2, paras
    assert paras[0].startswith(
        "**torch · fp16**, **torch · fp16 · S=1**: fp16 stepped 1.73x slower"
    )
    assert paras[1].startswith("**torch · bf16**: bf16 stepped 1.40x faster")
    # The slower precision's one plain sentence: what this CPU has or lacks, by torch's probes.
    (why,) = why_slower(runs, "en")
    assert why.startswith("**Why fp16 is slower here:** this CPU ")
    assert "Where it pays" in why or "no fp16 instructions" in why, why
    # An opened file's slower run is that machine's, not this one's: no sentence for it.
    assert why_slower([{**runs[1], "machine": "H200"}], "en") == []


def test_a_scale_that_cannot_grow_says_why_and_which_lesson_moves_it() -> None:
    opening = LESSONS["still-trains"].configs()
    text = scale_flat_text("en", opening)
    assert "2^16" in text and "2000" in text and "Loss scaling at work" in text, text
    assert str(opening[0].steps) in text
    assert "2000" in scale_flat_text("es", opening)
    # The loss-scaling lesson grows it every 5 steps; fp32 alone has no scale: nothing to say.
    assert scale_flat_text("en", LESSONS["loss-scaling"].configs()) == ""
    assert scale_flat_text("en", [RunConfig(precision="fp32")]) == ""


def test_lines_after_the_first_are_dashed_on_the_plots_and_in_the_legend() -> None:
    labels = ["torch · fp32", "torch · fp16", "torch · bf16"]
    dashes = colours.dashes_for(labels)
    assert dashes["torch · fp32"] == "" and dashes["torch · fp16"] != dashes["torch · bf16"] != ""
    cmap = mp_colours.live_colours(labels)
    css = colours.dash_css(dashes, cmap, ["loss-plot"])
    fp16 = cmap["torch · fp16"]
    assert (
        f'#loss-plot path[stroke="{fp16}"] {{ stroke-dasharray: {dashes["torch · fp16"]}; }}' in css
    )
    assert cmap["torch · fp32"] not in css  # the first line stays solid
    html = colours.legend_html(labels, None, cmap, dashes=dashes)
    assert html.count("stroke-dasharray") == 2


def test_a_follower_gets_the_teachers_lesson_and_settings() -> None:
    for lesson in (x for x in LESSONS.values() if not x.sweep):
        configs = lesson.configs()
        assert lesson_of(configs) is lesson
        # The settings the follower's controls get ask for the teacher's very runs.
        assert check_inputs(lessons.values_of(configs, 1)) == configs, lesson.name
        out = lessons.followed(configs, 2, "en")
        assert out["lesson"]["value"] == lesson.name and out["repeat"]["value"] == 2
        assert out["lesson_info"] == lessons.info("en", lesson.name)
    # On a GPU server the teacher's lesson trains at the GPU's size: the follower is told the
    # lesson, and its controls ask for those very runs, whatever size this machine would pick.
    gpu = LESSONS["still-trains"].configs("cuda")
    out = lessons.followed(gpu, 1, "en")
    assert out["lesson"]["value"] == "still-trains"
    assert out["model"]["value"] == gpu[0].model == "base-gpt2", out["model"]
    assert check_inputs({n: out[n]["value"] for n in lessons.values_of(gpu, 1)}) == gpu
    own = [RunConfig(precision="fp32", steps=7), RunConfig(precision="bf16", steps=7)]
    out = lessons.followed(own, 1, "es")
    assert out["lesson"]["value"] is None and out["steps"]["value"] == 7
    assert out["precisions"]["value"] == ["fp32", "bf16"] and "profesor" in out["lesson_info"]


def test_the_sweep_lesson_is_known_by_name() -> None:
    assert sweep_lesson("where-it-pays") and not sweep_lesson("underflow")
    assert not sweep_lesson(None) and not sweep_lesson("nope")


# A default sweep recorded with its plan (2026-12, Intel Xeon with AVX512-FP16, 2 cores shared
# with other work): each point's plan estimate and measured wall (s), and when the sweep ended.
# The plan said 79 s; it took 93 s, its 26 M batch-8 point 2.3x its estimate.
RECORDED_SWEEP = {
    "estimates": [5.0, 5.1, 5.4, 6.6, 11.5, 45.9],
    "walls": [6.5, 5.2, 5.4, 7.2, 25.9, 42.1],
    "ends": [6.5, 12.1, 17.5, 24.6, 50.6, 92.7],
    "end": 92.8,
}


def test_the_sweeps_estimate_learns_from_its_points_as_they_stream() -> None:
    from mpdemo.ui.tabs.pays_line import sweep_left_s

    rec = RECORDED_SWEEP
    est, walls, ends, end = rec["estimates"], rec["walls"], rec["ends"], rec["end"]
    starts = [0.0, *ends]
    # After the first 10 % until 70 %, the remaining time within 30 % (later, the last point's
    # own error, 8 s of 93, is a large share of what little is left).
    for tenth in range(1, 8):
        now = end * tenth / 10
        k = sum(1 for x in ends if x <= now)
        left = sweep_left_s(est, walls[:k], now - starts[k])
        assert 0.7 <= left / (end - now) <= 1.3, (tenth, left, end - now)
    # Its end (now + left) within 15 % at any moment after the first point.
    for k in range(1, len(ends)):
        assert abs(ends[k - 1] + sweep_left_s(est, walls[:k], 0.0) - end) <= 0.15 * end
    # One slow point does not swing it: the pace is the points' median ratio.
    assert sweep_left_s([10, 10, 10, 10], [10, 30, 10], 0.0) == 10.0
    assert sweep_left_s([10, 10], [12, 11], 0.0) == 0.0
