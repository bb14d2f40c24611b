"""The few calls a backend's training loop makes to mpdemo, out of the course's way.

Each backend's loop (its `train_loop`) is the course's listing; the lines that talk to mpdemo are
marked `# mpdemo` and all go through one object, `rec`:

- `for batch in rec.steps(train_dataloader):` times each step and ends the loop at the last
  step, at Stop, or when the loss diverges;
- `rec.record(loss, scaler, skipped)` hands the step's loss, loss scale and skip to the plots;
- `rec.evaluate(model, eval_dataloader)` computes the validation metrics once, at the end;
- `rec.attach(trainer)` does all three for the Trainer, through a read-only TrainerCallback.

In the app `rec` is the Recorder (mpdemo/engine/recorder.py), which times, streams events and builds the
summary; in a reproduce script it is a StepPrinter, which prints one line per step.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from ..engine.hfhub import hub_reachable

if TYPE_CHECKING:
    from ..engine.prepared import Prepared


class StepHooks:
    """What a training loop calls; subclasses say what begin/lap/end/record_eval do."""

    prep: Prepared
    processes: int = 1
    _logged: tuple[Any, float | None, bool] | None = None

    # --- what a subclass provides ----------------------------------------------------------
    def begin(self) -> None:
        """Right before the step's forward pass."""

    def lap(self) -> float:
        """Seconds since begin(), once the device has finished the step."""
        return 0.0

    def end(
        self, loss: Any, scale: float | None, skipped: bool = False, dt: float | None = None
    ) -> bool:
        """After the optimizer step; False when the loop must stop."""
        raise NotImplementedError

    def should_evaluate(self) -> bool:
        """Whether the run went to its end (a stopped or diverged run is not evaluated)."""
        return True

    # The turns of a comparison whose runs take turns step by step (mpdemo.runs.turns): a run
    # holds the turn from fetching its batch to its step's end. Alone (a reproduce script), no-ops.
    def take_turn(self) -> None:
        """Wait for this run's turn (before the step's batch is fetched)."""

    def next_turn(self) -> None:
        """The step is done: hand the turn on and wait for this run's next one."""

    def training_done(self) -> None:
        """The last step is done: wait until every run has trained, then for a last turn."""

    def record_eval(self, metrics: dict[str, float]) -> None:
        """The validation metrics."""
        raise NotImplementedError

    # --- what the loops call -------------------------------------------------------------
    def steps(self, batches: Iterable[Any]) -> Iterator[Any]:
        """Yield the batches; each step is timed from its first line to its rec.record()."""
        it = iter(batches)
        try:
            while True:
                self.take_turn()  # the batch is fetched in the turn: Accelerate's loader state
                try:
                    batch = next(it)
                except StopIteration:
                    break
                self._logged = None
                self.begin()
                yield batch  # the loop's body runs here
                if self._logged is None:
                    raise RuntimeError("the training loop must call rec.record() once per step")
                if not self.end(*self._logged):
                    break
                self.next_turn()
        finally:
            # Closed here, in this run's turn: a loader left open would be closed by the
            # garbage collector later, in whichever run's turn, on that run's Accelerate state.
            close = getattr(it, "close", None)
            if close is not None:
                close()
        self.training_done()

    def record(self, loss: Any, scaler: Any, skipped: bool = False) -> None:
        """The step's loss, and its loss scale read from a GradScaler (None when it is off)."""
        on = scaler is not None and scaler.is_enabled()
        scale = scaler.get_scale() if on else None  # .item(): the step's one sync point
        self._logged = (loss.detach() if hasattr(loss, "detach") else loss, scale, bool(skipped))

    def evaluate(
        self, model: Any, batches: Iterable[Any], reduce: Callable[..., Any] | None = None
    ) -> None:
        """Validation loss (and accuracy) once, at the end; `reduce` averages over processes."""
        if not self.should_evaluate():
            return
        import torch

        metrics = eval_loop(model, batches, self.prep.task)
        if reduce is not None:  # several processes each saw a share of the validation rows
            device = next(model.parameters()).device
            metrics = {
                k: float(reduce(torch.tensor([v], device=device), reduction="mean"))
                for k, v in metrics.items()
            }
        self.record_eval(metrics)

    def attach(self, trainer: Any) -> None:
        """Report a Trainer's steps and evaluation through this object (replaces its printer)."""
        from transformers import PrinterCallback

        trainer.remove_callback(PrinterCallback)  # disable_tqdm's printer: we report instead
        trainer.add_callback(_trainer_callback(self, trainer))
        self.processes = trainer.accelerator.num_processes


def _trainer_callback(hooks: StepHooks, trainer: Any) -> Any:  # -> TrainerCallback
    """A read-only TrainerCallback that turns the Trainer's hooks into begin/lap/end calls."""
    from transformers import TrainerCallback

    class StepReporter(TrainerCallback):
        dt: float | None = None
        scale: float | None = None
        skipped = False

        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001
            hooks.begin()

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001
            # The clock stops here; the loss arrives in on_log right after (logging_steps=1).
            self.dt = hooks.lap()
            scaler = trainer.accelerator.scaler
            on = scaler is not None and scaler.is_enabled()
            self.scale = scaler.get_scale() if on else None
            self.skipped = trainer.accelerator.optimizer_step_was_skipped

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            is_train_log = bool(logs) and "loss" in logs and "eval_loss" not in logs
            if not is_train_log:
                return
            if hooks.end(logs["loss"], self.scale, self.skipped, dt=self.dt):
                # The turn is taken again here, not in on_step_begin: the Trainer fetches the
                # next batch between the two, and that belongs to this run's turn.
                hooks.next_turn()
            else:
                control.should_training_stop = True
                hooks.training_done()  # the evaluation comes once every run has trained

        def on_evaluate(self, args, state, control, metrics=None, **kwargs):  # noqa: ANN001
            keep = {k.removeprefix("eval_"): v for k, v in (metrics or {}).items()}
            hooks.record_eval({k: keep[k] for k in ("loss", "accuracy") if k in keep})

    return StepReporter()


class StepPrinter(StepHooks):
    """A reproduce script's `rec`: prints one line per step, `step N  loss L  scale S ...`."""

    def __init__(self, prep: Prepared) -> None:
        self.prep = prep
        self.step = 0

    def end(
        self, loss: Any, scale: float | None, skipped: bool = False, dt: float | None = None
    ) -> bool:
        """Print the step's loss (every digit float32 has) and go on until cfg.steps."""
        self.step += 1
        print(
            f"step {self.step}  loss {float(loss)!r}  scale {scale}  skipped {skipped}", flush=True
        )
        return self.step < self.prep.cfg.steps

    def record_eval(self, metrics: dict[str, float]) -> None:
        """Print the validation metrics."""
        print("eval " + "  ".join(f"{k} {v!r}" for k, v in metrics.items()), flush=True)


# --- the validation loop every backend's rec.evaluate() runs ------------------------------------


def accuracy(preds: list[int], labels: list[int]) -> tuple[float, str]:
    """Accuracy and its source: `evaluate` when it can load its metric, else the same formula here."""
    if hub_reachable():
        try:
            import evaluate

            metric = evaluate.load("accuracy")
            result = metric.compute(predictions=preds, references=labels)
            return float(result["accuracy"]), "evaluate"
        except Exception:  # noqa: BLE001 - any failure to load means: compute it locally
            pass
    correct = sum(int(p == t) for p, t in zip(preds, labels, strict=True))
    return correct / max(len(labels), 1), "local"


def eval_loop(
    model: Any,
    batches: Any,
    task: str,
    ctx: Callable[[], AbstractContextManager] = nullcontext,
) -> dict[str, float]:
    """Mean loss (and accuracy for classifiers) over the validation batches."""
    import torch

    model.eval()
    losses, preds, labels = [], [], []
    with torch.no_grad():
        for batch in batches:
            with ctx():
                out = model(**batch)
            losses.append(float(out.loss))
            if task == "cls":
                preds += out.logits.argmax(-1).tolist()
                labels += batch["labels"].tolist()
    model.train()
    metrics = {"loss": statistics.fmean(losses) if losses else float("nan")}
    if task == "cls":
        metrics["accuracy"], _source = accuracy(preds, labels)
    return metrics
