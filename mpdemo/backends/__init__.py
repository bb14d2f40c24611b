"""The three backends: siblings with the same skeleton (begin → step → end, then eval), listed in
mpdemo/registry.py. Each module's `train_loop` is the listing the Code tab shows and `python -m
mpdemo code` writes out: its keyword-only parameters are this run's settings (from `settings()`),
filled in as values there; INPUTS maps its other parameters to prepare()'s result.
"""
