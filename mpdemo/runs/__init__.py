"""Runs of a comparison, taking turns step by step so their own steps are the interleaved
measurement; torch-free until a run starts."""
