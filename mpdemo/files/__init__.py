"""What mpdemo writes and reads: the runs file, JSON and its steps CSV (recorded.py: the one
writer and reader; checks.py is its field checker, machines.py its machine tags), the summary
type (summary.py), whole-or-nothing writes (atomic.py).
"""
