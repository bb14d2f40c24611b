"""A class on one server: shared comparisons (comparison.py: one run and its record; viewer.py:
each visitor following it), the line (line.py), the teacher's boards (boards.py), what makes two
comparisons the same (keys.py), the caps one visitor cannot exceed (caps.py); broadcast.py names
them all. torch-free.
"""
