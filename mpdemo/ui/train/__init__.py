"""The Train tab: layout.py (components), wiring.py (events), handlers.py (Train, Stop), inputs.py
(controls -> RunConfig grid), status.py, frames.py, plots.py and colours.py (what the page
shows), session*.py (one visitor's state, store, table, lifetime), classroom.py, recorded.py,
lessons.py; tab.py names the tab's public functions.
"""
