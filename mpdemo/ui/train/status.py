"""The Train tab's status: what runs now, how the grid ended, what was measured."""

from __future__ import annotations

from collections import Counter
from typing import Any

from ... import engine
from ...config import RunConfig
from ...files.summary import Summary
from ...messages import MpdemoError
from ...runs.fold import Run
from ...runs.notes import duration_text, memory_notes, run_speed_notes
from ...runs.runner import RunnerInterface, side_by_side
from ..histogram import pct
from ..i18n import error_text, message, t
from ..text import shown
from . import classroom
from .session import Session
from .session_table import speedup_cell


def status_text(session: Session, lang: str, finished: bool = False) -> str:
    """'Run i of n: label, step k of N, about T left', or how the grid ended."""
    p = session.state.progress
    # A shared comparison says first whose figures these are; one in line, its place only.
    lines, only = classroom.status_lines(session, lang)
    if only and not finished:
        return "\n\n".join(lines)
    head = len(lines) + 1  # the board's lines and the one sentence for the class stay unfolded
    if finished:
        if (stopped := stopped_text(session.runs, lang)) is not None:
            lines.append(stopped)
        elif session.stop_requested:
            lines.append(t("status_stopped_plain", lang))
        else:
            counts = Counter(r["status"] for r in session.runs)
            detail = ", ".join(t(f"status_count_{k}", lang, count=n) for k, n in counts.items())
            lines.append(t("status_done", lang, count=len(session.runs), detail=detail or "0"))
            # The verdict in the first sentence: "torch · fp16: 2.48× slower".
            verdicts = [
                f"{shown(x.get('label', ''))}: {cell}"
                for x in session.summaries()
                if (cell := speedup_cell(x, lang))
            ]
            if verdicts:
                lines[-1] += " " + t("status_verdicts", lang, verdicts="; ".join(verdicts))
            # Why a 16-bit precision was slower, and how many updates rounded away: unfolded.
            lost = lost_updates_text(session.runs, lang)
            unfolded = [*why_slower(session.summaries(), lang), *([lost] if lost else [])]
            lines += unfolded
            head += len(unfolded)
    elif session.stop_requested:
        lines.append(stopped_text(runner_runs(session.runner), lang) or t("status_stopping", lang))
    else:
        lines.append(_progress_line(session, lang))
        if p.get("phase") != "running" or not p.get("steps"):
            left = session.state.remaining_s()
            if session.state.plan is not None and left is not None:
                lines.append(t("status_eta", lang, left=duration_text(left)))
    if finished and session.runs:
        # What the runs measured replaces what the plan said (the load may have changed).
        summaries = session.summaries()
        speed = run_speed_notes(summaries)
        compared = {n.args["precision"] for n in speed if "precision" in n.args}
        # A precision no run could be compared for (no fp32 run) keeps the plan's sentence.
        ran = {s.get("precision") for s in summaries}
        plan_notes = session.state.plan.notes if session.state.plan is not None else []
        lines += [
            _said(n, lang)
            for n in plan_notes
            if n["key"].startswith("speed_")
            and (n.get("args") or {}).get("precision") in ran - compared
        ]
        lines += speed_paragraphs(summaries, lang)
        lines += [shown(message(n.key, n.args, lang)) for n in memory_notes(summaries)]
        # "Ran in fp32" (fp16 through Accelerate or the Trainer on a CPU), not only in the table.
        for s in summaries:
            if s.get("speed_reason") == "ran_fp32":
                for w in s.get("warning_keys") or []:
                    if w.get("key") == "fp16_not_applied":
                        text = message(w["key"], w.get("args") or {}, lang)
                        lines.append(shown(f"{s.get('label')}: {text}"))
    elif session.state.plan is not None:
        # What the plan said; once the runs step at another pace, the re-estimate.
        from ...runs.estimate import eta_note

        revised = eta_note(session.state.estimate) if session.state.estimate is not None else None
        notes = [
            n for n in session.state.plan.notes if revised is None or n["key"] != "plan_expect"
        ]
        notes += [revised.to_dict()] if revised is not None else []
        lines += [_said(n, lang) for n in notes]
        if p.get("kept_steps"):  # a preset's steps are its lesson: the time is said instead
            lines.append(t("status_kept_steps", lang, steps=p["kept_steps"]))
    for label, note in session.state.errors:
        err = error_text(MpdemoError(note.get("key", "failed"), **(note.get("args") or {})), lang)
        lines.append(t("status_run_failed", lang, label=shown(label), error=shown(err)))
    if session.files_error:  # the downloads failed to write: the runs above are all here
        lines.append(t("status_files_failed", lang, error=shown(session.files_error)))
    return folded(lines[:head], lines[head:], lang)


def _said(note: dict[str, Any], lang: str) -> str:
    """An engine note (a dict: key, args) in `lang`, shown as text (a file's names may be in it)."""
    return shown(message(note["key"], note.get("args") or {}, lang))


def repetitions(configs: list[RunConfig]) -> int:
    """How many times the comparison runs (its runs' trial numbers: 0 when once)."""
    return max((c.trial for c in configs), default=0) or 1


def _progress_line(session: Session, lang: str) -> str:
    """Where the comparison is: its runs side by side, run i of n, or its one run; each after
    'Repetition r of R: ' when repeated."""
    p = session.state.progress
    reps, i = repetitions(session.configs), p.get("index", 0)
    base = session.configs[: max(1, len(session.configs) // reps)]  # one repetition's runs
    per = len(base)
    head = t("status_repetition", lang, r=i // per + 1, rs=reps) if reps > 1 else ""
    left = session.state.remaining_s() if p.get("phase") == "running" and p.get("steps") else None
    # Runs that take turns step by step: one line for all (the step is the last run's).
    kind = "together" if per > 1 and side_by_side(base) else "single" if per == 1 else "run"
    keys = {
        "together": ("status_together_preparing", "status_together"),
        "single": ("status_single_preparing", "status_single_running"),
        "run": ("status_preparing", "status_running"),
    }
    args = {
        "n": per,
        "i": i % per + 1,
        "label": shown(p.get("label", "")),
        "step": p.get("step", 0),
    }
    if left is None:
        return head + t(keys[kind][0], lang, **args)
    return head + t(keys[kind][1], lang, **args, steps=p["steps"], left=duration_text(left))


def why_slower(summaries: list[Summary], lang: str) -> list[str]:
    """One sentence a precision slower than fp32 on this CPU: it lacks the instructions, or the
    size decides."""
    slower = dict.fromkeys(
        s.get("precision")
        for s in summaries
        if s.get("speed_verdict") == "slower"
        and str(s.get("device") or "cpu").startswith("cpu")
        and not s.get("machine")  # this page's runs, not an opened file's
    )
    if not slower:
        return []
    machine = engine.machine_info()
    lesson = message("lesson_where_it_pays_title", {}, lang)
    out = []
    for p in slower:
        why = engine.hardware_reason(machine, str(p), "cpu")
        args = {k: shown(v) for k, v in why["args"].items()}
        key = "why_slower_has" if why["key"] == "hw_cpu_has" else "why_slower_lacks"
        out.append(t(key, lang, **{**args, "precision": shown(p), "lesson": lesson}))
    return out


def speed_paragraphs(summaries: list[Summary], lang: str) -> list[str]:
    """The runs' speed sentences, each after the runs it is about ('**torch · fp16**: ...'); runs
    whose sentence is the same share one."""
    machine = engine.machine_info()
    bases = [s for s in summaries if s.get("precision") == "fp32"]
    named: dict[str, list[str]] = {}  # sentence -> the runs it is about, in grid order
    out: list[str] = []
    for s in summaries:
        if s.get("precision") == "fp32":
            continue
        for n in run_speed_notes([*bases, s], machine):
            text = shown(message(n.key, n.args, lang))
            if n.key == "load_changed":  # names its two runs already
                out.append(text)
            else:
                named.setdefault(text, []).append(f"**{shown(s.get('label', ''))}**")
    return [f"{', '.join(labels)}: {text}" for text, labels in named.items()] + out


def lost_updates_text(runs: list[dict[str, Any]], lang: str) -> str:
    """'Updates that rounded away, on average a step: torch · bf16 0%; ...', '' when none counted."""
    shares = []
    for r in runs:
        share = r["summary"].get("lost_update_share")
        if share is not None:
            shares.append(f"{shown(r['summary'].get('label', ''))}: **{pct(share, lang)}**")
    return t("status_lost_updates", lang, runs="; ".join(shares)) if shares else ""


def folded(head: list[str], details: list[str], lang: str) -> str:
    """The status: its first sentence(s), then the measurement's details folded below them."""
    if not details:
        return "\n\n".join(head)
    body = "\n\n".join(details)
    summary = t("status_details", lang)
    return "\n\n".join(head) + f"\n\n<details><summary>{summary}</summary>\n\n{body}\n\n</details>"


def runner_runs(runner: RunnerInterface | None) -> list[Run]:
    """The runner's finished runs, ahead of this page's stream (which may lag behind a Stop)."""
    return runner.state.fold.finished if runner is not None else []


def stopped_text(runs: list[Run], lang: str) -> str | None:
    """'Stopped: label stopped at step k of N...' for the last stopped run of `runs`, else None."""
    stopped = [r for r in runs if r["status"] == "stopped"]
    if not stopped:
        return None
    s, steps = stopped[-1]["summary"], (stopped[-1]["config"] or {}).get("steps", "?")
    label = shown(s.get("label", ""))
    return t("status_stopped", lang, label=label, step=s.get("steps", 0), steps=steps)


def idle_status(session: Session | None, lang: str) -> str:
    """The status line of a session that is not training, in `lang`."""
    if session is not None and session.input_error is not None:
        return t("status_not_started", lang, error=shown(error_text(session.input_error, lang)))
    if session is not None and session.runs:
        return status_text(session, lang, finished=True)
    return t("status_idle", lang)
