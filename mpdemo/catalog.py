"""The models and datasets offered: offline built-ins first, then Hub entries."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ASSETS = Path(__file__).resolve().parent / "assets"
BUNDLED_DATASET_DIR = ASSETS / "reviews"
BUNDLED_TOKENIZER_DIR = ASSETS / "tokenizer"

# Tasks: "cls" (sequence classification, accuracy), "lm" (causal LM, eval loss),
# "regression" (the AMP recipe's MLP on random data, MSE).


@dataclass(frozen=True)
class ModelEntry:
    """One model the app offers (its description: the locale files' model_desc_<name>)."""

    name: str
    task: str
    builtin: bool
    # Shown before anything is built: exact for a built-in (tests/test_ui.py), approximate for Hub.
    approx_params: int


MODELS: dict[str, ModelEntry] = {
    m.name: m
    for m in [
        ModelEntry("tiny-bert", "cls", True, 191_874),
        ModelEntry("small-bert", "cls", True, 3_575_810),
        # BERT-base's shape: a GPU's tensor cores, not kernel launches, set its step time.
        ModelEntry("base-bert", "cls", True, 86_697_986),
        ModelEntry("tiny-gpt2", "lm", True, 187_456),
        ModelEntry("base-gpt2", "lm", True, 86_104_320),
        ModelEntry("amp-mlp", "regression", True, 50_343_936),
        ModelEntry("prajjwal1/bert-tiny", "cls", False, 4_400_000),
        ModelEntry("distilbert-base-uncased", "cls", False, 67_000_000),
        ModelEntry("sshleifer/tiny-gpt2", "lm", False, 100_000),
        ModelEntry("EleutherAI/pythia-14m", "lm", False, 14_000_000),
    ]
}
DEFAULT_MODEL = "tiny-bert"


@dataclass(frozen=True)
class DatasetEntry:
    """One dataset the app offers, with the column mapping it needs."""

    name: str
    builtin: bool
    text_column: str = "text"
    label_column: str | None = "label"
    hub_config: str | None = None
    # The split a run asking for "validation" reads: imdb and ag_news publish only train and test.
    eval_split: str = "validation"


DATASETS: dict[str, DatasetEntry] = {
    d.name: d
    for d in [
        DatasetEntry("reviews", True),
        DatasetEntry("random", True),
        DatasetEntry("rotten_tomatoes", False),
        DatasetEntry("glue/sst2", False, "sentence", hub_config="sst2"),
        DatasetEntry("imdb", False, eval_split="test"),
        DatasetEntry("ag_news", False, eval_split="test"),
        DatasetEntry("roneneldan/TinyStories", False, label_column=None),
    ]
}
DEFAULT_DATASET = "reviews"

DEVICES = ("auto", "cpu", "cuda", "mps")
