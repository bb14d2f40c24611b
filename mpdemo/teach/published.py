"""Published mixed-precision figures for a class without a GPU: each row as its source printed it,
shown labelled "published, not run here", never inside the plots of what this machine measured.
"""

from __future__ import annotations

from dataclasses import dataclass

HF_GUIDE = "https://huggingface.co/docs/transformers/v4.26.1/en/perf_train_gpu_one#fp16-training"
T15026 = "https://github.com/huggingface/transformers/issues/15026"
TORCHAO_FLOAT8 = "https://github.com/pytorch/ao/tree/main/torchao/float8#performance"


@dataclass(frozen=True)
class Published:
    """One published result: hardware, workload, precision against its baseline, the source."""

    source: str
    url: str
    hardware: str
    workload: str
    precision: str
    baseline: str
    figure: float | None  # the precision's own figure where the source gives one
    baseline_figure: float | None
    unit: str | None  # of the two figures ("samples/s"); None when only a ratio is published
    speedup: float  # precision vs baseline, as published (or the two figures divided)


def _ratio(source: str, url: str, hw: str, work: str, p: str, base: str, fig: float,
           base_fig: float, unit: str) -> Published:  # fmt: skip
    return Published(source, url, hw, work, p, base, fig, base_fig, unit, fig / base_fig)


PUBLISHED: tuple[Published, ...] = (
    # The workload's text is names and sizes only: the page shows it in every language.
    _ratio("Hugging Face single-GPU guide", HF_GUIDE, "V100 (16 GB)",
           "bert-large-uncased, Trainer, 4 x 512", "fp16", "fp32", 18.64, 8.86,
           "samples/s"),
    # transformers#15026: t5-base on an A100, the Trainer's samples/s per precision.
    _ratio("transformers#15026", T15026, "A100", "t5-base, Trainer", "tf32", "fp32",
           210.5, 93.7, "samples/s"),
    _ratio("transformers#15026", T15026, "A100", "t5-base, Trainer", "fp16", "fp32",
           217.8, 93.7, "samples/s"),
    _ratio("transformers#15026", T15026, "A100", "t5-base, Trainer", "bf16", "fp32",
           224.1, 93.7, "samples/s"),
    # torchao's float8 training: one Linear layer's forward and backward, M x K x N, vs bf16.
    Published("torchao float8", TORCHAO_FLOAT8, "H100", "nn.Linear 1024 x 2048 x 1024",
              "fp8", "bf16", None, None, None, 0.80),
    Published("torchao float8", TORCHAO_FLOAT8, "H100", "nn.Linear 4096 x 8192 x 16384",
              "fp8", "bf16", None, None, None, 1.39),
)  # fmt: skip
