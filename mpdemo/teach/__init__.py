"""What the teaching tabs and lessons compute: number formats and rounding (formats.py, rounding.py),
underflow of real gradients (underflow.py), fp32 accumulation (accumulate.py), fp8 scaling recipes
(fp8_scaling.py), the code on screen (listing.py), published figures (published.py), the course's
lessons (lessons.py, master_weights.py).
"""
