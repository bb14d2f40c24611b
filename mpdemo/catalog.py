"""The models and datasets offered: offline built-ins first, then Hub entries."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .registry import BACKEND_NAMES, PRECISION_NAMES

ASSETS = Path(__file__).resolve().parent / "assets"
BUNDLED_DATASET_DIR = ASSETS / "reviews"
BUNDLED_TOKENIZER_DIR = ASSETS / "tokenizer"

# Tasks: "cls" (sequence classification, accuracy), "lm" (causal LM, eval loss),
# "regression" (the AMP recipe's MLP on random data, MSE).


@dataclass(frozen=True)
class ModelEntry:
    """One model the app offers."""

    name: str
    task: str
    builtin: bool
    description: str
    # Shown before anything is built. Built-ins: the exact count with the bundled tokenizer and
    # reviews' two labels (tests/test_ui.py builds each one and compares); Hub: approximate.
    approx_params: int


MODELS: dict[str, ModelEntry] = {
    m.name: m
    for m in [
        ModelEntry("tiny-bert", "cls", True, "BERT-style classifier, 2 layers x 64", 191_874),
        ModelEntry("small-bert", "cls", True, "BERT-style classifier, 4 layers x 256", 3_575_810),
        # BERT-base's shape: where a GPU's tensor cores, not kernel launches, set the step time
        # (teach/device_sizes.py trains it on CUDA); minutes a step on a 2-core CPU.
        ModelEntry("base-bert", "cls", True, "BERT-style classifier, 12 layers x 768", 86_697_986),
        ModelEntry("tiny-gpt2", "lm", True, "GPT-2-style causal LM, 2 layers x 64", 187_456),
        ModelEntry("base-gpt2", "lm", True, "GPT-2-style causal LM, 12 layers x 768", 86_104_320),
        ModelEntry(
            "amp-mlp", "regression", True, "PyTorch AMP recipe: 3 x Linear(4096)+ReLU", 50_343_936
        ),
        ModelEntry("prajjwal1/bert-tiny", "cls", False, "BERT tiny (Hub)", 4_400_000),
        ModelEntry("distilbert-base-uncased", "cls", False, "DistilBERT (Hub)", 67_000_000),
        ModelEntry("sshleifer/tiny-gpt2", "lm", False, "tiny GPT-2 (Hub)", 100_000),
        ModelEntry("EleutherAI/pythia-14m", "lm", False, "Pythia 14M (Hub)", 14_000_000),
    ]
}
DEFAULT_MODEL = "tiny-bert"


@dataclass(frozen=True)
class DatasetEntry:
    """One dataset the app offers, with the column mapping it needs."""

    name: str
    builtin: bool
    description: str
    text_column: str = "text"
    label_column: str | None = "label"
    hub_config: str | None = None
    train_split: str = "train"
    eval_split: str = "validation"


DATASETS: dict[str, DatasetEntry] = {
    d.name: d
    for d in [
        DatasetEntry("reviews", True, "bundled short reviews, positive/negative (offline)"),
        DatasetEntry("random", True, "random tensors (the AMP recipe's data, for amp-mlp)"),
        DatasetEntry("rotten_tomatoes", False, "Rotten Tomatoes reviews (Hub)"),
        DatasetEntry("glue/sst2", False, "GLUE SST-2 (Hub)", "sentence", hub_config="sst2"),
        DatasetEntry("imdb", False, "IMDB reviews (Hub)", eval_split="test"),
        DatasetEntry("ag_news", False, "AG News, 4 topics (Hub)", eval_split="test"),
        DatasetEntry(
            "roneneldan/TinyStories", False, "TinyStories (Hub, for LMs)", label_column=None
        ),
    ]
}
DEFAULT_DATASET = "reviews"

BACKENDS = BACKEND_NAMES  # the registry (mpdemo/registry.py) is the one list of each
PRECISIONS = PRECISION_NAMES
DEVICES = ("auto", "cpu", "cuda", "mps")
