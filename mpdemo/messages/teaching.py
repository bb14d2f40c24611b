"""English templates of a class on one server (its queue, boards and caps) and of the
course's lessons."""

TEACHING: dict[str, str] = {
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
