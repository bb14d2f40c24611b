"""prepare(cfg) builds model, optimizer and data; train(cfg) streams one run's events."""

from __future__ import annotations

import gc
import threading
import time
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..backends.accelerate import reset_accelerate_state
from ..catalog import BUNDLED_TOKENIZER_DIR, DATASETS, MODELS
from ..config import WHOLE_FIELDS, Limits, RunConfig, env_int
from ..events import Emit, Event, RunFinished, stream
from ..files.summary import Summary
from ..log import run_logger
from ..messages import ConfigError, MpdemoError, Note
from ..registry import BACKENDS
from ..state import on_reset
from . import data as D
from . import master
from .models import (
    MLP_WIDTH,
    builtin_model,
    count_params,
    load_tokenizer,
    pretrained_model,
    resolve_source,
)
from .precision import check_precision_on, matmul_precision, resolve_device
from .prepared import DeviceLoader, Prepared
from .recorder import Recorder

if TYPE_CHECKING:
    from ..runs.turns import Lane


@dataclass(frozen=True)
class Sources:
    """Where the model and dataset come from, resolved once (fast checks, no loading)."""

    model: str  # builtin | local | hub
    dataset: str  # builtin | local | hub
    device: torch.device
    task: str


def preflight(cfg: RunConfig, limits: Limits | None = None) -> Sources:
    """Every check that needs no download: fields, device, model/dataset sources. Raises ConfigError."""
    lim = limits or Limits.from_env()
    cfg.validate(lim)
    world = env_int("WORLD_SIZE", 1)
    if cfg.backend == "torch" and world > 1:
        raise ConfigError("torch_single_process", n=world)
    device = resolve_device(cfg.device)
    check_precision_on(device, cfg.precision)
    entry = MODELS.get(cfg.model)
    builtin = entry is not None and entry.builtin
    model_src = "builtin" if builtin else resolve_source(cfg.model, lim, "model")
    if entry is not None and entry.task == "regression":
        return Sources(model_src, "builtin", device, "regression")  # the recipe's random data
    if cfg.dataset == "random":
        mismatch = {"model_task": "text", "dataset": "random", "data_task": "tensors"}
        raise ConfigError("task_mismatch", model=cfg.model, **mismatch)
    dentry = DATASETS.get(cfg.dataset)
    builtin_data = dentry is not None and dentry.builtin
    data_src = "builtin" if builtin_data else resolve_source(cfg.dataset, lim, "dataset")
    D.check_slices(cfg.dataset, data_src, [cfg.train_slice, cfg.eval_slice])
    if entry is not None:
        task = entry.task
    else:  # a Hub id or folder: the data decides (labels → classifier, none → causal LM)
        task = "lm" if dentry is not None and dentry.label_column is None else "cls"
    return Sources(model_src, data_src, device, task)


def prepare(cfg: RunConfig, limits: Limits | None = None) -> Prepared:
    """Build model, optimizer, scheduler and data loaders; same cfg → same weights and batches."""
    from transformers import get_constant_schedule

    lim = limits or Limits.from_env()
    src = preflight(cfg, lim)
    notes: list[Note] = []
    if src.task == "regression":
        train_ds: Any = D.random_regression(D.RANDOM_TRAIN_ROWS, MLP_WIDTH, cfg.seed)
        eval_ds: Any = D.random_regression(D.RANDOM_EVAL_ROWS, MLP_WIDTH, cfg.seed + 1)
        torch.manual_seed(cfg.seed)
        model = builtin_model(cfg.model, 0, 0, 0, 0)
        tokens = None
    else:
        train_rows, train_notes = D.load_split(cfg.dataset, src.dataset, cfg.train_slice)
        eval_rows, eval_notes = D.load_split(cfg.dataset, src.dataset, cfg.eval_slice, True)
        notes += train_notes + eval_notes
        text, label = D.find_columns(train_rows, cfg.dataset, src.task == "cls")
        D.find_columns(eval_rows, cfg.dataset, src.task == "cls")
        num_labels = D.num_labels_of(train_rows, label) if label else 0
        tok_source = str(BUNDLED_TOKENIZER_DIR) if src.model == "builtin" else cfg.model
        tokenizer = load_tokenizer(tok_source, hub=src.model == "hub")
        train_ds = D.tokenize(train_rows, tokenizer, text, label, cfg.max_length)
        eval_ds = D.tokenize(eval_rows, tokenizer, text, label, cfg.max_length)
        # Seed right before building: the same cfg gives the same initial weights in every backend.
        torch.manual_seed(cfg.seed)
        if src.model == "builtin":
            eos = tokenizer.sep_token_id if tokenizer.sep_token_id is not None else 0
            model = builtin_model(
                cfg.model, len(tokenizer), num_labels, tokenizer.pad_token_id, eos
            )
        else:
            model = pretrained_model(cfg.model, src.task, num_labels, lim, hub=src.model == "hub")
            if model.config.pad_token_id is None:
                model.config.pad_token_id = tokenizer.pad_token_id
        tokens = cfg.max_length
    # A Hub or local model's positions are known once its config is read: a longer sequence
    # would fail inside the embedding at the first step.
    conf = getattr(model, "config", None)  # the recipe's MLP has none, and no positions
    positions = getattr(conf, "max_position_embeddings", None) or getattr(conf, "n_positions", None)
    if tokens and isinstance(positions, int) and cfg.max_length > positions:
        rule = {"key": "rule_whole", "args": {"lo": WHOLE_FIELDS["max_length"][0], "hi": positions}}
        raise ConfigError("bad_number", field="max_length", rule=rule, value=cfg.max_length)
    params = count_params(model)
    if params > lim.max_params:
        raise ConfigError("model_too_big", value=cfg.model, params=params, limit=lim.max_params)
    model.to(src.device)
    order = D.step_order(len(train_ds), cfg.steps, cfg.batch_size, cfg.seed)
    ordered = D.in_step_order(train_ds, order)
    # weights=bf16 / bf16-sr: the model itself in bf16 (AdamW's moments follow); fp32: the master
    model = master.cast_weights(model, cfg.weights)
    optimizer = master.build_optimizer(model, cfg.lr, cfg.weights, cfg.seed)
    return Prepared(
        model=model,
        optimizer=optimizer,
        lr_scheduler=get_constant_schedule(optimizer),
        # The course's loop gets whole batches sliced from the columns (data.batch_loader);
        # Accelerate and the Trainer batch the raw loaders' rows with their own machinery.
        train_dataloader=DeviceLoader(D.batch_loader(train_ds, order, cfg.batch_size), src.device),
        eval_dataloader=DeviceLoader(D.batch_loader(eval_ds, None, cfg.batch_size), src.device),
        device=src.device,
        cfg=cfg,
        task=src.task,
        params=params,
        train_dataset=ordered,
        eval_dataset=eval_ds,
        raw_train_loader=torch.utils.data.DataLoader(ordered, batch_size=cfg.batch_size),
        raw_eval_loader=torch.utils.data.DataLoader(eval_ds, batch_size=cfg.batch_size),
        tokens_per_sample=tokens,
        train_rows=len(train_ds),
        eval_rows=len(eval_ds),
        notes=notes,
    )


def execute(
    prep: Prepared,
    emit: Emit,
    stop: threading.Event | None = None,
    *,
    index: int = 0,
    total: int = 1,
    lane: Lane | None = None,
) -> Summary:
    """Run one prepared config in this thread, emitting events; return the summary (lane: its turns)."""
    rec = Recorder(prep, emit, stop or threading.Event(), index=index, total=total, lane=lane)
    rec.start()
    try:  # the backend's train_loop on prepare()'s objects and its settings: the one call site
        backend = BACKENDS[prep.cfg.backend]
        module = backend.load()
        inputs = {name: getattr(prep, attr) for name, attr in module.INPUTS.items()}
        settings = module.settings(prep.cfg, prep.device, prep.task)
        if backend.uses_accelerate:
            reset_accelerate_state()
        try:
            with matmul_precision(prep.cfg.precision):  # tf32: TF32 matmuls on for this run only
                module.train_loop(**inputs, rec=rec, **settings)
            if backend.uses_accelerate:  # under `accelerate launch` each process trained a share
                from accelerate.state import PartialState

                rec.processes = max(rec.processes, PartialState().num_processes)
        finally:
            if backend.uses_accelerate:
                reset_accelerate_state()
    except Exception as err:  # noqa: BLE001 - a run that breaks is a result, not a crash
        rec.fail(err)
    return rec.finish()


def failed_event(cfg: RunConfig, err: BaseException, index: int = 0) -> RunFinished:
    """The end of a run that could not even start (bad model, unreachable hub...)."""
    note = err.note if isinstance(err, MpdemoError) else Note("failed", {"detail": str(err)})
    # Bad input is the person's to fix (one line); anything else is a bug: keep its traceback.
    detail = None if isinstance(err, MpdemoError) else "".join(traceback.format_exception(err))
    if detail:
        run_logger(cfg.label).error("could not start: %s", err, exc_info=err)
    else:
        run_logger(cfg.label).warning("could not start: %s", err)
    summary = Summary.failed(
        label=cfg.label, backend=cfg.backend, precision=cfg.precision, note=note, detail=detail
    )
    return RunFinished(f"{index}:{cfg.label}", cfg.label, "failed", summary)


_frozen = False
_collect_s: float | None = None  # how long the latest collection took (after the freeze)


@on_reset
def forget_collect_time() -> None:
    """Forget how long the latest collection took (the estimate guesses again)."""
    global _collect_s
    _collect_s = None


def collect_garbage() -> None:
    """Free what the finished run left in reference cycles; the first time, freeze the rest, so
    later ones scan only what a run made, not the imports' ~0.5M objects (0.2 s → under 1 ms)."""
    global _frozen, _collect_s
    t0 = time.perf_counter()
    gc.collect()
    if not _frozen:
        gc.freeze()
        _frozen = True
    else:
        _collect_s = time.perf_counter() - t0


def next_collect_s() -> float | None:
    """Seconds the next collection should take (the latest's); None before the first, full one."""
    return (_collect_s or 0.0) if _frozen else None


def train(cfg: RunConfig, stop: threading.Event | None = None) -> Iterator[Event]:
    """Train one run, yielding its events as they happen; closing it stops the run. It runs (its
    preparation too: a second thread's OpenMP pool would compete) in a worker thread, as the
    Trainer reports only through callbacks."""
    stop = stop or threading.Event()
    preflight(cfg)  # the cheap checks: bad input fails before any thread starts
    yield from stream(lambda emit: execute(prepare(cfg), emit, stop), stop, "mpdemo-train")
