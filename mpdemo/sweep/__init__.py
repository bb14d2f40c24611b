"""The size sweep: where mixed precision pays on this machine (model size x batch size).

sizes and spec (the grid and the plan's records, torch-free) -> plan (sized models, the grid
checked on the device) -> run (each point's precisions timed interleaved) -> events -> notes.
"""
