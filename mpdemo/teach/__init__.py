"""What the teaching tabs and lessons compute: number formats and rounding (formats.py, rounding.py),
underflow of real gradients (underflow.py, with the counts and shares in magnitudes.py), fp32
accumulation (accumulate.py), fp8 scaling recipes (fp8_scaling.py), the code on screen (listing.py,
from loop_source.py and compared with the course's text in course.py), published figures
(published.py), the course's lessons (lessons.py).
"""
