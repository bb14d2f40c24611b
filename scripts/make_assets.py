"""Generate the offline teaching assets for mpdemo.

Writes, under ``--out`` (default: the repository's ``assets/`` directory):

* ``reviews/``   -- a ``datasets.DatasetDict`` (train 4000 / validation 800 rows) of short,
  template-generated English reviews with a binary sentiment label;
* ``tokenizer/`` -- a small WordPiece tokenizer trained on the train texts only, saved as a
  ``transformers`` fast tokenizer;
* ``README.md``  -- a short description of the two.

Everything is generated from a fixed ``random.Random(seed)`` and word lists in this file: no
network access, and no dependence on set/dict iteration order. Running the script twice gives
byte-identical ``tokenizer.json`` files and identical dataset rows.

The label depends on the wording in ways a tiny model has to learn rather than look up:
polar adjectives and verbs, negation that flips polarity ("not good", "never boring", "wasn't
worth it"), intensifiers, "and"-joined clauses of the same polarity, contrast sentences in which
the last clause decides ("A, but B", "although A, B", "A. however, B"), neutral filler, and about
6% label noise. The mix (CLAUSES, CONTRAST_RATE, AND_RATE) is tuned so that a 2-layer, hidden-64
BERT (batch 32, AdamW lr 1e-3) sits at chance for the first few dozen steps and reaches ~0.8
validation accuracy by step 100, and ~0.9 only after about a thousand steps.

Usage::

    python scripts/make_assets.py [--out assets] [--seed 1234]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
from pathlib import Path

N_TRAIN = 4000
N_VALIDATION = 800
LABEL_NOISE = 0.06
MIN_WORDS = 5
MAX_WORDS = 25
VOCAB_SIZE = 2048
SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
LABEL_NAMES = ["negative", "positive"]
DEFAULT_SEED = 1234

# ---------------------------------------------------------------------------------------------
# Word lists. Subjects are (noun phrase, is_plural).
# ---------------------------------------------------------------------------------------------

DOMAINS = ["film", "book", "restaurant", "product"]

SUBJECTS = {
    "film": [
        ("movie", False),
        ("film", False),
        ("plot", False),
        ("acting", False),
        ("soundtrack", False),
        ("ending", False),
        ("script", False),
        ("dialogue", False),
        ("director", False),
        ("characters", True),
        ("special effects", True),
        ("actors", True),
    ],
    "book": [
        ("novel", False),
        ("book", False),
        ("story", False),
        ("writing", False),
        ("ending", False),
        ("prose", False),
        ("author", False),
        ("translation", False),
        ("characters", True),
        ("chapters", True),
        ("descriptions", True),
    ],
    "restaurant": [
        ("food", False),
        ("service", False),
        ("pasta", False),
        ("dessert", False),
        ("soup", False),
        ("menu", False),
        ("atmosphere", False),
        ("pizza", False),
        ("waiters", True),
        ("portions", True),
        ("prices", True),
        ("staff", True),
    ],
    "product": [
        ("phone", False),
        ("blender", False),
        ("charger", False),
        ("battery", False),
        ("keyboard", False),
        ("camera", False),
        ("speaker", False),
        ("vacuum", False),
        ("laptop", False),
        ("headphones", True),
        ("buttons", True),
        ("instructions", True),
    ],
}

# Short names used in "I loved this ___" / "I would recommend this ___".
ITEMS = {
    "film": ["movie", "film", "show", "sequel"],
    "book": ["book", "novel", "memoir", "thriller"],
    "restaurant": ["restaurant", "place", "cafe", "diner"],
    "product": ["phone", "blender", "laptop", "gadget", "charger"],
}

POS_ADJ = [
    "good",
    "great",
    "excellent",
    "wonderful",
    "brilliant",
    "fantastic",
    "superb",
    "lovely",
    "enjoyable",
    "impressive",
    "solid",
    "pleasant",
    "outstanding",
    "delightful",
    "amazing",
    "perfect",
    "charming",
    "satisfying",
    "memorable",
    "terrific",
]
NEG_ADJ = [
    "bad",
    "terrible",
    "awful",
    "boring",
    "dull",
    "disappointing",
    "weak",
    "poor",
    "mediocre",
    "tedious",
    "annoying",
    "horrible",
    "forgettable",
    "dreadful",
    "awkward",
    "frustrating",
    "lousy",
    "unpleasant",
    "sloppy",
    "pathetic",
]
DOMAIN_POS_ADJ = {
    "film": ["gripping", "moving", "hilarious", "stunning", "clever"],
    "book": ["engaging", "thoughtful", "beautiful", "insightful", "witty"],
    "restaurant": ["tasty", "delicious", "fresh", "friendly", "generous"],
    "product": ["reliable", "sturdy", "fast", "comfortable", "handy"],
}
DOMAIN_NEG_ADJ = {
    "film": ["predictable", "confusing", "slow", "clumsy", "cheesy"],
    "book": ["shallow", "repetitive", "pretentious", "bland", "clumsy"],
    "restaurant": ["bland", "stale", "rude", "greasy", "overpriced"],
    "product": ["flimsy", "noisy", "broken", "cheap", "useless"],
}

INTENSIFIERS = [
    "very",
    "really",
    "extremely",
    "incredibly",
    "truly",
    "quite",
    "pretty",
    "remarkably",
    "genuinely",
    "so",
]

# (past tense, base form)
POS_VERBS = [
    ("loved", "love"),
    ("enjoyed", "enjoy"),
    ("liked", "like"),
    ("adored", "adore"),
    ("appreciated", "appreciate"),
    ("admired", "admire"),
]
NEG_VERBS = [
    ("hated", "hate"),
    ("disliked", "dislike"),
    ("regretted", "regret"),
    ("despised", "despise"),
    ("resented", "resent"),
]
VERB_ADVERBS = ["really", "truly", "absolutely", "honestly", "totally"]

POS_NOUN_PHRASES = [
    "a real gem",
    "a pleasant surprise",
    "a delight",
    "a joy",
    "a triumph",
    "a great find",
]
NEG_NOUN_PHRASES = [
    "a waste of time",
    "a waste of money",
    "a total letdown",
    "a mess",
    "a disaster",
    "a huge disappointment",
]

WORTH_OBJECTS = ["it", "the money", "the price", "the wait", "the hype", "every penny"]

FILLER_PREFIXES = [
    "honestly",
    "overall",
    "to be fair",
    "in my opinion",
    "frankly",
    "all in all",
    "i have to say",
    "as expected",
    "surprisingly",
    "for me",
]
FILLER_SUFFIXES = [
    "to be honest",
    "in my view",
    "if you ask me",
    "for the most part",
    "as far as i can tell",
]
CONTEXT = {
    "film": [
        "we watched it last weekend",
        "i saw it at the cinema on friday",
        "we streamed it after dinner",
        "i went with my sister",
        "my friends picked it for movie night",
    ],
    "book": [
        "i read it on holiday",
        "my book club chose it this month",
        "i finished it on the train",
        "a friend lent me a copy",
        "i picked it up at the library",
    ],
    "restaurant": [
        "we had dinner there on saturday",
        "we went for lunch with the kids",
        "i booked a table for two",
        "we stopped by after work",
        "it is near our office",
    ],
    "product": [
        "i bought it last month",
        "it arrived two days early",
        "i have used it every day for a week",
        "it was a birthday present",
        "i ordered it online",
    ],
}

# ---------------------------------------------------------------------------------------------
# Clause generators. Each returns a lower-case clause whose polarity is ``pos``.
# ---------------------------------------------------------------------------------------------


def _adj(rng: random.Random, domain: str, pos: bool) -> str:
    pool = (POS_ADJ + DOMAIN_POS_ADJ[domain]) if pos else (NEG_ADJ + DOMAIN_NEG_ADJ[domain])
    return rng.choice(pool)


def _np(rng: random.Random, domain: str) -> tuple[str, bool]:
    noun, plural = rng.choice(SUBJECTS[domain])
    det = rng.choice(["the", "the", "the", "this", "that"]) if not plural else "the"
    return f"{det} {noun}", plural


def _be(rng: random.Random, plural: bool) -> str:
    past = rng.random() < 0.7
    if plural:
        return "were" if past else "are"
    return "was" if past else "is"


def _be_negated(rng: random.Random, plural: bool) -> str:
    be = _be(rng, plural)
    form = rng.choice(["not", "n't", "never", "not", "n't", "hardly"])
    if form == "n't":
        return be + "n't"
    return f"{be} {form}"


def _maybe_intensifier(rng: random.Random, p: float = 0.4) -> str:
    return rng.choice(INTENSIFIERS) + " " if rng.random() < p else ""


def clause_copula(rng: random.Random, domain: str, pos: bool) -> str:
    """'the plot was really gripping' -- polarity of the adjective."""
    subj, plural = _np(rng, domain)
    return f"{subj} {_be(rng, plural)} {_maybe_intensifier(rng)}{_adj(rng, domain, pos)}"


def clause_copula_negated(rng: random.Random, domain: str, pos: bool) -> str:
    """'the service wasn't very friendly' -- negation flips the adjective."""
    subj, plural = _np(rng, domain)
    neg = _be_negated(rng, plural)
    intens = "" if neg.endswith("hardly") else _maybe_intensifier(rng, 0.3)
    return f"{subj} {neg} {intens}{_adj(rng, domain, not pos)}"


def clause_verb(rng: random.Random, domain: str, pos: bool) -> str:
    """'i really enjoyed this novel' / 'i didn't like the soup' (negated flips)."""
    negated = rng.random() < 0.45
    verb_pos = pos != negated
    past, base = rng.choice(POS_VERBS if verb_pos else NEG_VERBS)
    obj = f"this {rng.choice(ITEMS[domain])}" if rng.random() < 0.5 else _np(rng, domain)[0]
    if negated:
        neg = rng.choice(["did not", "didn't", "never", "do not", "don't"])
        verb = past if neg == "never" else base
        return f"i {neg} {verb} {obj}"
    adverb = rng.choice(VERB_ADVERBS) + " " if rng.random() < 0.35 else ""
    return f"i {adverb}{past} {obj}"


def clause_recommend(rng: random.Random, domain: str, pos: bool) -> str:
    """'i would not recommend this cafe' -- negation decides."""
    item = rng.choice(ITEMS[domain])
    if pos:
        verb = rng.choice(["would recommend", "would definitely recommend", "can recommend"])
    else:
        verb = rng.choice(["would not recommend", "wouldn't recommend", "can't recommend"])
    return f"i {verb} this {item}"


def clause_worth(rng: random.Random, domain: str, pos: bool) -> str:
    """'it wasn't worth the money' / 'the pasta was worth the wait'."""
    if rng.random() < 0.5:
        subj, plural = "it", False
    else:
        subj, plural = _np(rng, domain)
    obj = rng.choice(WORTH_OBJECTS)
    if pos:
        adverb = rng.choice(["", "", "totally ", "definitely ", "well "])
        return f"{subj} {_be(rng, plural)} {adverb}worth {obj}"
    return f"{subj} {_be_negated(rng, plural)} worth {obj}"


def clause_noun_phrase(rng: random.Random, domain: str, pos: bool) -> str:
    """'the movie was a real gem' / 'this blender was not a waste of money'."""
    subj, plural = _np(rng, domain)
    if plural or rng.random() < 0.5:
        subj, plural = f"this {rng.choice(ITEMS[domain])}", False
    if rng.random() < 0.3:
        phrase = rng.choice(NEG_NOUN_PHRASES if pos else POS_NOUN_PHRASES)
        return f"{subj} {_be_negated(rng, plural)} {phrase}"
    phrase = rng.choice(POS_NOUN_PHRASES if pos else NEG_NOUN_PHRASES)
    return f"{subj} {_be(rng, plural)} {phrase}"


# (generator, weight)
CLAUSES = [
    (clause_copula, 0.70),
    (clause_copula_negated, 0.10),
    (clause_verb, 0.12),
    (clause_recommend, 0.03),
    (clause_worth, 0.03),
    (clause_noun_phrase, 0.02),
]
CONTRAST_RATE = 0.08
AND_RATE = 0.30
FILLER_RATE = 0.35
CONTEXT_RATE = 0.2


def _clause(rng: random.Random, domain: str, pos: bool) -> str:
    funcs = [c[0] for c in CLAUSES]
    weights = [c[1] for c in CLAUSES]
    return rng.choices(funcs, weights=weights, k=1)[0](rng, domain, pos)


def _nouns(clause: str, domain: str) -> list[str]:
    padded = f" {clause} "
    nouns = [n for n, _ in SUBJECTS[domain]] + ITEMS[domain]
    return [n for n in nouns if f" {n} " in padded]


def make_sentence(rng: random.Random, pos: bool) -> str:
    """One review whose (noise-free) polarity is ``pos``."""
    domain = rng.choice(DOMAINS)
    if rng.random() < CONTRAST_RATE:
        first = _clause(rng, domain, not pos)
        second = _clause(rng, domain, pos)
        for _ in range(5):  # prefer two different subjects ("the plot ..., but the cast ...")
            if not set(_nouns(first, domain)) & set(_nouns(second, domain)):
                break
            second = _clause(rng, domain, pos)
        style = rng.choice(["but", "but", "although", "however"])
        if style == "but":
            body = f"{first}, but {second}"
        elif style == "although":
            body = f"although {first}, {second}"
        else:
            body = f"{first}. however, {second}"
    elif rng.random() < AND_RATE:
        first = _clause(rng, domain, pos)
        second = _clause(rng, domain, pos)
        body = f"{first} and {second}"
    else:
        body = _clause(rng, domain, pos)
    r = rng.random()
    if r < FILLER_RATE / 2:
        body = f"{rng.choice(FILLER_PREFIXES)}, {body}"
    elif r < FILLER_RATE:
        body = f"{body}, {rng.choice(FILLER_SUFFIXES)}"
    if rng.random() < CONTEXT_RATE:
        body = f"{rng.choice(CONTEXT[domain])}. {body}"
    body = body + rng.choice([".", ".", ".", "!"])
    # Capitalise the first letter of each sentence and the pronoun "i".
    parts = body.split(". ")
    parts = [p[:1].upper() + p[1:] for p in parts]
    text = ". ".join(parts)
    words = [("I" + w[1:] if w == "i" or w.startswith("i'") else w) for w in text.split(" ")]
    return " ".join(words)


def generate_rows(seed: int, n: int) -> list[tuple[str, int]]:
    """``n`` distinct (text, label) rows, deterministic in ``seed``."""
    rng = random.Random(seed)
    rows: list[tuple[str, int]] = []
    seen: set[str] = set()  # membership only; never iterated
    while len(rows) < n:
        pos = rng.random() < 0.5
        text = make_sentence(rng, pos)
        n_words = len(text.split())
        if not MIN_WORDS <= n_words <= MAX_WORDS or text in seen:
            continue
        seen.add(text)
        label = int(pos)
        if rng.random() < LABEL_NOISE:
            label = 1 - label
        rows.append((text, label))
    return rows


# ---------------------------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------------------------


def build_dataset(rows: list[tuple[str, int]]):
    import datasets

    datasets.disable_progress_bars()

    features = datasets.Features(
        {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=LABEL_NAMES)}
    )
    splits = {"train": rows[:N_TRAIN], "validation": rows[N_TRAIN : N_TRAIN + N_VALIDATION]}
    out = {}
    for name, split_rows in splits.items():
        texts = [t for t, _ in split_rows]
        labels = [lab for _, lab in split_rows]
        ds = datasets.Dataset.from_dict(
            {"text": texts, "label": labels}, features=features, split=name
        )
        # A content hash instead of the random in-memory fingerprint, so that state.json is
        # identical between runs.
        fingerprint = hashlib.sha256(json.dumps([name, texts, labels]).encode("utf-8")).hexdigest()[
            :16
        ]
        out[name] = datasets.Dataset(ds.data, info=ds.info, split=ds.split, fingerprint=fingerprint)
    return datasets.DatasetDict(out)


def train_tokenizer(texts: list[str]):
    from tokenizers import (
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )
    from transformers import PreTrainedTokenizerFast

    def fresh(vocab=None) -> Tokenizer:
        tok = Tokenizer(
            models.WordPiece(vocab=vocab, unk_token="[UNK]", max_input_chars_per_word=100)
        )
        tok.normalizer = normalizers.Sequence(
            [normalizers.NFD(), normalizers.Lowercase(), normalizers.StripAccents()]
        )
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece(prefix="##")
        return tok

    # The trainer gives the continuing-subword characters ("##e") ids in hash-map order, and
    # ties between equally frequent merges are broken by id, so a plain run is not
    # reproducible (even the set of learned pieces changes). Seeding those "##x" pieces, sorted,
    # through the trainer's special-token list fixes their ids and makes training deterministic.
    tok = fresh()
    continuing = set()  # membership only; sorted before use
    for text in texts:
        normalized = tok.normalizer.normalize_str(text)
        for word, _ in tok.pre_tokenizer.pre_tokenize_str(normalized):
            continuing.update(word[1:])
    seeded = ["##" + c for c in sorted(continuing)]
    trainer = trainers.WordPieceTrainer(
        vocab_size=VOCAB_SIZE,
        min_frequency=1,
        special_tokens=SPECIAL_TOKENS + seeded,
        continuing_subword_prefix="##",
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer, length=len(texts))

    # Rebuild the model with only the five real special tokens, BERT-style id order: specials,
    # single characters, "##" characters, then the learned pieces in merge order. WordPiece
    # segmentation is greedy longest-match, so the numbering does not change any segmentation.
    trained = tok.get_vocab()
    others = [p for p in trained if p not in SPECIAL_TOKENS]
    others.sort(key=lambda p: (0 if len(p) == 1 else 1 if p in seeded else 2, trained[p]))
    vocab = {p: i for i, p in enumerate(SPECIAL_TOKENS + others)}
    tok = fresh(vocab)
    tok.add_special_tokens(SPECIAL_TOKENS)
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        bos_token="[CLS]",
        eos_token="[SEP]",
        model_max_length=128,
        # Glue "wasn ' t" back to "wasn't" and "good ," to "good," when decoding whole texts.
        clean_up_tokenization_spaces=True,
    )


README = """\
# mpdemo assets (generated)

- `reviews/`: `datasets.DatasetDict` saved with `save_to_disk`; splits train ({n_train} rows) \
and validation ({n_val} rows), features `text` (string) and `label` (ClassLabel negative/positive).
- The reviews are synthetic sentences about films, books, restaurants and products built from \
templates and word lists, with negation, intensifiers, but/although contrasts and ~6% label noise \
(in both splits).
- Train and validation share no identical sentence; train is {train_pos:.1%} positive, \
validation {val_pos:.1%}.
- `tokenizer/`: WordPiece tokenizer (lowercase, NFD, strip accents; BertPreTokenizer) trained \
on the train texts only; load with `AutoTokenizer.from_pretrained("assets/tokenizer")`.
- Vocabulary size: {vocab_size} (5 specials: [PAD]=0, [UNK], [CLS], [SEP], [MASK]); \
[CLS]/[SEP] double as bos/eos for the tiny LM; model_max_length 128.
- Made by `python scripts/make_assets.py` (seed {seed}); deterministic, no network needed.
- Re-running the script overwrites `reviews/`, `tokenizer/` and this README with identical \
content.
- Licence: generated data, released under CC0 1.0 (public domain dedication).
"""


def write_assets(out: Path, seed: int = DEFAULT_SEED) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    rows = generate_rows(seed, N_TRAIN + N_VALIDATION)
    dsd = build_dataset(rows)
    reviews_dir = out / "reviews"
    if reviews_dir.exists():
        shutil.rmtree(reviews_dir)
    dsd.save_to_disk(str(reviews_dir))
    for stray in out.rglob("cache-*.arrow"):
        stray.unlink()

    tokenizer = train_tokenizer(dsd["train"]["text"])
    tok_dir = out / "tokenizer"
    if tok_dir.exists():
        shutil.rmtree(tok_dir)
    tokenizer.save_pretrained(str(tok_dir))
    # Name a class that AutoTokenizer can always resolve.
    cfg_path = tok_dir / "tokenizer_config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    cfg["tokenizer_class"] = "PreTrainedTokenizerFast"
    cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n", encoding="utf-8")

    stats = {
        "n_train": dsd["train"].num_rows,
        "n_val": dsd["validation"].num_rows,
        "train_pos": sum(dsd["train"]["label"]) / dsd["train"].num_rows,
        "val_pos": sum(dsd["validation"]["label"]) / dsd["validation"].num_rows,
        "vocab_size": len(tokenizer),
        "seed": seed,
    }
    (out / "README.md").write_text(README.format(**stats), encoding="utf-8")
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent.parent / "mpdemo" / "assets",
        help="output directory (default: the repository's assets/)",
    )
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args()
    stats = write_assets(args.out, args.seed)
    print(json.dumps(stats, indent=2))


if __name__ == "__main__":
    main()
