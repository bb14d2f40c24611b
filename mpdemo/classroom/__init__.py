"""A class on one server: comparison.py and viewer.py (a shared run and its followers), line.py,
boards.py, keys.py (what makes two comparisons the same), caps.py; broadcast.py holds the hub."""
