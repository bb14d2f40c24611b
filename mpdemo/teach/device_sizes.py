"""The size a lesson trains at on each kind of device: a CPU keeps the lessons' own settings; a
CUDA GPU trains the comparison lessons at BERT-base's shape, where the tensor cores, not kernel
launches, set the step time. Torch-free.

Why (one NVIDIA H200, ../shared/gpu/h200-2026-12-04/): the CPU-sized comparison (tiny-bert,
32 x 64) ran bf16 1.19x slower than fp32 there; base-bert (86.7 M) at 32 x 256 ran bf16 4.20x
faster (fp32 110 ms a step). bench/gpu_check.py --lessons all checks each lesson's point at
these sizes. master-weights keeps its settings everywhere: its point is lr against tiny-gpt2's
weight magnitudes, not speed.
"""

from __future__ import annotations

# BERT-base's shape at 32 x 256 tokens. lr 1e-4: BERT's own pre-training rate (chosen, not
# measured); the CPU lessons' 1e-3 suits 2- and 4-layer models.
GPU_SIZE: dict[str, object] = {
    "model": "base-bert",
    "batch_size": 32,
    "max_length": 256,
    "lr": 1e-4,
}
GPU_STEPS = 300
# Per lesson: the fields a CUDA run changes (its others stand); a lesson not named here trains at
# its own settings on every device.
GPU_FIELDS: dict[str, dict[str, object]] = {
    # The first lesson is a language model on every device (its loss falls from the first step;
    # a BERT classifier from scratch sits at ln 2 first): GPT-2 small's shape, base-gpt2.
    "still-trains": {**GPU_SIZE, "model": "base-gpt2", "steps": GPU_STEPS},
    # Watched 4 times. A language model, as the first lesson: on an H200 (2026-12-04) base-bert sat
    # near ln 2 and its layers' query/key gradients fell below 2^-32 (9-13 % of all its gradients),
    # wider than fp16's normal range under any scale that does not overflow its largest (2^-2), so
    # its check (at most 5 % scaled, 10x apart) failed. base-gpt2 here is not yet measured on a GPU;
    # the scale doubles after 10 clean steps to reach the largest that fits in 300 steps.
    "underflow": {
        **GPU_SIZE,
        "model": "base-gpt2",
        "steps": GPU_STEPS,
        "watch_grads": GPU_STEPS // 4,
        "growth_interval": 10,
    },
    "loss-scaling": {**GPU_SIZE, "steps": GPU_STEPS},
    # base-bert's three curves agreed on an H200 (gap 0.1 %); base-gpt2's Trainer curve ran 7 %
    # under the other two, unexplained, so not this lesson's size.
    "backends": {**GPU_SIZE, "steps": GPU_STEPS},
}
SIZE_KEY = "lesson_device_size"  # the page's line: which size, and why


def kind_of(device: str | None) -> str:
    """'cuda' for a CUDA device ('cuda:1' too); 'cpu' for anything else (MPS: nothing measured).
    'auto' must be resolved by the caller first."""
    return "cuda" if str(device or "").split(":")[0] == "cuda" else "cpu"


def device_fields(lesson: str, device: str | None) -> dict[str, object]:
    """The fields lesson `lesson` changes on `device` (a resolved device or its kind): {} on a CPU."""
    if kind_of(device) == "cpu":
        return {}
    return dict(GPU_FIELDS.get(lesson, {}))


def size_line(lesson: str, device: str | None) -> tuple[str, dict[str, object]] | None:
    """The message key and arguments of the line saying which size the lesson picked for this
    device and why; None where it keeps its own settings (a CPU, or a lesson with no GPU size)."""
    fields = device_fields(lesson, device)
    if "model" not in fields:
        return None
    return SIZE_KEY, {
        "model": fields["model"],
        "batch": fields["batch_size"],
        "tokens": fields["max_length"],
    }
