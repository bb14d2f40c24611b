"""Runs of a comparison, taking turns step by step: their own steps are the interleaved timing."""
