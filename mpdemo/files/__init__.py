"""What mpdemo writes and reads: the runs file (recorded.py, checked by checks.py), summaries."""
