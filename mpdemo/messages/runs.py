"""English templates of what a run records and says: the warnings in its summary, the speed
verdicts and the hardware behind them, the plan and its estimate, the activation memory."""

from __future__ import annotations

RUNS: dict[str, str] = {
    # --- warnings recorded in the summary -----------------------------------------------------
    "tf32_ran": (
        "tf32: torch.backends.cuda.matmul.allow_tf32 was on for this run, so its fp32 matmuls ran "
        "in TF32 (10 mantissa bits) on {gpu}"
    ),
    "fp32_ran_tf32": (
        "this fp32 run's matmuls ran in TF32 (10 mantissa bits): float32 matmul precision was "
        "{setting} on {gpu}"
    ),
    "weights_sr": "bf16 weights with stochastic rounding of the update, by {source}",
    "fp16_not_applied": (
        "fp16 requested, ran in {effective}: {backend} does not autocast fp16 on {device}, so "
        "this run shows fp32 speed and no loss scaling"
    ),
    "dtype_mismatch": "{requested} requested, but the model's matmuls produced {effective}",
    "fp8_layers": (
        "fp8: {float8} of {linear} Linear layers trained as torchao Float8Linear; {kept} kept "
        "in {dtype} (the first and last, and any with sizes not multiples of 16)"
    ),
    # Speed and memory: rendered from this machine's profile (mpdemo/profile.py), never in advance.
    "speed_faster": (
        "{precision} stepped {speedup:.2f}x faster than fp32 here (95 % interval {low:.2f}-{high:.2f}x, "
        "{rounds} interleaved rounds on the same batches; {ms:.3g} vs {fp32_ms:.3g} ms a step; {why})"
    ),
    "speed_slower": (
        "{precision} stepped {ratio:.2f}x slower than fp32 here (95 % interval {ratio_low:.2f}-"
        "{ratio_high:.2f}x, {rounds} interleaved rounds on the same batches; {ms:.3g} vs "
        "{fp32_ms:.3g} ms a step; {why})"
    ),
    "speed_same": (
        "{precision} stepped at fp32's speed here: {speedup:.2f}x, 95 % interval {low:.2f}-{high:.2f}x "
        "({rounds} interleaved rounds on the same batches; {ms:.3g} vs {fp32_ms:.3g} ms a step; {why})"
    ),
    "speed_unsure": (
        "{precision} against fp32 here: unsure, {speedup:.2f}x with a 95 % interval of "
        "{low:.2f}-{high:.2f}x ({ms:.3g} vs {fp32_ms:.3g} ms a step): {reason}"
    ),
    "speed_unsure_no_interval": (
        "{precision} against fp32 here: unsure ({ms:.3g} vs {fp32_ms:.3g} ms a step): {reason}"
    ),
    "unsure_too_few": (
        "{rounds:plural(# interleaved round is|# interleaved rounds are)} too few for a 95 % interval "
        "(6 are needed): measure for longer or press Repeat"
    ),
    "unsure_busy": (
        "other processes took {pct:.0f} % of the CPU while it was measured: close them, or press Repeat"
    ),
    "unsure_wide": (
        "the interval reaches both 'the same' and 'different': press Repeat, or use a bigger model or "
        "batch"
    ),
    "load_changed": (
        "{label} against {base}: the runs' own steps gave {ratio:.2f}x, outside the interleaved "
        "interval {low:.2f}-{high:.2f}x: the machine's load changed while they ran, one after the "
        "other; the interleaved figure stands"
    ),
    "hw_cpu_has": "{isa} CPU with {flags}",
    "hw_cpu_lacks": "{isa} CPU without {precision} instructions",
    "hw_gpu": "{name}, compute capability {cc}",
    "hw_mps": "Apple GPU through MPS",
    "machine_cpu": (
        "This machine: {name}, {isa} CPU, {threads} threads, torch {torch}; has {has}; lacks {lacks}"
    ),
    "machine_cpu_lacks": (
        "This machine: {name}, {isa} CPU, {threads} threads, torch {torch}; lacks {lacks}"
    ),
    "machine_cpu_has": "This machine: {name}, {isa} CPU, {threads} threads, torch {torch}; has {has}",
    "machine_cuda": "This machine: {name} (compute capability {cc}, bf16), CPU {cpu}, torch {torch}",
    "machine_cuda_no_bf16": (
        "This machine: {name} (compute capability {cc}, no bf16), CPU {cpu}, torch {torch}"
    ),
    "machine_mps": "This machine: Apple GPU through MPS, CPU {cpu}, torch {torch}",
    "calibrating": "measuring the training step on this machine (a few seconds)...",
    "side_by_side": (
        "the {runs} runs take turns on the same batches, round by round, so their own timings "
        "are the interleaved measurement of the speed-ups"
    ),
    "eta_rounds_slower": (
        "re-estimated: the last rounds took {factor:.1f}x as long as the first ones (the "
        "machine's load changed): about {left} left"
    ),
    "eta_rounds_faster": (
        "re-estimated: the last rounds went {factor:.1f}x as fast as the first ones (the "
        "machine's load changed): about {left} left"
    ),
    "eta_revised_slower": (
        "re-estimated: the runs step {factor:.1f}x slower than the step measured before them "
        "(the machine's load changed): about {left} left"
    ),
    "eta_revised_faster": (
        "re-estimated: the runs step {factor:.1f}x faster than the step measured before them "
        "(the machine's load changed): about {left} left"
    ),
    "mem_less": (
        "{label} kept {pct:.0f}% less activation memory for backward than fp32 "
        "({mb:.2f} vs {fp32_mb:.2f} MiB in one step)"
    ),
    "mem_more": (
        "{label} kept {pct:.0f}% more activation memory for backward than fp32 "
        "({mb:.2f} vs {fp32_mb:.2f} MiB in one step)"
    ),
    "mem_same": (
        "{label} kept as much activation memory for backward as fp32 "
        "({mb:.2f} vs {fp32_mb:.2f} MiB in one step)"
    ),
    "same_maths": "ran in fp32",
    "hub_entry_offline": (
        "{value!r} needs internet (the Hugging Face Hub is not reachable from this machine); "
        "pick a built-in ({builtins}) or a local folder"
    ),
    "mps_autocast_off": (
        "this torch build cannot autocast {precision} on Apple's MPS; the run is fp32"
    ),
    "no_scaler": (
        "fp16 without loss scaling: small gradients flush to zero (underflow) and large ones "
        "overflow, nothing guards against either"
    ),
    "diverged_nonfinite": (
        "the loss became {loss} at step {step}: the run diverged (weights or gradients "
        "overflowed); the curve up to that point is kept"
    ),
    "diverged_exploded": (
        "the loss exploded from {first:.3g} to {loss:.3g} at step {step}: the run diverged "
        "(learning rate too high?); the curve up to that point is kept"
    ),
    "stopped_by_user": "stopped after {step} of {steps} steps",
    "cores_shared": (
        "other programs took about {others} cores from step {step}: torch computed on "
        "{threads} of its {full} threads while they ran (threads waiting for cores they share "
        "make every step slower)"
    ),
    "slice_clamped": "{slice} asked for more rows than the split has; used {rows:plural(# row|# rows)}",
    "distributed": "trained on {n} processes; the global batch of {batch} was split across them",
    "failed": "the run failed: {detail}",
}
