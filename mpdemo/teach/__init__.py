"""What the teaching tabs and lessons compute; torch is imported only inside functions."""
