"""Quantile functions the engine computes itself, so a run does not import scipy for them (issue 34)."""
