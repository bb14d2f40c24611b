"""A backend's `train_loop` read from its module (never retyped), its settings filled in."""

from __future__ import annotations

import ast
import functools
import inspect
import io
import textwrap
import threading
import tokenize

from ..registry import BACKENDS

# ast.parse from many threads at once failed ("AST constructor recursion depth mismatch", 3.11).
PARSE_LOCK = threading.RLock()


def _parse(source: str) -> ast.Module:
    with PARSE_LOCK:
        return ast.parse(source)


@functools.cache
def loop_source(backend: str) -> str:
    """The body of train_loop as module-level code, exactly as written (docstring left out)."""
    with PARSE_LOCK:  # inspect reads and tokenizes the file: once per backend, one thread
        lines, _ = inspect.getsourcelines(BACKENDS[backend].load().train_loop)
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
    sig = inspect.signature(BACKENDS[backend].load().train_loop)
    return [p.name for p in sig.parameters.values() if p.kind is p.KEYWORD_ONLY]


def literal(value: object, imports: list[str] | None = None) -> str:
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
    """repr(text), in double quotes when that needs no escape ("cpu", as the loops write it):
    repr's escapes keep any quote or newline of a folder's name inside the string."""
    r = repr(text)
    if r.startswith("'") and '"' not in text:
        return f'"{r[1:-1]}"'  # no quote of either kind inside: nothing to escape
    return r


def in_docstring(text: str) -> str:
    """`text` escaped for the inside of a triple-quoted docstring: it reads back exactly."""
    # Every " escaped too, so no three in a row can close the docstring early.
    return repr(text)[1:-1].replace('"', '\\"')


def fill_in(source: str, values: dict[str, object], imports: list[str] | None = None) -> str:
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
    """Drop `if False:` blocks (a branch off for this run) and their comments; unwrap `if True:`."""
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
