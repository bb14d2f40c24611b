"""The lessons (or one comparison) as a Jupyter notebook in the page's language, written as plain
JSON: the app does not depend on the notebook extra (the tests check it with nbformat). Torch-free.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from ..config import RunConfig
from ..files.atomic import write_text_atomic
from ..languages import DEFAULT_LANG, engine_text, norm_lang, t
from ..runs.runner import grid
from ..teach.lessons import get, lesson_of, once, trained_names
from ..teach.listing import changed_fields

# A placeholder until the project has a public home (the README's "In a notebook, on a GPU").
SPEC_PLACEHOLDER = "mpdemo[notebook] @ git+https://HOST/OWNER/mpdemo.git"
NBFORMAT = (4, 5)
# Not a comparison call's fields: the grid's are compare()'s arguments, the device the notebook's.
GRID_FIELDS = ("backend", "precision", "weights", "trial", "device")

INSTALL = """\
# Installs mpdemo with its notebook extra where it is missing (a fresh Colab or Kaggle runtime).
# MPDEMO_SPEC is a placeholder: the README's "In a notebook, on a GPU" names what to put here
# (the project's git URL, or the folder of a copy uploaded to the runtime, "/content/mpdemo[notebook]").
MPDEMO_SPEC = {spec!r}
import importlib.util
import subprocess
import sys

if any(importlib.util.find_spec(m) is None for m in ("mpdemo", "matplotlib", "tqdm")):
    if "HOST/OWNER" in MPDEMO_SPEC:
        raise SystemExit("mpdemo is not installed here: set MPDEMO_SPEC above (see the README)")
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", MPDEMO_SPEC])
"""

RUNTIME = """\
from mpdemo.notebook import compare, lesson, runtime

print(runtime(lang={lang!r}))  # the GPU the lessons train on, or this CPU
results = {{}}  # each lesson's runs, saved at the end
"""

RUN_IMPORT = "from mpdemo import RunConfig\nfrom mpdemo.notebook import run\n\n"

SAVE = """\
# Each lesson's runs as the runs JSON the page opens (lesson-<name>-<device>.json).
for r in results.values():
    if r.runs:
        print(r.save())
"""


def _markdown(text: str) -> dict[str, object]:
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(source: str) -> dict[str, object]:
    return {
        "cell_type": "code",
        "metadata": {},
        "source": source.rstrip("\n"),
        "outputs": [],
        "execution_count": None,
    }


def _document(middle: list[dict[str, object]], lang: str) -> dict[str, object]:
    """nbformat 4.5's document: the install and runtime cells, `middle`, the cell that saves the
    runs, all numbered; a Python 3 kernel; the page's language."""
    save_md = t(
        "nb_save_md", lang, recorded=t("recorded_label", lang), open=t("open_runs_btn", lang)
    )
    cells = [
        _markdown(f"# {t('nb_title', lang)}\n\n{t('nb_intro', lang)}"),
        _code(INSTALL.format(spec=SPEC_PLACEHOLDER)),
        _markdown(t("nb_runtime_md", lang)),
        _code(RUNTIME.format(lang=lang)),
        *middle,
        _markdown(save_md),
        _code(SAVE),
    ]
    for i, cell in enumerate(cells, 1):
        cell["id"] = f"mpdemo-{i}"
    return {
        "nbformat": NBFORMAT[0],
        "nbformat_minor": NBFORMAT[1],
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
            "accelerator": "GPU",  # Colab opens it on a GPU runtime where one is free
            "mpdemo": {"lang": lang},
        },
        "cells": cells,
    }


def lesson_cells(name: str, i: int, lang: str) -> list[dict[str, object]]:
    """A lesson's Markdown (its title, slide and what to look for) and the cell that runs it."""
    les = get(name, trained_names())

    def say(part: str) -> str:
        return engine_text(f"lesson_{les.key}_{part}", {}, lang)

    text = (
        f"## {i}. {say('title')}\n\n**{t('nb_slide', lang)}** {say('slide')}\n\n"
        f"**{t('nb_look', lang)}** {say('look')}"
    )
    code = f"results[{name!r}] = lesson({name!r}, lang={lang!r})"
    return [_markdown(text), _code(code)]


def lessons_notebook(names: Iterable[str] = (), lang: str = DEFAULT_LANG) -> dict[str, object]:
    """The notebook of `names` (every lesson that trains runs when none), in `lang`."""
    lang = norm_lang(lang)
    chosen = list(names) or trained_names()
    cells = [cell for i, name in enumerate(chosen, 1) for cell in lesson_cells(name, i, lang)]
    return _document(cells, lang)


def comparison_notebook(configs: list[RunConfig], lang: str = DEFAULT_LANG) -> dict[str, object]:
    """The notebook of one comparison: its lesson's notebook, else a compare(...) call."""
    lang = norm_lang(lang)
    lesson = lesson_of(configs, any_device=True)
    if lesson is not None:
        return lessons_notebook([lesson.name], lang)
    labels = ", ".join(c.label for c in once(configs))
    call = comparison_call(configs, lang)
    head = "" if call.startswith("compare(") else RUN_IMPORT
    md = _markdown(t("nb_comparison_md", lang, runs=labels))
    return _document([md, _code(f'{head}results["comparison"] = {call}')], lang)


def _same_runs(a: list[RunConfig], b: list[RunConfig]) -> bool:
    """The same runs, whatever device each was asked for."""
    return [c.replace(device="auto") for c in a] == [c.replace(device="auto") for c in b]


def comparison_call(configs: list[RunConfig], lang: str = DEFAULT_LANG) -> str:
    """compare(...)'s call for a grid: its backends and precisions, and each RunConfig field
    its runs share that differs from the default; a grid compare() cannot make (runs picked
    one by one) is run from its own RunConfigs."""
    one = once(configs)
    repeat = max([c.trial for c in configs] + [1])
    default = RunConfig()
    skip = (*GRID_FIELDS, "loss_scaling")
    shared = {k: v for k, v in changed_fields(one[0]).items() if k not in skip}
    scaled = {c.loss_scaling for c in one}
    backends = list(dict.fromkeys(c.backend for c in one))
    precisions = list(dict.fromkeys(c.precision for c in one))
    weights = list(dict.fromkeys(c.weights for c in one))
    compare_scaling = len(scaled) > 1
    if not compare_scaling and scaled != {default.loss_scaling}:
        shared["loss_scaling"] = scaled.pop()
    base = RunConfig(**shared)
    extra = "" if repeat == 1 else f", repeat={repeat}"
    if _same_runs(one, grid(base, backends, precisions, compare_scaling, weights)):
        args = [f"backends={backends!r}", f"precisions={precisions!r}"]
        if compare_scaling:
            args.append("compare_scaling=True")
        if weights != [default.weights]:
            args.append(f"weights={weights!r}")
        args += [f"{k}={v!r}" for k, v in shared.items()]
        return f"compare({', '.join(args)}{extra}, lang={lang!r})"
    # Runs picked one by one: their own RunConfigs, through the same runner.
    rows = "".join(
        f"    RunConfig(**{ {k: v for k, v in c.to_dict().items() if k != 'device'}!r}),\n"
        for c in one
    )
    return "run([\n" + rows + f']{extra}, lang={lang!r})\nresults["comparison"].show()'


def write_notebook(path: str | Path, doc: dict[str, object]) -> Path:
    """Write a notebook document whole or not at all (the runs files' atomic writer)."""
    write_text_atomic(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    return Path(path)
