"""English templates of what refuses a person's input: bad settings, a model or dataset that
cannot load, a device or precision this machine lacks, output files, runs files read back."""

from __future__ import annotations

INPUTS: dict[str, str] = {
    # --- bad input -------------------------------------------------------------------------
    "unknown_choice": "{field} must be one of {allowed}; got {value!r}",
    "bad_number": "{field} must be {rule}; got {value!r}",
    "missing_number": "{field} is empty: enter {rule}",
    # A bad_number's `rule` is one of these, nested ({"key", "args"}): a page says it in its
    # own language, numbers its own way ("from 1 to 20.000" in Spanish).
    "rule_whole": "a whole number from {lo:,} to {hi:,}",
    "rule_above": "a number above {lo} and at most {hi}",
    "rule_text": "a non-empty text",
    "rule_on_off": "on or off",
    "empty_choice": "{field}: choose at least one ({allowed})",
    "text_too_long": "{field} is {length} characters long; at most {limit} are allowed",
    "bad_slice": (
        "{value!r} is not a valid slice: use the datasets split syntax, e.g. "
        "'train[:2000]', 'train[:10%]' or 'validation[100:600]' (splits here: {splits})"
    ),
    "empty_slice": "the slice {value!r} selects no rows (the split {split!r} has {rows:plural(# row|# rows)})",
    "unknown_split": "the dataset has no split {split!r}; it has {splits}",
    "unknown_model": (
        "{value!r} is not a built-in model, a Hugging Face Hub id (owner/name) or a local "
        "model folder; built-ins: {allowed}"
    ),
    "unknown_dataset": (
        "{value!r} is not a known dataset, a Hub dataset id or a local dataset folder; "
        "known: {allowed}"
    ),
    "hub_unreachable": (
        "the Hugging Face Hub is not reachable from this machine; pick a built-in model or a "
        "local directory (asked for {value!r})"
    ),
    "hub_not_found": "{value!r} was not found on the Hugging Face Hub ({detail})",
    "bad_hub_id": "{value!r} is not a valid Hugging Face Hub id ({detail})",
    "local_paths_off": (
        "local paths are turned off on this server (hosted mode); pick a built-in or Hub model"
    ),
    "path_not_found": "the folder {value!r} does not exist",
    "path_outside_roots": "{value!r} is outside the folders this server may read ({roots})",
    "not_a_model": "{value!r} is not a model folder saved with save_pretrained ({detail})",
    "not_a_dataset": "{value!r} is not a dataset saved with save_to_disk ({detail})",
    "mem_cap_env": "MPDEMO_MAX_MEMORY_MB",
    "mem_cap_free": "{pct}% of the memory free now",
    "comparison_too_big": (
        "{runs} runs of {params:,} parameters each are trained side by side: about {need_mb:,.0f} "
        "MiB of weights, gradients and optimizer state, more than the {cap_mb:,.0f} MiB allowed "
        "here ({why}); compare fewer runs or a smaller model"
    ),
    "model_too_big": (
        "{value!r} has {params:,} parameters; this server allows at most {limit:,} "
        "(MPDEMO_MAX_PARAMS)"
    ),
    "task_mismatch": "the model {model!r} ({model_task}) cannot train on {dataset!r} ({data_task})",
    "no_text_column": "the dataset {value!r} has no text column (columns: {columns})",
    "no_label_column": "the dataset {value!r} has no label column (columns: {columns})",
    "no_cuda": "--device cuda was asked for, but this machine has no CUDA GPU (torch sees none)",
    "no_mps": "--device mps was asked for, but this machine has no Apple GPU",
    "no_bf16_gpu": "bf16 needs an Ampere or newer GPU; {gpu} has none: use fp16 or fp32",
    # fp8 (mpdemo/engine/fp8.py): refused before anything loads, saying what torch sees here
    "fp8_needs_gpu": (
        "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper); "
        "this machine has no CUDA GPU (torch sees only the CPU)"
    ),
    "fp8_needs_gpu_mps": (
        "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper); "
        "this machine has no CUDA GPU (torch sees the CPU and an Apple GPU, MPS)"
    ),
    "fp8_old_gpu": (
        "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper); "
        "this machine has {gpu} (compute capability {cc})"
    ),
    "fp8_not_on_gpu": (
        "fp8 training needs an NVIDIA GPU with compute capability 8.9 or newer (Ada, Hopper); "
        "this machine has {gpu} (compute capability {cc}), but this run's device is {device}: "
        "choose the device cuda or auto"
    ),
    "fp8_no_torchao": (
        "fp8 training runs through torchao, which is not installed{found} (needs {minimum} or "
        "newer): {install}"
    ),
    "busy": "another training is running in this process; wait for it or press Stop",
    "torch_single_process": (
        "the torch backend is single-process; launched with {n} processes it would train {n} "
        "separate copies. Use --backend accelerate or trainer with accelerate launch"
    ),
    "load_failed": "could not load {value!r}: {detail}",
    # --- output files (mpdemo/files/atomic.py): checked before any training -------------------------
    "output_is_folder": "{flag} {path!r} is a folder; give the path of a file",
    "output_empty": "{flag} needs the path of a file; it was given an empty one",
    "output_symlink": "{flag} {path!r} is a symbolic link; give the path of the file itself",
    "output_not_regular": (
        "{flag} {path!r} is not a regular file (a FIFO, a device or a socket); give a file's path"
    ),
    "output_same_path": "{flag} {path!r} is the path {other} writes too; give each its own file",
    "output_no_folder": "{flag} {path!r}: the folder {folder!r} does not exist",
    "output_not_writable": "{flag} {path!r}: cannot write in the folder {folder!r} ({detail})",
    # --- runs files read back (mpdemo/files/recorded.py) ---------------------------------------------
    "runs_not_json": "{name} is not a runs file: it is not JSON",
    "runs_bad_shape": "{name} is not a runs file written by mpdemo ({detail})",
    "runs_newer": (
        "{name} was written by a newer mpdemo (runs format {version}; this one reads up to "
        "{supported}): update mpdemo to open it"
    ),
    "runs_too_big": "{name} is {mb:.0f} MiB; runs files of at most {limit} MiB are read",
    "runs_unreadable": "could not read {name}: {detail}",
    # A file the reader passed that the page still could not draw (a gap in the reader's rules).
    "runs_not_drawn": "{name} holds a value this page cannot draw",
    # One field of a runs file, named by its path ("runs[0].summary.steps"); `problem` is one of
    # the field_* messages below, nested, so a page says it in its own language.
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
    "weights_need_bf16": (
        "weights {weights} (pure bf16) needs precision bf16 and the torch backend; got "
        "precision {precision} with backend {backend}"
    ),
    "tf32_needs_gpu": (
        "tf32 runs fp32 matmuls on the tensor cores of an NVIDIA GPU of compute capability 8.0 or "
        "newer (Ampere); this run's device is {device}: use fp32 here"
    ),
}
