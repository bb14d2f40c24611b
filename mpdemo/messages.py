"""Every message the engine shows a person, by key: the UI renders it in the page's language."""

from __future__ import annotations

from dataclasses import dataclass, field

from .wording import ENGLISH, NumberStyle

# English templates, by subject. `{name}` fields are filled from the arguments.
EN: dict[str, str] = {
    # --- bad input -------------------------------------------------------------------------
    "unknown_choice": "{field} must be one of {allowed}; got {value!r}",
    "bad_number": "{field} must be {rule}; got {value!r}",
    "missing_number": "{field} is empty: enter {rule}",
    # A bad_number's `rule`, nested ({"key", "args"}) so a page says it in its own language.
    "rule_whole": "a whole number from {lo:,} to {hi:,}",
    "rule_above": "a number above {lo} and at most {hi}",
    "rule_text": "a non-empty text",
    "rule_on_off": "on or off",
    "empty_choice": "{field}: choose at least one ({allowed})",
    "text_too_long": "{field} is {length} characters long; at most {limit} are allowed",
    "bad_slice": "{value!r} is not a valid slice: use the datasets split syntax, e.g. 'train[:2000]', 'train[:10%]' or 'validation[100:600]' (splits here: {splits})",
    "empty_slice": "the slice {value!r} selects no rows (the split {split!r} has {rows:plural(# row|# rows)})",
    "unknown_split": "the dataset has no split {split!r}; it has {splits}",
    "unknown_model": "{value!r} is not a built-in model, a Hugging Face Hub id (owner/name) or a local model folder; built-ins: {allowed}",
    "unknown_dataset": "{value!r} is not a known dataset, a Hub dataset id or a local dataset folder; known: {allowed}",
    "hub_unreachable": "the Hugging Face Hub is not reachable from this machine; pick a built-in model or a local directory (asked for {value!r})",
    "hub_not_found": "{value!r} was not found on the Hugging Face Hub ({detail})",
    "bad_hub_id": "{value!r} is not a valid Hugging Face Hub id ({detail})",
    "local_paths_off": "local paths are turned off on this server (hosted mode); pick a built-in or Hub model",
    "path_not_found": "the folder {value!r} does not exist",
    "path_outside_roots": "{value!r} is outside the folders this server may read ({roots})",
    "not_a_model": "{value!r} is not a model folder saved with save_pretrained ({detail})",
    "not_a_dataset": "{value!r} is not a dataset saved with save_to_disk ({detail})",
    "mem_cap_env": "MPDEMO_MAX_MEMORY_MB",
    "mem_cap_free": "{pct}% of the memory free now",
    "comparison_too_big": "{runs} runs of {params:,} parameters each are trained side by side: about {need_mb:,.0f} MiB of weights, gradients and optimizer state, more than the {cap_mb:,.0f} MiB allowed here ({why}); compare fewer runs or a smaller model",
    "model_too_big": "{value!r} has {params:,} parameters; this server allows at most {limit:,} (MPDEMO_MAX_PARAMS)",
    "task_mismatch": "the model {model!r} ({model_task}) cannot train on {dataset!r} ({data_task})",
    "no_text_column": "the dataset {value!r} has no text column (columns: {columns})",
    "no_label_column": "the dataset {value!r} has no label column (columns: {columns})",
    "no_cuda": "--device cuda was asked for, but this machine has no CUDA GPU (torch sees none)",
    "no_mps": "--device mps was asked for, but this machine has no Apple GPU",
    "no_bf16_gpu": "bf16 needs an Ampere or newer GPU; {gpu} has none: use fp16 or fp32",
    # fp8 (mpdemo/engine/fp8.py): refused before anything loads, saying what torch sees here
    "fp8_needs_gpu": "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper); this machine has no CUDA GPU (torch sees only the CPU)",
    "fp8_needs_gpu_mps": "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper); this machine has no CUDA GPU (torch sees the CPU and an Apple GPU, MPS)",
    "fp8_old_gpu": "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper); this machine has {gpu} (compute capability {cc})",
    "fp8_not_on_gpu": "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper); this machine has {gpu} (compute capability {cc}), but this run's device is {device}: choose the device cuda or auto",
    "fp8_no_torchao": "fp8 training runs through torchao, which is not installed{found} (needs {minimum} or newer): {install}",
    "busy": "another training is running in this process; wait for it or press Stop",
    "torch_single_process": "the torch backend is single-process; launched with {n} processes it would train {n} separate copies. Use --backend accelerate or trainer with accelerate launch",
    "load_failed": "could not load {value!r}: {detail}",
    # --- output files (mpdemo/files/atomic.py): checked before any training -------------------------
    "output_is_folder": "{flag} {path!r} is a folder; give the path of a file",
    "output_empty": "{flag} needs the path of a file; it was given an empty one",
    "output_symlink": "{flag} {path!r} is a symbolic link; give the path of the file itself",
    "output_not_regular": "{flag} {path!r} is not a regular file (a FIFO, a device or a socket); give a file's path",
    "output_same_path": "{flag} {path!r} is the path {other} writes too; give each its own file",
    "output_no_folder": "{flag} {path!r}: the folder {folder!r} does not exist",
    "output_not_writable": "{flag} {path!r}: cannot write in the folder {folder!r} ({detail})",
    # --- runs files read back (mpdemo/files/recorded.py) ---------------------------------------------
    "runs_not_json": "{name} is not a runs file: it is not JSON",
    "runs_bad_shape": "{name} is not a runs file written by mpdemo ({detail})",
    "runs_newer": "{name} was written by a newer mpdemo (runs format {version}; this one reads up to {supported}): update mpdemo to open it",
    "runs_too_big": "{name} is {mb:.0f} MiB; runs files of at most {limit} MiB are read",
    "runs_unreadable": "could not read {name}: {detail}",
    # A file the reader passed that the page still could not draw (a gap in the reader's rules).
    "runs_not_drawn": "{name} holds a value this page cannot draw",
    # A runs file's field by its path ("runs[0].summary.steps"); `problem`: a nested field_* key.
    "runs_bad_field": "{name}: {path} {problem}",
    "field_missing": "is missing",
    "field_nan": "is NaN",
    "field_infinite": "is infinite",
    "field_not_number": "is not a number",
    "field_not_whole": "is not a whole number",
    "field_out_of_range": "is out of range (from {lo:,.6g} to {hi:,.6g})",
    "field_not_text": "is not a text",
    "field_too_long": "is {length:,} characters long (at most {limit:,})",
    "field_control_chars": "holds control characters (a line break, a tab...)",
    "field_not_object": "is not an object",
    "field_not_list": "is not a list",
    "field_not_pair": "is not a pair of numbers",
    "field_too_many": "has {count:,} entries (at most {limit:,})",
    "field_not_bool": "is not true or false",
    "field_not_choice": "is not one of {allowed}",
    "field_not_binades": "is not one bin a binade, the same bins in every layer",
    "field_histogram_bins": "has {counts:,} counts for {edges:,} bin edges (one count more)",
    "field_counts_mismatch": "has counts that do not add up to its {elements:,} elements",
    "field_not_key": "is not a message key",
    "field_not_value": "is not a number, a text or a message",
    "field_not_shown": "cannot be shown (its arguments do not fit its message)",
    # Numerics (issue 29): pure bf16 weights, TF32
    "weights_need_bf16": "weights {weights} (pure bf16) needs precision bf16 and the torch backend; got precision {precision} with backend {backend}",
    "tf32_needs_gpu": "tf32 runs fp32 matmuls on the tensor cores of an NVIDIA GPU of compute capability 8.0 or newer (Ampere); this run's device is {device}: use fp32 here",
    # --- warnings recorded in the summary -----------------------------------------------------
    "tf32_ran": "tf32: torch.backends.cuda.matmul.allow_tf32 was on for this run, so its fp32 matmuls ran in TF32 (10 mantissa bits) on {gpu}",
    "fp32_ran_tf32": "this fp32 run's matmuls ran in TF32 (10 mantissa bits): float32 matmul precision was {setting} on {gpu}",
    "weights_sr": "bf16 weights with stochastic rounding of the update, by {source}",
    "fp16_not_applied": "fp16 requested, ran in {effective}: {backend} does not autocast fp16 on {device}, so this run shows fp32 speed and no loss scaling",
    "dtype_mismatch": "{requested} requested, but the model's matmuls produced {effective}",
    "fp8_layers": "fp8: {float8} of {linear} Linear layers trained as torchao Float8Linear; {kept} kept in {dtype} (the first and last, and any with sizes not multiples of 16)",
    # Speed and memory: rendered from this machine's profile (mpdemo/profile.py), never in advance.
    "speed_faster": "{precision} stepped {speedup:.2f}x faster than fp32 here (95 % interval {low:.2f}-{high:.2f}x, {rounds} interleaved rounds on the same batches; {ms:.3g} vs {fp32_ms:.3g} ms a step; {why})",
    "speed_slower": "{precision} stepped {ratio:.2f}x slower than fp32 here (95 % interval {ratio_low:.2f}-{ratio_high:.2f}x, {rounds} interleaved rounds on the same batches; {ms:.3g} vs {fp32_ms:.3g} ms a step; {why})",
    "speed_same": "{precision} stepped at fp32's speed here: {speedup:.2f}x, 95 % interval {low:.2f}-{high:.2f}x ({rounds} interleaved rounds on the same batches; {ms:.3g} vs {fp32_ms:.3g} ms a step; {why})",
    "speed_unsure": "{precision} against fp32 here: unsure, {speedup:.2f}x with a 95 % interval of {low:.2f}-{high:.2f}x ({ms:.3g} vs {fp32_ms:.3g} ms a step): {reason}",
    "speed_unsure_no_interval": "{precision} against fp32 here: unsure ({ms:.3g} vs {fp32_ms:.3g} ms a step): {reason}",
    "unsure_too_few": "{rounds:plural(# interleaved round is|# interleaved rounds are)} too few for a 95 % interval (6 are needed): measure for longer or press Repeat",
    "unsure_busy": "other processes took {pct:.0f} % of the CPU while it was measured: close them, or press Repeat",
    "unsure_wide": "the interval reaches both 'the same' and 'different': press Repeat, or use a bigger model or batch",
    "load_changed": "{label} against {base}: the runs' own steps gave {ratio:.2f}x, outside the interleaved interval {low:.2f}-{high:.2f}x: the machine's load changed while they ran, one after the other; the interleaved figure stands",
    "hw_cpu_has": "{isa} CPU with {flags}",
    "hw_cpu_lacks": "{isa} CPU without {precision} instructions",
    "hw_gpu": "{name}, compute capability {cc}",
    "hw_mps": "Apple GPU through MPS",
    "machine_cpu": "This machine: {name}, {isa} CPU, {threads} threads, torch {torch}; has {has}; lacks {lacks}",
    "machine_cpu_lacks": "This machine: {name}, {isa} CPU, {threads} threads, torch {torch}; lacks {lacks}",
    "machine_cpu_has": "This machine: {name}, {isa} CPU, {threads} threads, torch {torch}; has {has}",
    "machine_cuda": "This machine: {name} (compute capability {cc}, bf16), CPU {cpu}, torch {torch}",
    "machine_cuda_no_bf16": "This machine: {name} (compute capability {cc}, no bf16), CPU {cpu}, torch {torch}",
    "machine_mps": "This machine: Apple GPU through MPS, CPU {cpu}, torch {torch}",
    "side_by_side": "the {runs} runs take turns on the same batches, round by round, so their own timings are the interleaved measurement of the speed-ups",
    "eta_rounds_slower": "re-estimated: the last rounds took {factor:.1f}x as long as the first ones (the machine's load changed): about {left} left",
    "eta_rounds_faster": "re-estimated: the last rounds went {factor:.1f}x as fast as the first ones (the machine's load changed): about {left} left",
    "mem_less": "{label} kept {pct:.0f}% less activation memory for backward than fp32 ({mb:.2f} vs {fp32_mb:.2f} MiB in one step)",
    "mem_more": "{label} kept {pct:.0f}% more activation memory for backward than fp32 ({mb:.2f} vs {fp32_mb:.2f} MiB in one step)",
    "mem_same": "{label} kept as much activation memory for backward as fp32 ({mb:.2f} vs {fp32_mb:.2f} MiB in one step)",
    "same_maths": "ran in fp32",
    "hub_entry_offline": "{value!r} needs internet (the Hugging Face Hub is not reachable from this machine); pick a built-in ({builtins}) or a local folder",
    "mps_autocast_off": "this torch build cannot autocast {precision} on Apple's MPS; the run is fp32",
    "no_scaler": "fp16 without loss scaling: small gradients flush to zero (underflow) and large ones overflow, nothing guards against either",
    "diverged_nonfinite": "the loss became {loss} at step {step}: the run diverged (weights or gradients overflowed); the curve up to that point is kept",
    "diverged_exploded": "the loss exploded from {first:.3g} to {loss:.3g} at step {step}: the run diverged (learning rate too high?); the curve up to that point is kept",
    "stopped_by_user": "stopped after {step} of {steps} steps",
    "cores_shared": "other programs took about {others} cores from step {step}: torch computed on {threads} of its {full} threads while they ran (threads waiting for cores they share make every step slower)",
    "slice_clamped": "{slice} asked for more rows than the split has; used {rows:plural(# row|# rows)}",
    "eval_split_held_out": "{dataset} has no validation split: {slice} read {used}, its held-out split",
    "distributed": "trained on {n} processes; the global batch of {batch} was split across them",
    "failed": "the run failed: {detail}",
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
    "pays_from": "at batch {batch}, {precision} pays {where} from about {from_m:.3g} M parameters: faster from {size} up ({speedup:.2f}x there, 95 % interval {low:.2f}-{high:.2f}x); below it, {breakdown}",
    "pays_always": "at batch {batch}, {precision} paid at every size measured ({sizes}; up to {hi_m:.3g} M parameters)",
    "pays_never": "at batch {batch}, {precision} never paid {where}: {breakdown}",
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
    # Where a sweep's sentence says it paid: this machine's sweep, or a recorded one's machine.
    "sweep_here": "here",
    "sweep_on_this": "on this {device}",
    "sweep_on_recorded": "on the {machine}",
    "sweep_fp8_compile_off": "fp8 is not in the sweep: torchao's fp8 layers speed a step up only under torch.compile, which mpdemo does not run (uncompiled, on an H200 they ran at 0.17-0.21x of fp32's speed)",
    "pays_never_anywhere": "{precision} never pays {where}: slower or the same at each of the {points} points measured ({lo_m:.3g} to {hi_m:.3g} M parameters, every batch size)",
    "pays_always_anywhere": "{precision} pays {where} at each of the {points} points measured ({lo_m:.3g} to {hi_m:.3g} M parameters, every batch size)",
    "pays_never_anywhere_one": "{precision} never pays {where}: slower or the same at each of the {points} points measured (one size, {lo_m:.3g} M parameters, every batch size)",
    "pays_always_anywhere_one": "{precision} pays {where} at each of the {points} points measured (one size, {lo_m:.3g} M parameters, every batch size)",
    # --- memory anatomy (mpdemo/engine/memory.py), from the tensors' bytes after one step -------------
    "anatomy_one": "{precision}: {mb:.1f} MiB in one step; weights, gradients and AdamW's state {fixed_mb:.1f} MiB ({per_param:.1f} bytes a parameter), saved activations {act_mb:.1f} MiB ({act_pct:.0f} %); Accelerate's rule: {est_mb:.1f} MiB",
    "anatomy_vs_fp32": "{precision}: {mb:.1f} MiB in one step; weights, gradients and AdamW's state {fixed_mb:.1f} MiB ({per_param:.1f} bytes a parameter, as in fp32), saved activations {act_mb:.1f} MiB ({act_ratio:.2f}x fp32's, {act_pct:.0f} % of the step); Accelerate's rule: {est_mb:.1f} MiB",
    "anatomy_rule": "Accelerate's rule (accelerate estimate-memory, 'Training using Adam'): with S the model in fp32 (4 bytes a parameter), the largest of weights S, gradients S, AdamW 2S and a step 4S for fp32 (4S), and of weights S, gradients 1.5S, AdamW 2S for fp16/bf16 (2S); no activations (batch size 1)",
    "published_heading": "published, not run here: figures other machines gave their authors, with the sources",
    "flops_rule": "achieved TFLOP/s = 6 x parameters x tokens per step / step time; MFU = that / the device's dense peak for the precision",
    # --- a class on one server (mpdemo/classroom/broadcast.py) ---------------------------------------
    "queue_full": "the line on this server is full ({limit} comparisons waiting): press Train with the default settings to watch the comparison already running, follow the teacher's board, or try again in a few minutes",
    "queue_full_client": "this address already has {limit} comparisons waiting in this server's line, as many as one address may: wait for one of them to start, or watch the comparison already running",
    "viewers_full_client": "{limit} pages from this address already watch or wait for comparisons on this server, as many as one address may: close one of them, or wait for one to end",
    "followers_full_client": "{limit} pages from this address already follow boards on this server, as many as one address may: close one of them first",
    "board_unknown": "no board has this code on this server: a board code is {length} letters, as the teacher's page shows it",
    "board_too_many": "too many wrong board codes from here: wait {wait} s and type the code again",
    "board_full": "this server has {limit} boards open, as many as it keeps: follow one of them, or publish once a teacher closes their page",
    "board_full_client": "{limit} boards are already published from this address: close one of those pages first",
    "comparison_too_long": "this comparison would take about {need} min on this server; one comparison may take at most {cap} min here, so the class behind it waits its turn: {steps} steps a run would fit",
    "comparison_too_long_runs": "this comparison would take about {need} min on this server; one comparison may take at most {cap} min here, so the class behind it waits its turn: choose fewer runs or repetitions",
    "sweep_too_long_cap": "this sweep would take about {need} min on this server; a comparison or a sweep may take at most {cap} min here, so the class behind it waits its turn: a timing budget of {budget} s would fit",
    "sweep_too_long_cap_points": "this sweep would take about {need} min on this server; a comparison or a sweep may take at most {cap} min here, so the class behind it waits its turn: choose fewer sizes or batch sizes",
    # --- the course's lessons (mpdemo/teach/lessons.py), in the course's order -----------------
    "lesson_still_trains_title": "Does it still train?",
    # teach/device_sizes.py: the size a comparison lesson picked on a GPU, and why.
    "lesson_device_size": "On a GPU the lesson trains {model} at batch {batch} x {tokens} tokens: on an H200 the small default was launch-bound and 16-bit ran it 1.2x slower (Where it pays measures this GPU)",
    "lesson_still_trains_slide": "What is mixed precision training? (combine FP16, FP32 computations)",
    "lesson_still_trains_look": "fp16 (with its loss scaler) draws the same falling loss curve as fp32; compare the memory and the speed measured here",
    "lesson_underflow_title": "Underflow",
    "lesson_underflow_slide": "Underflow: number vanishes to 0 because it falls below precision",
    "lesson_underflow_look": "the watched gradients' pictures: without loss scaling (S=1) a large share of fp16's gradients, often most, fall below its smallest normal number (the yellow band) and keep fewer digits, or vanish to 0; with the scale they sit in the normal range. The loss lines may still agree: AdamW divides each update by the gradient's own size",
    "lesson_loss_scaling_title": "Loss scaling at work",
    "lesson_loss_scaling_slide": "Scale loss to prevent underflow (torch.amp.GradScaler)",
    "lesson_loss_scaling_look": "the scale doubles every 5 clean steps; a step that overflows is skipped (marked) and the scale halves",
    "lesson_master_weights_title": "Master weights",
    "lesson_master_weights_slide": "Mixed precision training: an fp32 master copy of the weights",
    "lesson_master_weights_look": "pure bf16 weights lose a growing share of their updates (lost_update_share) and lag; stochastic rounding of the update recovers the fp32 master copy's curve",
    "lesson_backends_title": "One flag, three backends",
    "lesson_backends_slide": "From PyTorch to Accelerator to Trainer",
    "lesson_backends_look": "one setting turns on mixed precision in the torch loop, Accelerate and the Trainer: the same curve three times; the Code tab shows each listing",
    "lesson_backends_cpu": "On a CPU, fp16 through Accelerate or the Trainer runs in fp32 (no autocast, no scaler), so this lesson turns on bf16, which all three apply here",
    "lesson_where_it_pays_title": "Where it pays",
    "lesson_where_it_pays_slide": "Mixed precision training accelerates computation",
    "lesson_where_it_pays_look": "the sweep over model sizes: from which size 16-bit steps faster here, beside the published figures",
    "lesson_where_it_pays_cpu": "torch reports no bf16 or fp16 instructions on this CPU: the sweep's points say what it measures here, and the published figures beside it show where it pays on GPUs",
}


@dataclass(frozen=True)
class Note:
    """A warning or message: a key into the message tables plus its arguments."""

    key: str
    args: dict[str, object] = field(default_factory=dict)

    @property
    def text(self) -> str:
        """The English text."""
        return render(self.key, self.args)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"key": self.key, "args": dict(self.args), "text": self.text}


def render(
    key: str,
    args: dict[str, object],
    table: dict[str, str] | None = None,
    style: NumberStyle = ENGLISH,
) -> str:
    """Fill a message template (`table`, `style`: a language's), else English's, else the key."""
    template = (table or {}).get(key) or EN.get(key) or key
    # A nested message ({"key", "args"}) is rendered first, in the same language.
    args = {
        k: render(v["key"], v.get("args") or {}, table, style)
        if isinstance(v, dict) and "key" in v
        else v
        for k, v in args.items()
    }
    try:
        return style.format(template, args)
    except (KeyError, IndexError, ValueError, TypeError, OverflowError):
        # A wrong argument (None under a number format) must not take the page down with it.
        return f"{template} {args}"


class MpdemoError(Exception):
    """An error a person can act on: bad input, an unreachable hub, a missing GPU."""

    def __init__(self, key: str, **args: object) -> None:
        self.note = Note(key, args)
        super().__init__(self.note.text)

    @property
    def key(self) -> str:
        """The message key."""
        return self.note.key


class ConfigError(MpdemoError, ValueError):
    """A value in RunConfig (or typed in the UI/CLI) that cannot run."""
