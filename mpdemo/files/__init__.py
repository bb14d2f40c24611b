"""What mpdemo writes and reads: the runs JSON (recorded.py reads it back, checks.py is its field
checker, machines.py its machine tags), the summary type and CSV (summary.py), whole-or-nothing
writes (atomic.py).
"""
