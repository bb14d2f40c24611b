"""The master-weights lesson: mixed precision's fp32 master copy against pure bf16 weights, with
and without stochastic rounding of the update, trained side by side on this machine.

`configs()` gives the lesson's runs (a lessons registry, mpdemo/teach/lessons.py, lists it as
`master-weights`); `reading(summaries, steps)` says what they showed, from their own figures;
`bytes_table()` gives each recipe's bytes per parameter as the Ultra-Scale Playbook counts them,
next to what the runs measured (their summaries' `bytes_per_param`). No torch here.

Settings: tiny-gpt2, lr 1e-3, 60 steps, batch 16. Its weights start near N(0, 0.02) and
LayerNorm's at 1.0; AdamW moves each element by about lr a step, under half a bf16 ulp for every
weight above about 2^-1 (LayerNorm's gains among them), so pure bf16 loses a share of its updates
while the fp32 master copy loses none. Measured (mean loss of the last 10 steps, the lesson's
check in mpdemo/teach/lesson_checks.py) on a 2-core Xeon with AVX512-FP16 and AMX, seeds 0-4, 17
and 1234: pure bf16 0.085-0.093 above the fp32 master (seed 0: 4.258 vs 4.173), stochastic
rounding within 0.01 of the master (4.172): SR recovers the mixed curve. (Under SR about half the
elements still keep their value in a given step, rounding down by chance: their updates land on
average, which is what the curve shows.) At lr 1e-4 (the settings before) the gap was 0.03, under
the line width of the page's plot; at 3e-4, 0.05. A language model's loss falls from the first
step, so the curves part early; at lr 3e-4 tiny-bert lost 40-70 % of updates yet its curve matched.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..config import WEIGHTS, RunConfig

NAME = "master-weights"
MODEL = "tiny-gpt2"
LR = 1e-3
STEPS = 60
BATCH = 16
RECIPES = WEIGHTS  # RunConfig.weights: fp32 master, pure bf16, pure bf16 + SR


def configs(base: RunConfig | None = None) -> list[RunConfig]:
    """The lesson's three runs: bf16 compute with fp32 master weights, pure bf16, pure bf16 + SR.

    All three report lost_update_share (the mixed run's is the baseline: about zero).
    """
    b = base or RunConfig()
    common = b.replace(
        model=MODEL, precision="bf16", backend="torch", lr=LR, steps=STEPS, batch_size=BATCH,
        lost_updates=True,
    )  # fmt: skip
    return [common.replace(weights=w) for w in RECIPES]


# The Ultra-Scale Playbook's count (bytes per parameter, AdamW): mixed precision keeps bf16
# weights and gradients for compute plus an fp32 master copy and fp32 moments; pure bf16 keeps
# everything in bf16. (torch.autocast, as mpdemo runs it, keeps the fp32 weights themselves as
# the master and casts to bf16 on the fly: the runs' measured bytes_per_param show that.)
PLAYBOOK = {
    "fp32": {"weights": 4, "gradients": 4, "master_copy": 0, "adam_moments": 8},
    "mixed": {"weights": 2, "gradients": 2, "master_copy": 4, "adam_moments": 8},
    "bf16": {"weights": 2, "gradients": 2, "master_copy": 0, "adam_moments": 4},
}


def bytes_table() -> list[dict[str, object]]:
    """The Playbook's bytes per parameter of each recipe, with their total."""
    return [{"recipe": k, **v, "total": sum(v.values())} for k, v in PLAYBOOK.items()]


def reading(runs: Iterable[Mapping[str, object]]) -> list[dict[str, object]]:
    """Per run: its weights, final loss, mean lost-update share and measured bytes per parameter.

    `runs` are run records ({"config", "summary", "steps"}); every figure comes from them.
    """
    out = []
    for r in runs:
        s, cfg = r["summary"], r.get("config") or {}
        steps = [st for st in r.get("steps", []) if st.get("lost_update_share") is not None]
        worst = max(steps, key=lambda st: st["lost_update_share"], default=None)
        out.append(
            {
                "label": s.get("label"),
                "weights": cfg.get("weights", "fp32"),
                "final_loss": s.get("final_loss"),
                "eval_loss": s.get("eval_loss"),
                "lost_update_share": s.get("lost_update_share"),
                "most_lost_step": worst["step"] if worst else None,
                "most_lost_share": worst["lost_update_share"] if worst else None,
                "bytes_per_param": s.get("bytes_per_param"),
            }
        )
    return out
