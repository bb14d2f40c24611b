"""The size a lesson trains at on a CUDA GPU: BERT-base's shape, where tensor cores, not launches,
set the step time (H200: tiny-bert bf16 1.19x slower than fp32, base-bert 4.20x faster). Torch-free.
"""

from __future__ import annotations

# lr 1e-4: BERT's own pre-training rate (chosen, not measured); 1e-3 suits the CPU's small models.
GPU_SIZE: dict[str, object] = {
    "model": "base-bert",
    "batch_size": 32,
    "max_length": 256,
    "lr": 1e-4,
}
GPU_STEPS = 300
# Per lesson: the fields a CUDA run changes; a lesson not named here (master-weights: its point
# is lr against tiny-gpt2's weights, not speed) keeps its own settings everywhere.
GPU_FIELDS: dict[str, dict[str, object]] = {
    # A language model on every device: a BERT classifier from scratch sits at ln 2 first.
    "still-trains": {**GPU_SIZE, "model": "base-gpt2", "steps": GPU_STEPS},
    # base-bert failed this check on an H200 (query/key gradients below 2^-32, past fp16's range
    # at any safe scale); base-gpt2 is not yet measured there. The scale doubles every 10 steps.
    "underflow": {
        **GPU_SIZE,
        "model": "base-gpt2",
        "steps": GPU_STEPS,
        "watch_grads": GPU_STEPS // 4,
        "growth_interval": 10,
    },
    "loss-scaling": {**GPU_SIZE, "steps": GPU_STEPS},
    # base-bert's curves agreed on an H200; base-gpt2's Trainer curve ran 7 % under, unexplained.
    "backends": {**GPU_SIZE, "steps": GPU_STEPS},
}
SIZE_KEY = "lesson_device_size"  # the page's line: which size, and why


def kind_of(device: str | None) -> str:
    """'cuda' for a CUDA device ('cuda:1' too), else 'cpu' (MPS: nothing measured); not 'auto'."""
    return "cuda" if str(device or "").split(":")[0] == "cuda" else "cpu"


def device_fields(lesson: str, device: str | None) -> dict[str, object]:
    """The fields lesson `lesson` changes on `device` (a resolved device or its kind): {} on a CPU."""
    if kind_of(device) == "cpu":
        return {}
    return dict(GPU_FIELDS.get(lesson, {}))


def size_line(lesson: str, device: str | None) -> tuple[str, dict[str, object]] | None:
    """The key and arguments of the line naming the size the lesson picked here, or None."""
    fields = device_fields(lesson, device)
    if "model" not in fields:
        return None
    return SIZE_KEY, {
        "model": fields["model"],
        "batch": fields["batch_size"],
        "tokens": fields["max_length"],
    }
