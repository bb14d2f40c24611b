"""Runs of a comparison: runner.py (the runner interface and its thread), together.py and turns.py
(the runs take turns step by step: their own steps are the interleaved measurement), timing.py (the
interval and the one verdict rule), fold.py and state.py (events -> records, once), estimate.py
(the time left), notes.py (the sentences). torch-free until a run starts.
"""
