"""The three backends, siblings listed in mpdemo/registry.py. Each `train_loop` is the listing the
Code tab shows: its keyword-only parameters are `settings()`'s values; INPUTS maps the others to
prepare()'s result."""
