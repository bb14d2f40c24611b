"""English templates of the size sweep: its refusals, the crossover and the memory anatomy."""

SWEEP: dict[str, str] = {
    # --- the size sweep (mpdemo/sweep/plan.py): refusals before anything runs ----------------------
    "sweep_bad_sizes": "sizes are width x layers pairs of the built-in BERT, e.g. 128x2,256x4,512x8 (or tiny-bert, small-bert); got {value!r}",
    "sweep_bad_hidden": "{value!r}: the width must be a multiple of 32 from {lo} to {hi}",
    "sweep_bad_layers": "{value!r}: the layers must be from {lo} to {hi}",
    "sweep_bad_batch_sizes": "batch sizes are whole numbers, e.g. 8,32,128; got {value!r}",
    "sweep_precision": "the sweep times {allowed} through torch.autocast; got {value!r}",
    "sweep_one_precision": "the sweep compares fp32 with at least one of {allowed}: add one",
    "sweep_too_many_points": "{points} points (sizes x batch sizes) are more than the {limit} a sweep may have",
    "sweep_memory": "{size} at batch {batch} x {seq} tokens would need about {need_gb:.1f} GB ({params:,} parameters x 16 bytes for weights, gradients and AdamW, plus fp32 activations); {free_gb:.1f} GB are free here: drop that size or batch size",
    "sweep_too_long": "this sweep would take about {total_min:.0f} min here ({points} points; {size} at batch {batch} alone about {point_min:.1f} min), past the cap of {cap_min:.0f} min (MPDEMO_MAX_SWEEP_S); estimated as 6 x parameters x tokens per step at the rate a Linear layer's step measured here (fp32 {gflops:.3g} GFLOP/s, {slowest} {slowest_gflops:.3g}): drop the largest sizes or batch sizes",
    "sweep_memory_model": "the memory anatomy measures a built-in BERT: tiny-bert, small-bert, or a width x layers size (--memory-size 512x8); got {value!r}",
    "sweep_bad_budget": "the timing budget must be above 0 and at most 3600 seconds; got {value!r}",
    "sweep_needs_labels": "the sweep trains the built-in BERT classifier: {value!r} has no labels to classify",
    # --- the crossover, rendered from the points' verdicts -------------------------------------
    "pays_from": "at batch {batch}, {precision} pays here from about {from_m:.2g} M parameters: faster from {size} up ({speedup:.2f}x there, 95 % interval {low:.2f}-{high:.2f}x); below it, {breakdown}",
    "pays_always": "at batch {batch}, {precision} paid at every size measured ({sizes}; up to {hi_m:.2g} M parameters)",
    "pays_never": "at batch {batch}, {precision} never paid here: {breakdown}",
    "pays_never_unsure": "at batch {batch}, {precision} was faster at no size measured: {breakdown}",
    "pays_unsure": "at batch {batch}, {precision} is unsure at every size measured ({sizes}): the intervals are too wide to say",
    "pays_mixed": "at batch {batch}, {precision} paid at some sizes and not at others: {breakdown}",
    # The sizes that had one verdict (a breakdown's parts); a _then part holds the next one.
    "at_faster": "faster at {sizes}",
    "at_slower": "slower at {sizes}",
    "at_same": "the same as fp32 at {sizes}",
    "at_unsure": "unsure at {sizes}",
    "at_faster_then": "faster at {sizes}; {rest}",
    "at_slower_then": "slower at {sizes}; {rest}",
    "at_same_then": "the same as fp32 at {sizes}; {rest}",
    "at_unsure_then": "unsure at {sizes}; {rest}",
    # On CUDA: fp8 is not one of the sweep's precisions (sweep/notes.py says why, in one line).
    "sweep_fp8_compile_off": "fp8 is not in the sweep: torchao's fp8 layers speed a step up only under torch.compile, which mpdemo does not run (uncompiled, on an H200 they ran at 0.17-0.21x of fp32's speed)",
    "pays_never_anywhere": "{precision} never pays on this {device}: slower or the same at each of the {points} points measured ({lo_m:.2g} to {hi_m:.2g} M parameters, every batch size)",
    "pays_always_anywhere": "{precision} pays on this {device} at each of the {points} points measured ({lo_m:.2g} to {hi_m:.2g} M parameters, every batch size)",
    "pays_never_anywhere_one": "{precision} never pays on this {device}: slower or the same at each of the {points} points measured (one size, {lo_m:.2g} M parameters, every batch size)",
    "pays_always_anywhere_one": "{precision} pays on this {device} at each of the {points} points measured (one size, {lo_m:.2g} M parameters, every batch size)",
    # --- memory anatomy (mpdemo/engine/memory.py), from the tensors' bytes after one step -------------
    "anatomy_one": "{precision}: {mb:.1f} MiB in one step; weights, gradients and AdamW's state {fixed_mb:.1f} MiB ({per_param:.1f} bytes a parameter), saved activations {act_mb:.1f} MiB ({act_pct:.0f} %); Accelerate's rule: {est_mb:.1f} MiB",
    "anatomy_vs_fp32": "{precision}: {mb:.1f} MiB in one step; weights, gradients and AdamW's state {fixed_mb:.1f} MiB ({per_param:.1f} bytes a parameter, as in fp32), saved activations {act_mb:.1f} MiB ({act_ratio:.2f}x fp32's, {act_pct:.0f} % of the step); Accelerate's rule: {est_mb:.1f} MiB",
    "anatomy_rule": "Accelerate's rule (accelerate estimate-memory, 'Training using Adam'): with S the model in fp32 (4 bytes a parameter), the largest of weights S, gradients S, AdamW 2S and a step 4S for fp32 (4S), and of weights S, gradients 1.5S, AdamW 2S for fp16/bf16 (2S); no activations (batch size 1)",
    "published_heading": "published, not run here: figures other machines gave their authors, with the sources",
    "flops_rule": "achieved TFLOP/s = 6 x parameters x tokens per step / step time; MFU = that / the device's dense peak for the precision",
}
