"""The course's listings, and a loop compared with them line by line, each change explained."""

from __future__ import annotations

import difflib
import io
import re
import tokenize
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Line:
    """One line of the listing and how it compares with the course's."""

    text: str  # as shown: settings filled in, comments kept
    code: str  # the same without its comment ("" for a comment-only line)
    kind: str  # same | changed | new | mpdemo | neutral (blank, comment, import, bracket)
    why: str | None = None  # the explanation, from the source's comment (changed/new/mpdemo)
    # "start": a `# mpdemo:` comment inside a call (why: its text); "in": a line it folds.
    fold: str = ""


def unique(items: object) -> list[str]:
    """The items once each, in their first order."""
    return list(dict.fromkeys(items))


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
    """A blank, bracket-only or import line: never counted as a difference."""
    norm = _norm(code)
    imports = re.match(r"\s*(from\s+\S+\s+)?import\s", code)
    return not norm or bool(re.fullmatch(r"[()\[\]{},:]*", norm)) or bool(imports)


def _covering_comments(text: str, src: list[_Src]) -> list[str | None]:
    """Per line, the comment block heading it (until a blank line, a new block or a dedent)."""
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
    """Line index -> "start" or "in": a `# mpdemo:` comment inside a call folds the call's lines."""
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
            stmt_mark[s.stmt] = _unmarked(s.comment)
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
    for i, (s, text) in enumerate(zip(src, ours.splitlines(), strict=True)):
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
