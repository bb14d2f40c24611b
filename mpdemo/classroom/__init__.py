"""A class on one server: shared comparisons, their line and the teachers' boards."""
