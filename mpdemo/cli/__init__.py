"""`python -m mpdemo run | code | underflow | sweep | lesson`: the same engine, headless. main.py builds
the run command's flags from RunConfig's fields; sweep.py and lesson.py add their commands;
signals.py keeps what was measured on SIGINT/SIGTERM.
"""
