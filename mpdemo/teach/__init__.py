"""What the teaching tabs and lessons compute: number formats and rounding, underflow of real
gradients, fp32 accumulation, fp8 scaling recipes, the code on screen, published figures, lessons.
"""
