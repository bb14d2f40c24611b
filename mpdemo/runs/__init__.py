"""Runs of a comparison: runner.py (the one runner interface, a background thread, the event queue),
together.py and turns.py (the runs take turns step by step, so their own steps are the interleaved
measurement), timing.py (the 95 % interval and the one verdict rule), fold.py (events -> run
records, once), calibration.py (what a calibrated step holds), estimate.py (the time left), notes.py (the sentences). torch-free until a run starts.
"""
