"""The Train tab: layout.py (components), wiring.py (events), handlers.py (Train, Stop), inputs.py
(controls -> RunConfig grid); the rest is what the page shows and one visitor's session."""
