"""The few calls a backend's training loop makes to mpdemo (the lines marked `# mpdemo`), all on
`rec`: the Recorder (engine/recorder.py) in the app, a StepPrinter in a reproduce script."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..engine.hfhub import hub_reachable

if TYPE_CHECKING:
    from ..engine.prepared import Prepared
    from ..runs.turns import Lane


class StepHooks:
    """What a training loop calls; subclasses say what begin/lap/end/record_eval do."""

    prep: Prepared
    processes: int = 1
    lane: Lane | None = None  # the run's turns among a comparison's runs; None: it runs alone
    _logged: tuple[Any, float | None, bool] | None = None

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

    # A run holds its turn (mpdemo.runs.turns) from fetching its batch to its step's end.
    def next_turn(self) -> None:
        """The step is done: hand the turn on and wait for this run's next one."""
        if self.lane is not None:
            self.lane.give()
            self.lane.take()

    def training_done(self) -> None:
        """The last step is done: wait until every run has trained, then for a last turn."""
        if self.lane is not None:
            self.lane.done()

    def record_eval(self, metrics: dict[str, float]) -> None:
        """The validation metrics."""
        raise NotImplementedError

    def steps(self, batches: Iterable[Any]) -> Iterator[Any]:
        """Yield the batches; each step is timed from its first line to its rec.record()."""
        it = iter(batches)
        try:
            if self.lane is not None:  # batches are fetched in the run's turn (Accelerate's state)
                self.lane.take()
            for batch in it:
                self._logged = None
                self.begin()
                yield batch  # the loop's body runs here
                if self._logged is None:
                    raise RuntimeError("the training loop must call rec.record() once per step")
                if not self.end(*self._logged):
                    break
                self.next_turn()
        finally:
            # Closed in this run's turn: the garbage collector would close it in any run's turn.
            if hasattr(it, "close"):
                it.close()
        self.training_done()

    def record(self, loss: Any, scaler: Any, skipped: bool = False) -> None:
        """The step's loss, and its loss scale read from a GradScaler (None when it is off)."""
        loss = loss.detach() if hasattr(loss, "detach") else loss
        self._logged = (loss, scale_of(scaler), bool(skipped))

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
            mean = {k: reduce(torch.tensor([v], device=device), "mean") for k, v in metrics.items()}
            metrics = {k: float(v) for k, v in mean.items()}
        self.record_eval(metrics)

    def attach(self, trainer: Any) -> None:
        """Report a Trainer's steps and evaluation through this object (replaces its printer)."""
        from transformers import PrinterCallback

        trainer.remove_callback(PrinterCallback)  # disable_tqdm's printer: we report instead
        trainer.add_callback(_trainer_callback(self, trainer))
        self.processes = trainer.accelerator.num_processes


def scale_of(scaler: Any) -> float | None:
    """A GradScaler's scale, None when it is off (.item(): the step's one sync point)."""
    return scaler.get_scale() if scaler is not None and scaler.is_enabled() else None


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
            self.scale = scale_of(trainer.accelerator.scaler)
            self.skipped = trainer.accelerator.optimizer_step_was_skipped

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            if not logs or "loss" not in logs or "eval_loss" in logs:
                return  # not a training step's log
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


@dataclass
class StepPrinter(StepHooks):
    """A reproduce script's `rec`: prints one line per step, `step N  loss L  scale S ...`."""

    prep: Prepared
    step: int = 0

    def end(
        self, loss: Any, scale: float | None, skipped: bool = False, dt: float | None = None
    ) -> bool:
        """Print the step's loss (every digit float32 has) and go on until cfg.steps."""
        self.step += 1
        line = f"step {self.step}  loss {float(loss)!r}  scale {scale}  skipped {skipped}"
        print(line, flush=True)
        return self.step < self.prep.cfg.steps

    def record_eval(self, metrics: dict[str, float]) -> None:
        """Print the validation metrics."""
        print("eval " + "  ".join(f"{k} {v!r}" for k, v in metrics.items()), flush=True)


def accuracy(preds: list[int], labels: list[int]) -> float:
    """Accuracy through `evaluate` when it can load its metric, else the same formula here."""
    if hub_reachable():
        try:
            import evaluate

            result = evaluate.load("accuracy").compute(predictions=preds, references=labels)
            return float(result["accuracy"])
        except Exception:  # noqa: BLE001 - any failure to load means: compute it locally
            pass
    correct = sum(int(p == t) for p, t in zip(preds, labels, strict=True))
    return correct / max(len(labels), 1)


def eval_loop(model: Any, batches: Any, task: str) -> dict[str, float]:
    """Mean loss (and accuracy for classifiers) over the validation batches."""
    import torch

    model.eval()
    losses, preds, labels = [], [], []
    with torch.no_grad():
        for batch in batches:
            out = model(**batch)
            losses.append(float(out.loss))
            if task == "cls":
                preds += out.logits.argmax(-1).tolist()
                labels += batch["labels"].tolist()
    model.train()
    metrics = {"loss": statistics.fmean(losses) if losses else float("nan")}
    if task == "cls":
        metrics["accuracy"] = accuracy(preds, labels)
    return metrics
