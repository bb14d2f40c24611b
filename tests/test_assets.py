"""Checks on the generated offline assets (made by ``python scripts/make_assets.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parent.parent / "mpdemo" / "assets"
NEGATION = re.compile(r"\b(?:not|never|hardly)\b|n't\b")


@pytest.fixture(scope="module")
def reviews():
    datasets = pytest.importorskip("datasets")
    path = ASSETS / "reviews"
    assert path.is_dir(), f"{path} is missing: run python scripts/make_assets.py"
    return datasets.load_from_disk(str(path))


@pytest.fixture(scope="module")
def tokenizer():
    transformers = pytest.importorskip("transformers")
    path = ASSETS / "tokenizer"
    assert path.is_dir(), f"{path} is missing: run python scripts/make_assets.py"
    return transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)


def test_split_sizes_and_features(reviews):
    assert sorted(reviews) == ["train", "validation"]
    assert reviews["train"].num_rows == 4000
    assert reviews["validation"].num_rows == 800
    for split in reviews.values():
        assert split.features["label"].names == ["negative", "positive"]
        assert split.features["text"].dtype == "string"


def test_classes_roughly_balanced(reviews):
    for name, split in reviews.items():
        share = sum(split["label"]) / split.num_rows
        assert 0.4 <= share <= 0.6, f"{name}: {share:.1%} positive"


def test_sentence_lengths(reviews):
    for split in reviews.values():
        lengths = [len(t.split()) for t in split["text"]]
        assert min(lengths) >= 5
        assert max(lengths) <= 25


def test_no_train_validation_overlap(reviews):
    train = set(reviews["train"]["text"])
    validation = list(reviews["validation"]["text"])
    assert len(train) == reviews["train"].num_rows
    assert len(set(validation)) == len(validation)
    assert not train.intersection(validation)


def test_negated_sentences_have_both_labels(reviews):
    for name, split in reviews.items():
        labels = {
            lab
            for t, lab in zip(split["text"], split["label"], strict=True)
            if NEGATION.search(t.lower())
        }
        assert labels == {0, 1}, f"{name}: negated sentences only have labels {labels}"


def test_no_cache_files_in_assets():
    assert not list(ASSETS.rglob("cache-*.arrow"))


def test_tokenizer_specials(tokenizer):
    assert tokenizer.pad_token == "[PAD]"
    assert tokenizer.pad_token_id == 0
    assert tokenizer.unk_token == "[UNK]"
    assert tokenizer.mask_token == "[MASK]"
    assert tokenizer.eos_token == tokenizer.sep_token == "[SEP]"
    assert tokenizer.bos_token == tokenizer.cls_token == "[CLS]"
    assert tokenizer.model_max_length == 128
    assert len(tokenizer) <= 2048


def test_tokenizer_wraps_in_cls_sep(tokenizer):
    ids = tokenizer("The plot was not boring, but the ending was superb!")["input_ids"]
    tokens = tokenizer.convert_ids_to_tokens(ids)
    assert tokens[0] == "[CLS]"
    assert tokens[-1] == "[SEP]"
    assert "[UNK]" not in tokens
    assert tokens[1:4] == ["the", "plot", "was"]  # lower-cased, whole words


def test_unknown_rate_on_validation(reviews, tokenizer):
    encoded = tokenizer(list(reviews["validation"]["text"]), add_special_tokens=False)
    ids = [i for seq in encoded["input_ids"] for i in seq]
    unk_rate = sum(i == tokenizer.unk_token_id for i in ids) / len(ids)
    assert unk_rate < 0.02
