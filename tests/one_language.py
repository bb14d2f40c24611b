"""Which words on a page belong to another language: the detector the language tests share.

What counts as "another language" comes from the locale files themselves: a word that some other
locale's strings use and this locale's strings never do is a left-over. English also has a
hand-made list, for English that is not in any locale file (gradio's own words, catalog
descriptions).
"""

from __future__ import annotations

import re
from functools import cache

from mpdemo.ui import i18n

# Words that are English and never Spanish or Portuguese. Left out on purpose: words the
# languages share or that Spanish and Portuguese technical prose borrows (a, no, me, son, has,
# once, error, normal, final, total, backend(s), splits, overflow, underflow, subnormal, tensor,
# auto, vs). Any word a locale file itself uses is allowed on that locale's page.
_ENGLISH_WORDS = """
    the and with of is are this that these those when which what where while from to for in on
    at by or an it its be been was were will can not only each every your you than then into
    there here also but if how why about after before between over under below above
    run runs running ran step steps loss losses scale scaled scaling train trains training
    trained click press pick type model models gradient gradients batch slice rows speed
    samples accuracy warnings skipped stopped ready done start stop peak status compute
    computing value values format formats number numbers range smallest largest
    means shows showing see try nothing changes changed because keeps needs stays becomes
"""
ENGLISH = frozenset(_ENGLISH_WORDS.split())

# Names that stay as they are in every language (matched case-sensitively, removed first).
NAMES = [
    "Hugging Face",
    "PyTorch AMP",
    "PyTorch",
    "Accelerate",
    "Trainer",
    "GradScaler",
    "autocast",
    "Micikevicius et al.",
    "FP8 Formats for Deep Learning",  # a paper's title
    "NVIDIA",
    "Transformer Engine",
    "Volta",
    "Ampere",
    "Data Engineer",
    "bert-large-uncased",  # model ids in the published figures' table
    "t5-base",
]

# A token that is code, a number, a unit, an id or a format name rather than a word:
# anything with a digit, an underscore, a dot, a slash, brackets, = or a backtick.
CODE_LIKE = re.compile(r"\S*[\d_./\\\[\](){}=`<>:@#]\S*")
# What the browser test hides before reading (its TEXT_JS), taken out of the templates the same
# way: Markdown links, code spans and fenced blocks.
HIDDEN_MD = re.compile(r"\[[^\]]*\]\([^)]*\)|```.*?```|`[^`]*`", re.S)
WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]+(?:'[a-z]+)?")


def words(text: str) -> list[re.Match]:
    """The prose words of one line of text (names, code and numbers taken out)."""
    for name in NAMES:
        text = text.replace(name, " ")
    return list(WORD.finditer(CODE_LIKE.sub(" ", text)))


@cache
def vocabulary(code: str) -> frozenset[str]:
    """Every word (lower case) of a locale's UI strings and engine messages."""
    loc = i18n.LOCALES[code]
    out = set()
    for template in (*loc.strings.values(), *loc.messages.values()):
        for line in HIDDEN_MD.sub(" ", template).splitlines():
            out.update(m.group(0).lower() for m in words(line))
    return frozenset(out)


@cache
def foreign(code: str) -> frozenset[str]:
    """Words that mark text as another language than `code`'s."""
    others = set(ENGLISH) if code != "en" else set()
    for other in i18n.LANGS:
        if other != code:
            others |= vocabulary(other)
    return frozenset(others - vocabulary(code))


def left_over(text: str, code: str) -> list[str]:
    """Each word of another language in `text`, with a little of its context."""
    bad = foreign(code)
    hits = []
    for line in text.splitlines():
        for m in words(line):
            if m.group(0).lower() in bad:
                hits.append(f"{m.group(0)!r} in {line.strip()[:140]!r}")
    return hits
