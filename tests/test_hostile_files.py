"""Runs files from strangers: a real recording with NaN, infinities, huge numbers, wrong types
and HTML at random places is either refused with one line naming the field, or read into
something every renderer (CLI table, notes, the page's table, plots, the browser's store) draws.
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mpdemo.cli.main import format_table
from mpdemo.files import recorded
from mpdemo.files.checks import (
    MACHINE_RULES,
    MAX_STEPS_PER_RUN,
    SPEED_CHECK_RULES,
    STEP_RULES,
    SUMMARY_RULES,
)
from mpdemo.files.machines import describe_machine
from mpdemo.files.recorded import (
    RecordingError,
    compact,
    parse_document,
    read_runs,
    reference_files,
    runs_document,
)
from mpdemo.files.summary import Summary, scale_text, speedup_text, with_speedups
from mpdemo.messages import EN, ConfigError
from mpdemo.runs.notes import memory_notes, run_speed_notes
from mpdemo.ui import i18n
from mpdemo.ui.train.gradwatch import watch_update
from mpdemo.ui.train.session import Session
from mpdemo.ui.train.session_table import warnings_text

HTML = '<img src="http://127.0.0.1:9/t.png"> **Session expired** [log in](http://127.0.0.1:9/p)'
NAN, INF = float("nan"), float("inf")


def _trimmed(path) -> dict[str, Any]:
    # A real recording with a few steps a run: mutations land anywhere, examples stay fast.
    doc = json.loads(path.read_text(encoding="utf-8"))
    for run in doc["runs"]:
        run["steps"] = run["steps"][:5]
    return doc


def _with_everything(doc: dict[str, Any]) -> dict[str, Any]:
    """The same recording on a GPU, with every optional field a renderer reads filled in."""
    doc = copy.deepcopy(doc)
    doc["machine"].update(
        device_kind="cuda",
        device_name="NVIDIA H200",
        gpu={
            "kind": "cuda",
            "name": "NVIDIA H200",
            "capability": "9.0",
            "bf16": True,
            "memory_bytes": 150_000_000_000,
            "count": 1,
        },  # fmt: skip
    )
    for run in doc["runs"]:
        why = {"key": "hw_cpu_lacks", "args": {"isa": "AVX2", "precision": "fp16"}}
        s = run["summary"]
        s.update(
            median_step_s=s["mean_step_s"],
            step_time_mad=0.01,
            speedup_interval=[0.9, 1.1],
            speed_verdict="slower",
            speed_reason=None,
            speed_check={
                "precision": s["precision"],
                "baseline": "fp32",
                "speedup": 0.5,
                "low": 0.4,
                "high": 0.6,
                "rounds": 8,
                "block": 2,
                "step_s": 0.02,
                "baseline_step_s": 0.01,
                "spread": 0.05,
                "others_cpu": 0.1,
                "steal": 0.0,
                "verdict": "slower",
                "reason": None,
            },
            peak_mem_bytes=123_456_789,
            warnings=["slice clamped"],
            warning_keys=[
                {"key": "slice_clamped", "args": {"slice": "train[:9000]", "rows": 2000}},
                {"key": "diverged_nonfinite", "args": {"loss": "nan", "step": 5}},
                {
                    "key": "run_slower",
                    "args": {
                        "label": "a",
                        "base": "b",
                        "ratio": 2.0,
                        "ms": 3.0,
                        "fp32_ms": 1.5,
                        "why": why,
                    },
                },
            ],  # fmt: skip
        )
        # A watched run's last histogram (--watch-grads), as the engine writes it.
        counts = [5, *[0] * 29, 3, 4, 2, *[0] * 29]  # 62: below 2^-40, 61 binades, 2^20 up
        layer = {"bin_edges_log2": list(range(-40, 21)), "counts": counts, "elements": 14,
                 "nonzero": 9, "flushed": 0.0, "subnormal": 0.0, "overflow": 0.0}  # fmt: skip
        run["grad_histograms"] = [
            {"step": 4, "scale": 65536.0, "format": "fp16",
             "layers": [copy.deepcopy({"name": n, **layer}) for n in ("encoder.0", "classifier")]},
        ]  # fmt: skip
    return doc


BASES = [_trimmed(p) for p in reference_files()]
BASES += [_with_everything(b) for b in BASES]
MACHINE = BASES[0]["machine"]  # run_speed_notes names this machine's hardware


def _path_text(path: tuple[Any, ...]) -> str:
    """('runs', 0, 'summary', 'steps') -> 'runs[0].summary.steps', as the reader names a field."""
    out = ""
    for k in path:
        out += f"[{k}]" if isinstance(k, int) else f".{k}"
    return out.lstrip(".")


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a document a value sits (the root left out)."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _candidate_paths(doc: dict[str, Any]) -> list[list[tuple[Any, ...]]]:
    """Where values are, and where a renderer would look for one the file does not have yet,
    by region: each region is drawn as often, so a summary field is hit as often as a step's."""
    every = _paths(doc)
    runs = range(len(doc["runs"]))
    summary = {("runs", i, "summary", k) for i in runs for k in SUMMARY_RULES}
    summary |= {p for p in every if p[2:3] == ("summary",) and len(p) == 4}
    check = {("runs", 0, "summary", "speed_check", k) for k in SPEED_CHECK_RULES}
    notes = {p for p in every if "warning_keys" in p or "warnings" in p}
    steps = {
        ("runs", i, "steps", j, k) for i in runs for j in (0, 4) for k in (*STEP_RULES, "step")
    }
    machine = {("machine", k) for k in MACHINE_RULES} | {p for p in every if p[0] == "machine"}
    config = {p for p in every if p[2:3] == ("config",)}
    grads = {p for p in every if p[2:3] == ("grad_histograms",)}
    regions = [summary, check, notes, steps, machine, config, grads, set(every)]
    return [sorted(r, key=repr) for r in regions if r]


REGIONS = [_candidate_paths(b) for b in BASES]

# What a stranger puts in a file: every one of these is tried at every field a renderer reads.
HOSTILE_VALUES: list[Any] = [
    NAN, INF, -INF, 10**400, -(10**400), 2**63, 10**13, 10**15 + 1, 1e308, 1e-300, -1.0, 0, 2.5,
    True, False, None, "", "abc", HTML, "a\nb", "\x00", "x" * 10_000, [], [1, {"a": 2}], {},
    {"a": 2}, {"key": "failed", "args": {"detail": None}}, {"key": "x{0}", "args": []},
    {"key": "slice_clamped", "args": {"slice": "s", "rows": INF}}, [0.5, NAN],
    {"key": "speed_faster", "args": {"speedup": None}}, "completed", "torch",
]  # fmt: skip
HOSTILE = st.one_of(
    st.sampled_from(HOSTILE_VALUES),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
)


def _put(doc: Any, path: tuple[Any, ...], value: Any, delete: bool) -> bool:
    """Set (or delete) the value at path; False when the path no longer exists."""
    node = doc
    for k in path[:-1]:
        try:
            node = node[k]
        except (KeyError, IndexError, TypeError):
            return False
    last = path[-1]
    if isinstance(node, dict):
        if delete:
            node.pop(last, None)
        else:
            node[last] = value
        return True
    if isinstance(node, list) and isinstance(last, int) and last < len(node):
        if delete:
            del node[last]
        else:
            node[last] = value
        return True
    return False


@st.composite
def mutated(draw: st.DrawFn) -> tuple[bytes, list[tuple[Any, ...]]]:
    """A real recording's JSON with one to three values replaced or removed."""
    i = draw(st.integers(0, len(BASES) - 1))
    doc = copy.deepcopy(BASES[i])
    changed = []
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(draw(st.sampled_from(REGIONS[i]))))
        delete = draw(st.integers(0, 9)) == 0
        # A copy: a later mutation may land inside this value, never in HOSTILE_VALUES itself.
        value = None if delete else copy.deepcopy(draw(HOSTILE))
        if _put(doc, path, value, delete):
            changed.append(path)
    return json.dumps(doc).encode(), changed


def render_everything(rec: Any) -> None:
    """Every way mpdemo shows a recording: what raises here would raise on the page or the CLI."""
    summaries = with_speedups(r["summary"] for r in rec.runs)
    format_table(summaries)
    for s in summaries:
        speedup_text(s)
        scale_text(s.get("final_loss_scale"))
    notes = [*run_speed_notes(summaries, MACHINE), *memory_notes(summaries)]
    assert rec.tag and describe_machine(rec.machine)
    # The date goes into one line of the status ('recorded on M (date)'): one line, ≤ 10 chars.
    assert rec.date is None or ("\n" not in rec.date and len(rec.date) <= 10), rec.date
    session = Session()
    labels = session.add_recording(rec)
    assert len(labels) == len(rec.runs)
    for lang in i18n.LANGS:
        session.table(lang).to_html()  # the Styler formats its cells only when drawn
        for s in session.summaries():
            warnings_text(s, lang)
        for n in notes:
            i18n.message(n.key, n.args, lang)
        watch_update(session, lang)  # the watched gradients the file carries
    for cfg in session.plot_configs():
        assert cfg.steps >= 1
    for series in session.plot_series().values():
        for metric in ("loss", "scale", "step_ms", "samples_per_s"):
            series.sampled(metric, 50, smoothing=0.6, x_axis="time")
            series.sampled(metric, 50)
    # What the browser keeps comes back in a new session, and a file written from it reads back.
    stored = json.loads(json.dumps(session.stored()))
    assert Session().restore(stored) == len(rec.runs)
    parse_document(json.loads(json.dumps(runs_document(compact(rec.runs), rec.machine))))


def _one_line_everywhere(err: RecordingError) -> None:
    assert "\n" not in str(err)
    for lang in i18n.LANGS:
        text = i18n.t("status_load_failed", lang, error=i18n.error_text(err, lang))
        # One line, its template filled (render() falls back to "{template} {args}").
        assert "\n" not in text and "{path}" not in text and "{name}" not in text, text
        assert len(text) < 600, text


def _read_or_render(raw: bytes, where: str | None) -> str:
    """'refused' (one line naming `where` or a field around it) or 'opened' (and drawn)."""
    try:
        rec = read_runs(raw, "hostile.json")
    except RecordingError as err:
        assert err.key in ("runs_bad_field", "runs_bad_shape", "runs_newer", "runs_not_json")
        _one_line_everywhere(err)
        if err.key == "runs_bad_field" and where is not None:
            # The line names the field that was changed (or the object it sits in, or one in it).
            named = err.note.args["path"]
            assert named.startswith(where) or where.startswith(named), (named, where)
        return "refused"
    render_everything(rec)
    return "opened"


@settings(
    max_examples=300,
    deadline=None,
    database=None,  # no .hypothesis/ folder in the checkout; a failure prints its example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(mutated())
def test_a_mutated_recording_is_refused_in_one_line_or_renders_everywhere(case) -> None:
    raw, changed = case
    event(_read_or_render(raw, _path_text(changed[0]) if len(changed) == 1 else None))


# Every field a renderer reads, and the objects they sit in.
FIELD_PATHS = sorted(
    {
        *[("runs", 0, "summary", k) for k in SUMMARY_RULES],
        *[("runs", 1, "steps", 0, k) for k in (*STEP_RULES, "step")],
        # The speed fields are read off the runs that are not fp32 (the first run is fp32).
        *[("runs", 1, "summary", k) for k in SUMMARY_RULES if k.startswith(("speed", "mean"))],
        *[("runs", 1, "summary", k) for k in ("effective_dtype", "precision", "status")],
        *[("runs", 1, "summary", "speed_check", k) for k in SPEED_CHECK_RULES],
        *[("runs", 0, "summary", "warning_keys", i) for i in range(3)],
        *[("runs", 0, "summary", "warning_keys", 2, "args", k) for k in ("ratio", "why", "label")],
        ("runs", 0, "summary", "warning_keys", 0, "key"),
        ("runs", 0, "summary", "warning_keys", 0, "args", "rows"),
        ("runs", 0, "summary", "warnings", 0),
        *[("machine", k) for k in MACHINE_RULES],
        *[("machine", "cpu", k) for k in ("name", "capability")],
        ("machine", "gpu", "name"),
        *[("runs", 0, "config", k) for k in ("steps", "loss_scaling", "model", "lr")],
        ("runs", 0, "steps", 0),
        *[("runs", 0, "grad_histograms", 0, k) for k in ("step", "scale", "format", "layers")],
        *[
            ("runs", 0, "grad_histograms", 0, "layers", 1, k)
            for k in ("name", "bin_edges_log2", "counts", "elements", "nonzero", "flushed")
        ],
        ("runs", 0, "grad_histograms", 0, "layers", 0, "counts", 0),
        ("runs", 0, "grad_histograms", 0, "layers", 0, "bin_edges_log2", 0),
        ("runs", 0, "grad_histograms", 0),
        ("runs", 0, "grad_histograms"),
        ("runs", 0, "summary"),
        ("runs", 0),
        ("runs",),
        ("version",),
        ("machine",),
    },
    key=repr,
)


@pytest.mark.parametrize("path", FIELD_PATHS, ids=_path_text)
def test_every_field_a_renderer_reads_takes_every_hostile_value(path: tuple[Any, ...]) -> None:
    # The recording with the most runs, every optional field filled in.
    base = max(BASES[len(BASES) // 2 :], key=lambda d: len(d["runs"]))
    for value in HOSTILE_VALUES:
        doc = copy.deepcopy(base)
        assert _put(doc, path, copy.deepcopy(value), delete=False)
        _read_or_render(json.dumps(doc).encode(), _path_text(path))


def test_every_reference_recording_renders_everywhere() -> None:
    for base in BASES:
        render_everything(read_runs(json.dumps(base).encode(), "ok.json"))


def _summary_with(**changes: Any) -> bytes:
    doc = copy.deepcopy(BASES[0])
    doc["runs"][0]["summary"].update(changes)
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"steps": NAN}, "runs[0].summary.steps is NaN"),
        ({"params": INF}, "runs[0].summary.params is infinite"),
        ({"params": 10**400}, "runs[0].summary.params is out of range (from 0 to 1e+13)"),
        ({"steps": MAX_STEPS_PER_RUN + 1}, "runs[0].summary.steps is out of range"),
        ({"steps": 2.5}, "runs[0].summary.steps is not a whole number"),
        ({"steps": True}, "runs[0].summary.steps is not a number"),
        ({"warnings": [1, {"a": 2}]}, "runs[0].summary.warnings[0] is not a text"),
        ({"warning_keys": "abc"}, "runs[0].summary.warning_keys is not a list"),
        ({"warning_keys": [{"key": "slice_clamped", "args": {"rows": INF}}]},
         "runs[0].summary.warning_keys[0] cannot be shown"),
        ({"status": "<b>done</b>"}, "runs[0].summary.status is not one of completed, stopped"),
        ({"final_loss_scale": -1.0}, "runs[0].summary.final_loss_scale is out of range"),
    ],
)  # fmt: skip
def test_the_issues_files_are_refused_naming_the_field(changes: dict, line: str) -> None:
    with pytest.raises(RecordingError) as err:
        read_runs(_summary_with(**changes), "bad.json")
    assert str(err.value).startswith(f"bad.json: {line}"), str(err.value)
    text = i18n.t("status_load_failed", "en", error=i18n.error_text(err.value, "en"))
    assert text.startswith(f"Not opened: bad.json: {line}") and text.endswith("Nothing changed.")
    es = i18n.error_text(err.value, "es")
    assert es.startswith("bad.json: el campo runs[0]") and " is " not in es, es


def test_a_diverged_run_still_opens() -> None:
    # NaN and infinity are what a diverged run's loss really is: kept, drawn as gaps.
    doc = copy.deepcopy(BASES[0])
    doc["runs"][0]["summary"].update(final_loss=NAN, eval_loss=INF, status="diverged")
    doc["runs"][0]["steps"][-1]["loss"] = NAN
    rec = read_runs(json.dumps(doc).encode(), "diverged.json")
    assert math.isnan(rec.runs[0]["summary"]["final_loss"])
    render_everything(rec)


def test_machine_names_are_bounded_single_lines() -> None:
    doc = copy.deepcopy(BASES[0])
    doc["machine"]["device_name"] = HTML  # text: the page escapes it; the reader keeps it
    assert read_runs(json.dumps(doc).encode()).machine["device_name"] == HTML
    for bad, problem in [("x" * 201, "is 201 characters long"), ("a\nb", "holds control characters"),
                         (["H200"], "is not a text")]:  # fmt: skip
        doc["machine"]["cpu"]["name"] = bad
        with pytest.raises(RecordingError, match=rf"machine\.cpu\.name {problem}"):
            read_runs(json.dumps(doc).encode())


def test_a_number_json_cannot_convert_is_not_json() -> None:
    # More than 4,300 digits: json.loads itself refuses it (a ValueError, not a decode error).
    raw = b'{"version": 2, "runs": [{"summary": {"backend": "t", "precision": "p", "steps": '
    raw += b"9" * 5000 + b"}}]}"
    with pytest.raises(RecordingError) as err:
        read_runs(raw, "digits.json")
    assert err.value.key == "runs_not_json"


def test_every_summary_field_has_a_rule_and_every_problem_a_message() -> None:
    # A field added to Summary is checked on the way in, or this fails.
    names = {f.name for f in fields(Summary)} - {"extra"}
    assert names <= set(SUMMARY_RULES), names - set(SUMMARY_RULES)
    from mpdemo.runs.timing import SpeedCheck

    check = {f.name for f in fields(SpeedCheck)}
    assert check <= set(SPEED_CHECK_RULES), check - set(SPEED_CHECK_RULES)
    from mpdemo.files import checks

    text = Path(recorded.__file__).read_text(encoding="utf-8")
    text += Path(checks.__file__).read_text(encoding="utf-8")
    used = set(re.findall(r'"(field_[a-z_]+)"', text))
    assert used and used <= set(EN), used - set(EN)
    assert not issubclass(RecordingError, ConfigError)
