"""A lesson or comparison run from a notebook cell: DataFrames, the page's plots, its runs JSON."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import engine
from ..cli.common import stop_on_signals
from ..config import RunConfig
from ..engine.machine import machine_info, machine_note
from ..files.machines import machine_tag
from ..files.recorded import write_runs
from ..files.summary import speedup_text, typical_step_s
from ..languages import DEFAULT_LANG, engine_text, norm_lang, t
from ..runs.notes import memory_notes, run_speed_notes
from ..runs.runner import check_memory, grid, repeated, run_grid
from ..runs.state import ComparisonState
from ..teach import lessons as lessons_mod
from ..teach.lesson_recordings import file_name, slug
from . import figures as figs

if TYPE_CHECKING:
    import pandas as pd

    from ..events import Event

Run = dict[str, object]


@dataclass
class Result:
    """What a lesson or comparison trained (finished runs, and the steps of any cut short)."""

    runs: list[Run]  # the runs JSON's entries: config, steps, evals, summary, status
    machine: dict[str, object]
    lang: str = DEFAULT_LANG
    lesson: str | None = None  # the lesson's name, when it was one
    interrupted: bool = False  # the kernel's interrupt stopped it
    partial: list[Run] = field(default_factory=list)  # runs cut short with no end event

    @property
    def steps(self) -> pd.DataFrame:
        """One row per step of every run: the run's label, then the step's fields."""
        import pandas as pd

        rows = [
            {"run": figs.label_of(r), **{k: v for k, v in st.items() if k not in _NOT_SHOWN}}
            for r in [*self.runs, *self.partial]
            for st in r.get("steps", [])
        ]
        return pd.DataFrame(rows)

    @property
    def summary(self) -> pd.DataFrame:
        """One row per finished run: the CLI's table, figures as numbers, the verdict in words."""
        import pandas as pd

        table = pd.DataFrame([_row(r["summary"]) for r in self.runs])
        # The master-weights lesson's point: a column only where a run counted them.
        if "lost updates" in table and table["lost updates"].isna().all():
            table = table.drop(columns="lost updates")
        return table

    @property
    def notes(self) -> list[str]:
        """The page's sentences after the runs: speed vs fp32 (the one verdict rule), memory."""
        summaries = [r["summary"] for r in self.runs]
        notes = [*run_speed_notes(summaries, self.machine), *memory_notes(summaries)]
        return [engine_text(n.key, n.args, self.lang) for n in notes]

    @property
    def verdict(self) -> str:
        """The speed sentences the page says when the runs end (empty with no 16-bit run)."""
        notes = run_speed_notes([r["summary"] for r in self.runs], self.machine)
        return " ".join(engine_text(n.key, n.args, self.lang) for n in notes)

    def figures(self) -> dict[str, object]:
        """The page's three plots (loss, loss scale, step time) as matplotlib Figures."""
        return figs.figures([*self.runs, *self.partial], self.lang)

    def show(self) -> None:
        """Display the table, the sentences and the plots (in a notebook; printed elsewhere)."""
        try:
            from IPython import get_ipython
            from IPython.display import Image, Markdown, display
        except ImportError:
            get_ipython = None  # noqa: N806 - plain Python: print
        if get_ipython is None or get_ipython() is None:
            print(self.summary.to_string(index=False))
            for line in self._lines():
                print(line)
            return
        display(self.summary)
        lines = self._lines()
        if lines:
            display(Markdown("\n\n".join(lines)))
        for fig in self.figures().values():
            display(Image(data=figs.png(fig), format="png"))

    def save(self, path: str | Path | None = None) -> Path:
        """Write the finished runs as the runs JSON the page opens (default: default_name())."""
        if not self.runs:  # the CLI writes none either: mpdemo opens no runs file without runs
            raise ValueError("no run finished: there is no runs file to write")
        path = Path(path or self.default_name())
        write_runs(path, self.runs, self.machine)
        return path

    def default_name(self) -> str:
        """A lesson's `lesson-<name>-<device>.json` (its recording's name), else `runs-<machine>.json`."""
        device = str(self.runs[0]["summary"].get("device") or "cpu") if self.runs else "cpu"
        if self.lesson is not None:
            return file_name(self.lesson, self.machine, device)
        return f"runs-{slug(machine_tag(self.machine), 'machine')}.json"

    def _lines(self) -> list[str]:
        said = t("nb_interrupted", self.lang, runs=len(self.runs))
        return [said, *self.notes] if self.interrupted else self.notes

    def _repr_html_(self) -> str:
        """The summary table and the sentences, when a cell ends with the result."""
        import html

        body = self.summary.to_html(index=False)
        return body + "".join(f"<p>{html.escape(line)}</p>" for line in self._lines())


_NOT_SHOWN = ("kind", "run_id", "label")  # every row is a step of the run named in "run"


def _row(s: dict[str, object]) -> dict[str, object]:
    """A summary as the notebook's table row (the CLI's columns; numbers stay numbers)."""
    step = typical_step_s(s)
    return {
        "run": s.get("label"),
        "device": s.get("device"),
        "ran as": s.get("effective_dtype"),
        "status": s.get("status"),
        "final loss": s.get("final_loss"),
        "eval": s["eval_accuracy"] if s.get("eval_accuracy") is not None else s.get("eval_loss"),
        "step ms": step * 1000 if step else None,
        "samples/s": s.get("samples_per_s"),
        "vs fp32": speedup_text(s),
        "verdict": s.get("speed_verdict"),
        "skipped": s.get("skipped_steps"),
        "final scale": s.get("final_loss_scale"),
        "lost updates": s.get("lost_update_share"),  # share of updates that rounded away
    }


def runtime(lang: str = DEFAULT_LANG) -> str:
    """This runtime in one sentence (the CLI's header): the GPU a lesson trains on, or the CPU."""
    note = machine_note()
    return engine_text(note.key, note.args, lang)


def run(
    configs: list[RunConfig],
    lang: str = DEFAULT_LANG,
    repeat: int = 1,
    progress: bool = True,
    lesson_name: str | None = None,
) -> Result:
    """Train `configs` as one comparison (their runs take turns step by step) and collect it."""
    lang = norm_lang(lang)
    for cfg in configs:
        engine.preflight(cfg)  # bad input: ConfigError before anything trains
    check_memory(configs)
    state = ComparisonState(repeated(configs, repeat))
    bar = _bar(sum(c.steps for c in configs) * repeat) if progress else None

    def on_event(ev: Event) -> None:
        state.apply(ev)
        if ev.kind == "step" and bar is not None:
            bar.update(1)
            if math.isfinite(ev.loss):
                bar.set_postfix_str(f"{ev.label}: loss {ev.loss:.4f}", refresh=False)

    stop = threading.Event()
    # The kernel's interrupt (SIGINT) ends the runs at their next step, a second one at once.
    with stop_on_signals(stop) as caught:
        try:  # stop_on_signals itself catches the second interrupt
            run_grid(configs, on_event, stop, repeat=repeat)
        finally:
            if bar is not None:
                bar.close()
    return Result(
        runs=state.fold.finished,  # with their speed-ups (the fold's), as the CLI's
        machine=state.machine or machine_info(),
        lang=lang,
        lesson=lesson_name,
        interrupted=bool(caught),
        partial=[r for r in state.fold.current.values() if r.get("steps")],
    )


def _bar(total: int) -> Any:
    from tqdm.auto import tqdm  # the notebook's widget bar where it can draw one, else text

    return tqdm(total=total, unit="step", desc="mpdemo")


def lesson(
    name: str,
    device: str = "auto",
    lang: str = DEFAULT_LANG,
    show: bool = True,
    progress: bool = True,
) -> Result:
    """Run one of the course's lessons on `device` (auto: a GPU where there is one), and show it."""
    les = lessons_mod.get(name, lessons_mod.trained_names())
    # The lesson's runs at this device's size, as `mpdemo lesson` trains them (device_sizes.py).
    kind = engine.resolve_device(device).type
    configs = [c.replace(device=device) for c in les.configs(kind)]
    result = run(configs, lang, progress=progress, lesson_name=les.name)
    if show:
        # A lesson whose point a CPU cannot show says so, on a CPU only (the page's sentence).
        devices = {str(r["summary"].get("device") or "").split(":")[0] for r in result.runs}
        if lessons_mod.cpu_note_here(les, devices == {"cpu"}):
            print(engine_text(f"lesson_{les.key}_cpu", {}, lang))
        result.show()
    return result


def compare(
    backends: Iterable[str] = ("torch",),
    precisions: Iterable[str] = ("fp32", "bf16"),
    compare_scaling: bool = False,
    weights: Iterable[str] | None = None,
    repeat: int = 1,
    device: str = "auto",
    lang: str = DEFAULT_LANG,
    show: bool = True,
    progress: bool = True,
    **fields: object,
) -> Result:
    """Run a comparison as the Train tab does: each backend × precision, `fields` set."""
    base = RunConfig(**{**fields, "device": device})
    configs = grid(base, backends, precisions, compare_scaling, weights)
    result = run(configs, lang, repeat=repeat, progress=progress)
    if show:
        result.show()
    return result
