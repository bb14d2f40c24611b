"""Data with the `datasets` library: load, slice ('train[:2000]'), tokenize, fixed batch order."""

from __future__ import annotations

import functools
import os
import threading
from typing import TYPE_CHECKING

import numpy as np
import torch

from ..catalog import BUNDLED_DATASET_DIR, DATASETS, DatasetEntry
from ..messages import ConfigError, Note
from ..state import on_reset
from .slices import Slice, resolve, split_of

if TYPE_CHECKING:
    from datasets import Dataset, DatasetDict
    from transformers import PreTrainedTokenizerBase

TEXT_COLUMNS = ("text", "sentence", "content", "review", "document")
LABEL_COLUMNS = ("label", "labels", "sentiment")
RANDOM_TRAIN_ROWS = 1600  # the recipe's 50 batches of 32
RANDOM_EVAL_ROWS = 256


def parse_slice(spec: str, sizes: dict[str, int]) -> Slice:
    """The slice a string selects (mpdemo.engine.slices); ConfigError when bad or empty."""
    got = resolve(spec, sizes)
    assert got is not None  # sizes were given
    if got.rows <= 0:
        raise ConfigError("empty_slice", value=spec, split=got.split, rows=got.total)
    return got


_OPEN_LOCK = threading.Lock()


@functools.cache
def _bundled() -> DatasetDict:
    import datasets

    # Read-only and shipped with the code: open once per process, not three times a run.
    return datasets.load_from_disk(str(BUNDLED_DATASET_DIR))


def open_on_disk(name: str, source: str) -> Dataset | DatasetDict:
    """The bundled dataset or a local save_to_disk folder (memory-mapped); ConfigError if not one."""
    import datasets

    try:
        # datasets 5 is not safe to open from two threads at once (its lazily made tqdm lock).
        with _OPEN_LOCK:
            if source == "builtin":
                return _bundled()
            # The folder checked is the one loaded: '~/d' as the user's home, not a literal '~'.
            return datasets.load_from_disk(os.path.expanduser(name))
    except (FileNotFoundError, ValueError, OSError) as err:
        raise ConfigError("not_a_dataset", value=name, detail=str(err).split("\n")[0]) from None


def check_slices(name: str, source: str, specs: list[str]) -> None:
    """Check slice syntax (and, for on-disk datasets, splits and emptiness) before any training."""
    sizes: dict[str, int] | None = None
    if source in ("builtin", "local"):
        import datasets

        dsd = open_on_disk(name, source)
        if isinstance(dsd, datasets.Dataset):  # one split saved on its own: any name reads it
            sizes = {split_of(spec): len(dsd) for spec in specs}
        else:
            sizes = {split: len(ds) for split, ds in dsd.items()}
    for spec in specs:
        parse_slice(spec, sizes if sizes is not None else {split_of(spec): 10**12})


def load_split(
    name: str, source: str, spec: str, evaluating: bool = False
) -> tuple[Dataset, list[Note]]:
    """One split, sliced, of the bundled dataset, a local folder or a Hub id, and its notes
    (`evaluating`: a Hub dataset with no validation split reads its held-out one for it)."""
    import datasets

    if source in ("builtin", "local"):
        dsd = open_on_disk(name, source)
        if isinstance(dsd, datasets.Dataset):  # a single split saved on its own
            dsd = datasets.DatasetDict({split_of(spec): dsd})
        got = parse_slice(spec, {split: len(ds) for split, ds in dsd.items()})
        notes = [Note("slice_clamped", {"slice": spec, "rows": got.rows})] if got.clamped else []
        return dsd[got.split].select(range(got.start, got.stop)), notes
    entry = DATASETS.get(name)
    config = entry.hub_config if entry and entry.hub_config else None
    hub_name = name.split("/", 1)[0] if config else name
    # Slicing goes to load_dataset itself: it reads only what the slice needs.
    parse_slice(spec, {split_of(spec): 10**12})  # syntax only; sizes are the Hub's
    notes: list[Note] = []
    held_out = entry.eval_split if entry else "validation"
    if evaluating and split_of(spec) == "validation" and held_out != "validation":
        asked, spec = spec, held_out + spec.strip().removeprefix("validation")
        notes.append(Note("eval_split_held_out", {"dataset": name, "slice": asked, "used": spec}))
    try:
        ds = datasets.load_dataset(hub_name, config, split=spec)
    except ValueError as err:
        raise ConfigError("bad_slice", value=spec, splits=str(err).split("\n")[0][:200]) from None
    except Exception as err:  # noqa: BLE001 - the Hub raises many kinds; all mean "cannot load"
        raise ConfigError("load_failed", value=name, detail=str(err).split("\n")[0][:300]) from None
    if len(ds) == 0:
        raise ConfigError("empty_slice", value=spec, split=split_of(spec), rows=0)
    return ds, notes


def find_columns(ds: Dataset, name: str, need_label: bool) -> tuple[str, str | None]:
    """The text and label column names, from the catalog or guessed; raise ConfigError if missing."""
    cols = list(ds.column_names)
    entry = DATASETS.get(name) or DatasetEntry(name, False, text_column="", label_column="")

    def column(named: str | None, guesses: tuple[str, ...], missing: str) -> str:
        found = named if named in cols else next((c for c in guesses if c in cols), None)
        if found is None:
            raise ConfigError(missing, value=name, columns=", ".join(cols))
        return found

    text = column(entry.text_column, TEXT_COLUMNS, "no_text_column")
    if not need_label:
        return text, None
    return text, column(entry.label_column, LABEL_COLUMNS, "no_label_column")


def num_labels_of(ds: Dataset, label: str) -> int:
    """Number of classes: from a ClassLabel feature, else from the values seen."""
    names = getattr(ds.features.get(label), "names", None)
    return len(names) if names else int(max(ds[label])) + 1


# The runs of a comparison tokenize the same rows alike: done once, shared read-only, keyed by
# the split's datasets fingerprint (a hash of the data and its transforms), tokenizer and length.
_TOKENIZED: dict[tuple, Dataset] = {}
_TOKENIZED_KEEP = 4
_TOKENIZED_LOCK = threading.Lock()


@on_reset
def forget_tokenized() -> None:
    """Drop the kept tokenized splits."""
    with _TOKENIZED_LOCK:
        _TOKENIZED.clear()


def tokenize(
    ds: Dataset, tokenizer: PreTrainedTokenizerBase, text: str, label: str | None, max_length: int
) -> Dataset:
    """Tokenize to fixed length (steady shapes make honest step timings); labels for cls or LM."""
    fingerprint = getattr(ds, "_fingerprint", None)
    tok_name = getattr(tokenizer, "name_or_path", None)
    key = (fingerprint, tok_name, len(tokenizer), text, label, max_length)
    if fingerprint is not None:
        with _TOKENIZED_LOCK:
            if key in _TOKENIZED:
                _TOKENIZED[key] = _TOKENIZED.pop(key)  # the most recent last
                return _TOKENIZED[key]

    def fn(batch: dict[str, list]) -> dict[str, object]:
        texts = [str(t) for t in batch[text]]
        enc = tokenizer(texts, padding="max_length", truncation=True, max_length=max_length)
        if label is not None:
            enc["labels"] = [int(x) for x in batch[label]]
        else:  # causal LM: predict every real token, ignore padding
            enc["labels"] = [
                [tok if m else -100 for tok, m in zip(ids, mask, strict=True)]
                for ids, mask in zip(enc["input_ids"], enc["attention_mask"], strict=True)
            ]
        return dict(enc)

    from datasets.utils.logging import disable_progress_bar

    disable_progress_bar()  # the UI and the CLI report progress themselves
    # keep_in_memory: never write cache files next to the bundled dataset in assets/.
    out = ds.map(fn, batched=True, remove_columns=ds.column_names, keep_in_memory=True)
    out.set_format("torch")
    if fingerprint is not None:
        with _TOKENIZED_LOCK:
            _TOKENIZED[key] = out
            while len(_TOKENIZED) > _TOKENIZED_KEEP:
                _TOKENIZED.pop(next(iter(_TOKENIZED)))
    return out


def random_regression(rows: int, width: int, seed: int) -> torch.utils.data.StackDataset:
    """The AMP recipe's data: random inputs and random targets, fixed by a seed."""
    gen = torch.Generator().manual_seed(seed)
    inputs, labels = (torch.randn(rows, width, generator=gen) for _ in range(2))
    return torch.utils.data.StackDataset(inputs=inputs, labels=labels)


def step_order(n_rows: int, steps: int, batch_size: int, seed: int) -> list[int]:
    """Row indices for `steps` full batches: a fresh seeded permutation every epoch."""
    need = steps * batch_size
    order: list[int] = []
    for epoch in range(-(-need // n_rows)):  # n_rows > 0: an empty slice is refused first
        gen = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
        order += torch.randperm(n_rows, generator=gen).tolist()
    return order[:need]


class StepBatches(torch.utils.data.Dataset):
    """A tokenized datasets.Dataset served one whole batch at a time, in step order, gathered from
    columns read once: µs a batch, where collating rows spent 1.1-1.4 ms between steps."""

    def __init__(
        self, ds: Dataset | torch.utils.data.Dataset, order: list[int], batch_size: int
    ) -> None:
        columns = (ds.format or {}).get("columns") or ds.column_names
        table = ds.with_format("numpy", columns=columns)[:]
        self.columns = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in table.items()}
        self.order = torch.tensor(order, dtype=torch.long)
        self.batch_size = batch_size

    def __len__(self) -> int:
        return -(-len(self.order) // self.batch_size)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        rows = self.order[i * self.batch_size : (i + 1) * self.batch_size]
        return {k: v[rows] for k, v in self.columns.items()}


def batch_loader(
    ds: Dataset | torch.utils.data.Dataset, order: list[int] | None, batch_size: int
) -> torch.utils.data.DataLoader:
    """A DataLoader of whole batches in `order` (None: as stored); a datasets' one from columns."""
    order = list(range(len(ds))) if order is None else order
    if hasattr(ds, "with_format"):
        return torch.utils.data.DataLoader(StepBatches(ds, order, batch_size), batch_size=None)
    return torch.utils.data.DataLoader(torch.utils.data.Subset(ds, order), batch_size=batch_size)


def in_step_order(
    ds: Dataset | torch.utils.data.Dataset, order: list[int]
) -> Dataset | torch.utils.data.Dataset:
    """The dataset laid out in batch order, so a sequential sampler reproduces it everywhere."""
    if hasattr(ds, "select"):
        return ds.select(order, keep_in_memory=True)
    return torch.utils.data.Subset(ds, order)
