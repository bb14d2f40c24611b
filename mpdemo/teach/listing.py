"""The code on screen is the code that runs: each backend's `train_loop`, read from its module.

`listing(cfg)` reads the loop's source (inspect + tokenize, never retyped), fills in this run's
settings (the loop's keyword-only parameters, from the backend's `settings()`), and compares it
line by line with the course's listing. Every line that differs is explained by the comment on
it (or just above its statement) in the backend's source, so the "what changed" list cannot
drift from the code. `script_for(cfg)` wraps the same text into a runnable reproduce script;
the app's download and `python -m mpdemo code` print exactly that.

A comment line starting with `# mpdemo:` inside a call folds the rest of that call's arguments:
the Code tab shows the course's arguments first and mpdemo's own behind it (the Trainer's
TrainingArguments); the text, the script and what runs are the same either way.
"""

from __future__ import annotations

import ast
import difflib
import functools
import inspect
import io
import re
import shlex
import textwrap
import threading
import tokenize
from dataclasses import dataclass, fields
from typing import Any

from ..config import RunConfig
from ..registry import BACKENDS

# The course's listings, as the slides show them (../shared/seeds/): the one text typed here.
COURSE: dict[str, str] = {
    "torch": """scaler = torch.amp.GradScaler()

for batch in train_dataloader:
    inputs, targets = batch["input_ids"], batch["labels"]
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        outputs = model(inputs, labels=targets)
        loss = outputs.loss
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
    "accelerate": """accelerator = Accelerator(mixed_precision="fp16")

model, optimizer, train_dataloader, lr_scheduler = \\
    accelerator.prepare(model, optimizer, train_dataloader, lr_scheduler)

for batch in train_dataloader:
    inputs, targets = batch["input_ids"], batch["labels"]
    outputs = model(inputs, labels=targets)
    loss = outputs.loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
""",
    "trainer": """training_args = TrainingArguments(
    output_dir="./results",
    evaluation_strategy="epoch",
    fp16=True
)

trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=dataset["train"],
    eval_dataset=dataset["validation"],
    compute_metrics=compute_metrics,
)

trainer.train()
""",
}

MPDEMO_MARK = "mpdemo"  # a comment starting with this marks a line that talks to mpdemo

# Settings the loop reads off prepare()'s result rather than off the run's config: the listing
# keeps their names (the loop's own words: "the model's own device type, not a hard-coded
# 'cpu'" must not sit above a hard-coded "cpu"), and the script defines them from `prep`.
FROM_PREPARED: dict[str, str] = {"device_type": "prep.device.type"}


@dataclass(frozen=True)
class Line:
    """One line of the listing and how it compares with the course's."""

    text: str  # as shown: settings filled in, comments kept
    code: str  # the same without its comment ("" for a comment-only line)
    kind: str  # same | changed | new | mpdemo | neutral (blank, comment, import, bracket)
    why: str | None = None  # the explanation, from the source's comment (changed/new/mpdemo)
    # "start": a `# mpdemo:` comment inside a call (why: its text); "in": a line it folds.
    fold: str = ""


@dataclass(frozen=True)
class Listing:
    """A backend's loop for one run, compared with the course's listing."""

    cfg: RunConfig
    device: str  # the device type the settings were filled in for
    settings: dict[str, Any]
    body: str  # the loop, as module-level code with the settings filled in
    lines: list[Line]
    removed: list[str]  # the course's lines that have no counterpart here
    imports: list[str]  # what the filled-in values need (e.g. a metrics function)

    @property
    def course(self) -> str:
        """The course's listing for this backend."""
        return COURSE[self.cfg.backend]

    def changes(self) -> list[str]:
        """Why the loop differs from the course's: one entry per explanation, in order."""
        return _unique(ln.why for ln in self.lines if ln.kind in ("changed", "new") and ln.why)

    def shown_changes(self) -> list[str]:
        """The explanations of the lines shown unfolded, in order."""
        return _unique(
            ln.why for ln in self.lines if ln.kind in ("changed", "new") and ln.why and not ln.fold
        )

    def folded_changes(self) -> list[str]:
        """The explanations of the folded lines (mpdemo's own arguments) not said above them."""
        shown = set(self.shown_changes())
        return [w for w in self.changes() if w not in shown]

    @property
    def fold_why(self) -> str | None:
        """What the folded arguments are for (the `# mpdemo:` comment), or None: no fold."""
        return next((ln.why for ln in self.lines if ln.fold == "start"), None)

    def mpdemo_lines(self) -> list[str]:
        """What each of mpdemo's own lines does, in order."""
        return _unique(ln.why for ln in self.lines if ln.kind == "mpdemo" and ln.why)


def _unique(items: Any) -> list[str]:
    return list(dict.fromkeys(items))


# --- reading the loop ---------------------------------------------------------------------------


# ast.parse from many of gradio's worker threads at once (30 pages following one comparison)
# failed with "SystemError: AST constructor recursion depth mismatch" (CPython 3.11): every
# parse here takes this lock, each loop's source is parsed once per process, and a listing is
# built once per run settings.
_PARSE_LOCK = threading.RLock()
MAX_LISTINGS = 256
_LISTINGS: dict[tuple[Any, ...], Listing] = {}


def _parse(source: str) -> ast.Module:
    with _PARSE_LOCK:
        return ast.parse(source)


def loop_function(backend: str) -> Any:
    """The backend's train_loop function (imports its module; the libraries load lazily)."""
    module = BACKENDS[backend].load()
    return module.train_loop


@functools.cache
def loop_source(backend: str) -> str:
    """The body of train_loop as module-level code, exactly as written (docstring left out)."""
    with _PARSE_LOCK:  # inspect reads and tokenizes the file: once per backend, one thread
        lines, _ = inspect.getsourcelines(loop_function(backend))
    source = textwrap.dedent("".join(lines))
    fn = _parse(source).body[0]
    first = fn.body[0]  # type: ignore[attr-defined]
    if isinstance(first, ast.Expr) and isinstance(getattr(first.value, "value", None), str):
        start = first.end_lineno  # after the docstring
    else:  # after the signature: the def's first logical line
        toks = tokenize.generate_tokens(io.StringIO(source).readline)
        start = next(t.start[0] for t in toks if t.type == tokenize.NEWLINE)
    body = "".join(source.splitlines(keepends=True)[start:])
    return textwrap.dedent(body).strip("\n") + "\n"


def settings_names(backend: str) -> list[str]:
    """The loop's keyword-only parameters: the settings a listing fills in."""
    sig = inspect.signature(loop_function(backend))
    return [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]


def input_names(backend: str) -> dict[str, str]:
    """The loop's inputs: parameter name -> the attribute of prepare()'s result."""
    module = BACKENDS[backend].load()
    return dict(module.INPUTS)


# --- filling in the settings --------------------------------------------------------------------


def literal(value: Any, imports: list[str] | None = None) -> str:
    """Python source for a setting's value: 'cpu', torch.bfloat16, 65536.0, a function's name."""
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    if isinstance(value, str):
        return _quoted(value)
    if type(value).__module__ == "torch" and type(value).__name__ == "dtype":
        return str(value)  # "torch.bfloat16"
    if callable(value) and hasattr(value, "__module__") and hasattr(value, "__name__"):
        if imports is not None:
            imports.append(f"from {value.__module__} import {value.__name__}")
        return value.__name__
    raise TypeError(f"no literal for a setting of type {type(value).__name__}")


def _quoted(text: str) -> str:
    """repr(text), in double quotes when that needs no escape: "cpu", as the loops write it.

    Always repr's escapes underneath, so a quote, a backslash or a newline in a folder's name
    stays inside the string: a value can never end the literal and run as code.
    """
    r = repr(text)
    if r.startswith("'") and '"' not in text:
        return f'"{r[1:-1]}"'  # no quote of either kind inside: nothing to escape
    return r


def _in_docstring(text: str) -> str:
    """`text` escaped for the inside of a triple-quoted docstring: it reads back exactly."""
    # repr's escapes (backslashes, newlines, control characters), and every " escaped so no
    # three in a row can close the docstring early.
    return repr(text)[1:-1].replace('"', '\\"')


def fill_in(source: str, values: dict[str, Any], imports: list[str] | None = None) -> str:
    """Replace each use of a setting's name by its value (keyword names and attributes stay)."""
    toks = list(tokenize.generate_tokens(io.StringIO(source).readline))
    significant = [t for t in toks if t.type not in (tokenize.NL, tokenize.COMMENT)]
    edits: list[tuple[int, int, int, str]] = []  # (row, col, end_col, text)
    for i, tok in enumerate(significant):
        if tok.type != tokenize.NAME or tok.string not in values:
            continue
        before = significant[i - 1].string if i else ""
        after = significant[i + 1].string if i + 1 < len(significant) else ""
        if before == "." or after == "=":  # an attribute, a keyword argument or an assignment
            continue
        edits.append((tok.start[0], tok.start[1], tok.end[1], literal(values[tok.string], imports)))
    lines = source.splitlines(keepends=True)
    for row, col, end, text in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:col] + text + line[end:]
    return "".join(lines)


def drop_dead_branches(source: str) -> str:
    """Leave out `if False:` blocks and unwrap `if True:` ones, once the settings are filled in.

    A branch on a setting that is off for this run (fp8's, in an fp32 run) does not run, so it
    is not shown, nor the comment block right above it; one that is on is shown unwrapped.
    """
    tree = _parse(source)
    lines = source.splitlines(keepends=True)
    done: list[tuple[int, int]] = []  # (first, last) 1-based line ranges already rewritten
    edits: list[tuple[int, int, list[str]]] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Constant)):
            continue
        if node.orelse or not isinstance(node.test.value, bool):
            continue
        first, last = node.lineno, node.end_lineno or node.lineno
        if any(a <= first and last <= b for a, b in done):
            continue  # inside a branch already handled
        done.append((first, last))
        if node.test.value:  # unwrap: the body, one level less indented
            head = len(lines[first - 1]) - len(lines[first - 1].lstrip())
            inner = node.body[0].col_offset - head
            body = [
                ln if not ln.strip() else ln[inner:] if not ln[:inner].strip() else ln
                for ln in lines[first:last]
            ]
            edits.append((first, last, body))
            continue
        top = first  # drop the branch and the comment lines that head it
        while top > 1 and lines[top - 2].lstrip().startswith("#"):
            top -= 1
        edits.append((top, last, []))
    for first, last, new in sorted(edits, reverse=True):
        lines[first - 1 : last] = new
    return "".join(lines)


# --- comparing with the course ------------------------------------------------------------------


@dataclass
class _Src:
    code: str  # the line without its comment
    comment: str | None  # its trailing (or only) comment, without '#'
    stmt: int  # index of the statement it belongs to (-1: blank or comment-only line)


def _analyse(text: str) -> list[_Src]:
    """Per physical line: code, comment, and the statement it belongs to."""
    lines = text.splitlines()
    out = [_Src(line, None, -1) for line in lines]
    stmt = 0
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        row = tok.start[0] - 1
        if row >= len(out):
            continue
        if tok.type == tokenize.COMMENT:
            out[row].comment = tok.string.lstrip("#").strip()
            out[row].code = lines[row][: tok.start[1]].rstrip()
        elif tok.type == tokenize.NEWLINE:
            stmt += 1
        elif tok.type not in (tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            for r in range(tok.start[0] - 1, tok.end[0]):
                out[r].stmt = stmt
    return out


def _norm(code: str) -> str:
    """A line's code for comparison: no spaces, one quote style, no continuation or trailing comma."""
    text = re.sub(r"\s+", "", code).replace("'", '"').rstrip("\\")
    return text[:-1] if text.endswith(",") else text


def _neutral(code: str) -> bool:
    norm = _norm(code)
    return not norm or bool(re.fullmatch(r"[()\[\]{},:]*", norm)) or _is_import(code)


def _is_import(code: str) -> bool:
    return bool(re.match(r"\s*(from\s+\S+\s+)?import\s", code))


def _covering_comments(text: str, src: list[_Src]) -> list[str | None]:
    """Per line, the comment block that heads its paragraph.

    A block of comment lines explains the lines under it, like a heading, until a blank line,
    the next block at its indentation, or code indented less than the block.
    """
    stack: list[tuple[int, str]] = []  # (indent, text), innermost last
    out: list[str | None] = []
    pending: list[str] = []
    for line, s in zip(text.splitlines(), src, strict=True):
        indent = len(line) - len(line.lstrip())
        if not line.strip():
            stack, pending = [], []
        elif s.stmt < 0 and s.comment is not None and not s.code.strip():
            if not pending:
                stack = [(i, t) for i, t in stack if i < indent]
            pending.append(s.comment)
        else:
            if pending:
                stack.append((indent, " ".join(pending)))
                pending = []
            stack = [(i, t) for i, t in stack if i <= indent]
        out.append(stack[-1][1] if stack else None)
    return out


def _unmarked(comment: str) -> str:
    """A `mpdemo:` comment's words without the mark."""
    return comment[len(MPDEMO_MARK) :].lstrip(":").strip()


def _folds(src: list[_Src]) -> dict[int, str]:
    """Line index -> "start" or "in": a `# mpdemo:` comment line inside a statement (a call's
    arguments) folds the lines under it, up to the line that closes that statement."""
    out: dict[int, str] = {}
    for i, s in enumerate(src):
        if s.stmt >= 0 or s.code.strip() or not (s.comment or "").startswith(MPDEMO_MARK + ":"):
            continue
        before = [j for j in range(i) if src[j].stmt >= 0]
        after = [j for j in range(i + 1, len(src)) if src[j].stmt >= 0]
        if not before or not after or src[before[-1]].stmt != src[after[0]].stmt:
            continue  # between two statements: not inside a call, nothing to fold
        if i in out:
            continue  # a later line of a marker already read
        stmt = src[after[0]].stmt
        last = max(j for j, x in enumerate(src) if x.stmt == stmt)  # the closing line stays
        for j in range(i, after[0]):  # the marker's comment lines: the fold's title
            out[j] = "start"
        for j in range(after[0], last):
            out.setdefault(j, "in")
    return out


def compare(ours: str, course: str) -> tuple[list[Line], list[str]]:
    """Our lines classified against the course's, and the course lines with no counterpart."""
    src = _analyse(ours)
    covering = _covering_comments(ours, src)
    stmt_mark: dict[int, str] = {}
    for s in src:
        if s.stmt >= 0 and s.comment is not None and s.comment.startswith(MPDEMO_MARK):
            stmt_mark[s.stmt] = s.comment[len(MPDEMO_MARK) :].lstrip(":").strip()
    course_lines = [ln for ln in course.splitlines() if _norm(ln)]
    ours_idx = [i for i, s in enumerate(src) if s.stmt >= 0 and not _neutral(s.code)]
    matcher = difflib.SequenceMatcher(
        None, [_norm(c) for c in course_lines], [_norm(src[i].code) for i in ours_idx], False
    )
    kinds: dict[int, str] = {}
    removed: list[str] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        for j in range(b0, b1):
            kinds[ours_idx[j]] = {"equal": "same", "replace": "changed", "insert": "new"}[op]
        if op == "delete":
            removed += course_lines[a0:a1]
    folds = _folds(src)
    lines = []
    for i, s in enumerate(src):
        text = ours.splitlines()[i]
        fold = folds.get(i, "")
        if s.stmt in stmt_mark:
            lines.append(Line(text, s.code, "mpdemo", stmt_mark[s.stmt], fold))
            continue
        if fold == "start":  # the fold's title: the whole comment, on its first line
            first = i == 0 or folds.get(i - 1) != "start"
            title = covering[next(j for j in range(i, len(src)) if src[j].stmt >= 0)]
            why = _unmarked(title or "") if first else None
            lines.append(Line(text, s.code, "neutral", why, fold))
            continue
        kind = kinds.get(i, "neutral")
        why = None
        if kind in ("changed", "new"):
            why = s.comment or covering[i]
            if why and why.startswith(MPDEMO_MARK + ":"):
                why = _unmarked(why)
        lines.append(Line(text, s.code, kind, why, fold))
    return lines, removed


def explanations(backend: str) -> list[str]:
    """Every explanation the backend's loop can show: its comments, as the listing reads them."""
    source = loop_source(backend)
    src = _analyse(source)
    out: list[str] = []
    for s, block in zip(src, _covering_comments(source, src), strict=True):
        if block:
            out.append(_unmarked(block) if block.startswith(MPDEMO_MARK + ":") else block)
        if s.stmt >= 0 and s.comment is not None:
            mark = s.comment.startswith(MPDEMO_MARK)
            out.append(s.comment[len(MPDEMO_MARK) :].lstrip(":").strip() if mark else s.comment)
    return _unique(out)


# --- the listing and the script -----------------------------------------------------------------


def resolve(cfg: RunConfig) -> tuple[Any, str]:
    """The device and task a run of cfg gets (the engine's own checks; raises ConfigError)."""
    from ..engine.core import preflight

    src = preflight(cfg)
    return src.device, src.task


def listing(cfg: RunConfig, device: Any = None, task: str | None = None) -> Listing:
    """The backend's loop for cfg with its settings filled in, compared with the course's."""
    if device is None or task is None:
        device, task = resolve(cfg)
    key = (cfg, str(device), task)
    with _PARSE_LOCK:
        done = _LISTINGS.get(key)
        if done is None:
            done = _listing(cfg, device, task)
            if len(_LISTINGS) >= MAX_LISTINGS:
                _LISTINGS.pop(next(iter(_LISTINGS)))
            _LISTINGS[key] = done
    return done


def _listing(cfg: RunConfig, device: Any, task: str) -> Listing:
    module = BACKENDS[cfg.backend].load()
    values = module.settings(cfg, device, task)
    missing = set(settings_names(cfg.backend)) ^ set(values)
    if missing:  # a loop parameter with no setting (or the reverse): the listing would lie
        raise RuntimeError(f"{cfg.backend}: settings() and train_loop disagree on {missing}")
    imports: list[str] = []
    filled = {k: v for k, v in values.items() if k not in FROM_PREPARED}
    body = drop_dead_branches(fill_in(loop_source(cfg.backend), filled, imports))
    lines, removed = compare(body, COURSE[cfg.backend])
    return Listing(cfg, device.type, values, body, lines, removed, _unique(imports))


def run_command(cfg: RunConfig, command: str = "run") -> str:
    """The `python -m mpdemo run ...` line for cfg (only the flags that differ from defaults)."""
    defaults = RunConfig()
    args = [
        "python",
        "-m",
        "mpdemo",
        command,
        "--backend",
        cfg.backend,
        "--precision",
        cfg.precision,
    ]
    for f in fields(RunConfig):
        value = getattr(cfg, f.name)
        if f.name in ("backend", "precision", "warmup_steps") or value == getattr(defaults, f.name):
            continue
        if isinstance(value, bool):
            value = "on" if value else "off"
        args += ["--" + f.name.replace("_", "-"), str(value)]
    return shlex.join(args)


def _config_lines(cfg: RunConfig) -> str:
    defaults = RunConfig()
    keep = ("model", "backend", "precision", "device", "steps", "batch_size")
    return "\n".join(
        f"    {f.name}={literal(getattr(cfg, f.name))},"
        for f in fields(RunConfig)
        if f.name in keep or getattr(cfg, f.name) != getattr(defaults, f.name)
    )


# The docstring's values go through _in_docstring, the config's through literal(): a setting
# is data in the script, never code (a folder named 'm"""+__import__("os")...' stays a name).
SCRIPT_HEAD = '''"""Reproduce the mpdemo run {label}: the loop mpdemo runs, with this run's settings.

Needs: Python 3.11+ with torch and mpdemo, installed once {install}
Then from any folder: python {filename}
The same run in mpdemo: {command}
It prints `step N  loss L  scale S  skipped B` for each step: the losses of the run above.
"""

import torch

from mpdemo import RunConfig, prepare
from mpdemo.backends.hooks import StepPrinter
{imports}
cfg = RunConfig(
{config}
)
prep = prepare(cfg)  # the same weights and batches as mpdemo's run: same seed, same order
{inputs}
rec = StepPrinter(prep)  # mpdemo: prints each step (in the app, a Recorder times and plots it)

'''


LOCAL_INSTALL = (
    "from mpdemo's folder (its README):\n"
    "pip install torch==2.13.0 -r requirements.txt .   (the bundled data ships inside the package)"
)
SPACE_URL = "https://huggingface.co/spaces/{space}"


def install_text() -> str:
    """How to install mpdemo, for the script's docstring: on a Space, from the Space's own
    repository (its files are the package; a visitor has no mpdemo folder), else the README's."""
    import os
    import shlex

    space = os.environ.get("SPACE_ID", "").strip()
    if not space:
        return LOCAL_INSTALL
    url = SPACE_URL.format(space=space)
    # pyproject lists no dependencies (requirements.txt does, beside it): both come from the
    # repository, the requirements by their raw URL, the package by git.
    reqs = shlex.quote(f"{url}/resolve/main/requirements.txt")
    return (
        f"from this Space's repository ({url}):\n"
        f"pip install torch==2.13.0 -r {reqs} {shlex.quote('git+' + url)}"
    )


def script_filename(cfg: RunConfig) -> str:
    """The download's file name."""
    unscaled = "_s1" if cfg.unscaled else ""  # 'fp16 · S=1'
    return f"mpdemo_{cfg.backend}_{cfg.precision}{unscaled}.py"


def script_for(cfg: RunConfig, device: Any = None, task: str | None = None) -> str:
    """The runnable script that reproduces cfg: prepare(), then the backend's loop as it runs."""
    return script_of(listing(cfg, device, task))


def script_of(lst: Listing) -> str:
    """The reproduce script around a listing: its body is the listing's text, unchanged."""
    cfg = lst.cfg
    pinned = cfg.replace(device=lst.device)  # the device the settings were filled in for
    inputs = [f"{name} = prep.{attr}" for name, attr in input_names(cfg.backend).items()]
    inputs += [  # what the loop reads off prep, with this run's value beside it
        f"{name} = {FROM_PREPARED[name]}  # {literal(value)} for this run"
        for name, value in lst.settings.items()
        if name in FROM_PREPARED
    ]
    head = SCRIPT_HEAD.format(
        label=_in_docstring(repr(cfg.label)),
        install="\n".join(_in_docstring(line) for line in install_text().split("\n")),
        command=_in_docstring(run_command(pinned)),
        filename=_in_docstring(script_filename(cfg)),
        imports="".join(line + "\n" for line in lst.imports),
        config=_config_lines(pinned),
        inputs="\n".join(inputs),
    )
    return head + lst.body
