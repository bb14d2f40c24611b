"""The engine: where torch lives. prepare() builds a run's model, optimizer and data (core.py, data.py,
models.py); precision.py is the one precision code path; recorder.py is a backend's `rec` (times each
step, emits events, builds the summary); machine.py, probes.py, memory.py measure this machine;
gradwatch.py and master.py watch gradients and keep pure-bf16 weights. Nothing here imports gradio.
"""
